import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { AdminFailures, AdminFailuresRetry, ItemIngested, ItemsGet } from '@memex/contracts';
import { Bus, EventPublisher, newId } from '@memex/bus';
import { BlobStore } from '@memex/blobs';
import { itemMeta, waitUntil } from '@memex/testing';
import { startStack, type TestStack } from './stack.js';

/**
 * Issue 11: an item was answered `created`, failed in a projector, and healthz and `memex status`
 * stayed green. Here a projector fails for real (the item's text blob is not there when its event
 * is applied: a disk restored without it), and the failure shows everywhere until a retry after
 * the fix applies it.
 */
describe('a projector failure is never silent', () => {
  let stack: TestStack;
  let bus: Bus;
  before(async () => {
    stack = await startStack(['ingest']);
    bus = await Bus.connect(stack.config.natsUrl, 'failures-test');
  });
  after(async () => {
    await bus.close();
    await stack.stop();
  });

  const health = async () =>
    (await (await fetch(`${stack.url}/healthz`)).json()) as {
      status: string;
      failures: number;
      services: Array<{ service: string; projector?: { failures: number } }>;
    };

  test('healthz is degraded, /metrics and memex.admin.failures name the event; a retry after the fix applies it', async () => {
    assert.equal((await health()).status, 'ok');
    const text = Buffer.from('restored later');
    const textSha = createHash('sha256').update(text).digest('hex');
    const id = newId();
    const { seq } = await new EventPublisher(bus, 'ingest').publish(ItemIngested, {
      subject: `item:${id}`,
      actor: { kind: 'import', id: 'test' },
      kind: 'document',
      spam: false,
      labels: [],
      data: {
        id,
        ...itemMeta('document', {}, text.length),
        revision: 1,
        title: 'Lost text',
        source: { kind: 'import:folder', id: 'x' },
        external_id: 'lost.txt',
        identity: `sha256:${textSha}`,
        origin: 'imported',
        content_type: 'text/plain',
        content_sha256: textSha,
        size: text.length,
        text_sha256: textSha,
        text_length: text.length,
      },
    });
    await waitUntil(async () => (await health()).failures === 1, 'the failure in healthz', { timeoutMs: 20_000 });
    const body = await health();
    assert.equal(body.status, 'degraded');
    assert.equal(body.services.find((s) => s.service === 'ingest')?.projector?.failures, 1);
    const metrics = await (
      await fetch(`${stack.url}/metrics`, { headers: { authorization: `Bearer ${stack.ownerToken}` } })
    ).text();
    assert.match(metrics, /memex_projector_failures\{projector="ingest"\} 1/);

    const { failures } = await stack.owner.call(AdminFailures, {});
    assert.equal(failures.length, 1);
    assert.deepEqual(
      [failures[0]!.projector, failures[0]!.seq, failures[0]!.event_type, failures[0]!.subject],
      ['ingest', seq, 'item.ingested', `item:${id}`],
    );
    assert.match(failures[0]!.error, /ENOENT|no such file/);

    // The fix: the blob is back. The retry applies the event; everything is green again.
    await new BlobStore(stack.config.blobsDir).put(text);
    const { results } = await stack.owner.call(AdminFailuresRetry, { projector: 'ingest' });
    assert.deepEqual(results[0]!.fixed, [seq]);
    assert.equal((await stack.owner.call(ItemsGet, { id })).text, 'restored later');
    assert.deepEqual(await health().then((h) => [h.status, h.failures]), ['ok', 0]);
    assert.deepEqual((await stack.owner.call(AdminFailures, {})).failures, []);
  });
});
