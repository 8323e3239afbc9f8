import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  AdminFailures,
  AdminFailuresRetry,
  EmbeddingComputed,
  ItemsGet,
  JobsFailed,
  JobsRetry,
} from '@memex/contracts';
import { Bus, lastEventOf } from '@memex/bus';
import { BlobStore } from '@memex/blobs';
import { waitUntil } from '@memex/testing';
import { logWithoutItsText } from './lost-text.js';
import { startStack, type TestStack } from './stack.js';

type Health = {
  status: string;
  failures: number;
  services: Array<{ service: string; projector?: { failures: number }; problems?: string[] }>;
};

/** What /healthz answers, and what /metrics answers the owner. */
async function healthOf(stack: TestStack): Promise<Health> {
  return (await (await fetch(`${stack.url}/healthz`)).json()) as Health;
}
async function metricsOf(stack: TestStack): Promise<string> {
  const response = await fetch(`${stack.url}/metrics`, { headers: { authorization: `Bearer ${stack.ownerToken}` } });
  return response.text();
}

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

  const health = () => healthOf(stack);

  test('healthz is degraded, /metrics and memex.admin.failures name the event; a retry after the fix applies it', async () => {
    assert.equal((await health()).status, 'ok');
    const { id, seq, text } = await logWithoutItsText(bus, 'restored later');
    await waitUntil(async () => (await health()).failures === 1, 'the failure in healthz', { timeoutMs: 20_000 });
    const body = await health();
    assert.equal(body.status, 'degraded');
    assert.equal(body.services.find((s) => s.service === 'ingest')?.projector?.failures, 1);
    const metrics = await metricsOf(stack);
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

/**
 * The same for the pipelines: a worker that cannot read an item's text (its blob is not there)
 * no longer finishes the job with nothing to show. The job is retried, then set aside where the
 * owner looks (healthz, /metrics, memex.jobs.failed), and runs again after the fix.
 */
describe('a pipeline job that fails every retry is never silent', () => {
  let stack: TestStack;
  let bus: Bus;
  before(async () => {
    stack = await startStack(['pipelines']);
    bus = await Bus.connect(stack.config.natsUrl, 'failed-jobs-test');
  });
  after(async () => {
    await bus.close();
    await stack.stop();
  });

  test('set aside after five tries: healthz degraded, /metrics and memex.jobs.failed say why; memex.jobs.retry after the fix embeds the item', async () => {
    const { id, text } = await logWithoutItsText(bus, 'The lighthouse keeper logged the storm.');
    // Tries 2, 4, 8 and 16 s apart (the worker's backoff), then set aside.
    await waitUntil(
      async () => (await stack.owner.call(JobsFailed, {})).total === 2,
      'text and tier-0 jobs set aside',
      {
        timeoutMs: 90_000,
      },
    );
    const { jobs } = await stack.owner.call(JobsFailed, {});
    assert.deepEqual(jobs.map((j) => [j.task, j.item_id, j.attempts]).sort(), [
      ['structure', id, 5],
      ['text', id, 5],
    ]);
    for (const job of jobs) assert.match(job.reason, /blob [0-9a-f]{64} is missing/);
    const body = await healthOf(stack);
    assert.equal(body.status, 'degraded');
    assert.match(
      body.services.find((s) => s.service === 'pipelines')?.problems?.join('\n') ?? '',
      /2 pipeline job\(s\) failed every retry/,
    );
    const metrics = await metricsOf(stack);
    assert.match(metrics, /memex_pipeline_failed_jobs\{task="text"\} 1/);
    assert.match(metrics, /memex_pipeline_failed_jobs\{task="structure"\} 1/);
    assert.match(metrics, /memex_service_problems\{service="pipelines"\} 1/);

    // The fix: the blob is back. Run again, the item gets its passages and vectors; all green.
    await new BlobStore(stack.config.blobsDir).put(text);
    const { retried } = await stack.owner.call(JobsRetry, {});
    assert.equal(retried.length, 2);
    await waitUntil(async () => (await lastEventOf(bus, EmbeddingComputed, `item:${id}`)) !== undefined, 'its vectors');
    await waitUntil(async () => (await stack.owner.call(JobsFailed, {})).total === 0, 'none failed');
    assert.equal((await healthOf(stack)).status, 'ok');
    assert.match(await metricsOf(stack), /memex_service_problems\{service="pipelines"\} 0/);
  });
});
