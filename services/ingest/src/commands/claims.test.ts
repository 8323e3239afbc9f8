import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { IdentityClaimed, Ingest, ItemsDelete, type ParamsOf } from '@memex/contracts';
import {
  CLAIM_SUBJECT_ROOT,
  CLAIMS_STREAM,
  decodeJson,
  EventPublisher,
  newId,
  readLog,
  typeFilter,
  type Bus,
} from '@memex/bus';
import { startService } from '@memex/runtime';
import { waitUntil } from '@memex/testing';
import { message } from '../domain/handlers/testing/build.js';
import { IngestModule } from '../ingest.module.js';
import { b64, startIngest, type IngestHarness } from '../testing/service.js';
import { IdentityClaims } from './claims.js';

type Item = ParamsOf<typeof Ingest>['items'][number];

function mailItem(n: number): Item {
  const raw = message(
    [
      ['From', 'Ann Example <ann@example.com>'],
      ['To', 'bob@example.org'],
      ['Subject', `Claimed ${n}`],
      ['Message-ID', `<claimed-${n}@example.com>`],
    ],
    `Body of message ${n}.\r\n`,
  );
  return { type: 'message/rfc822', data: b64(raw), source: { kind: 'mbox', id: 'claims' }, external_id: `box#${n}` };
}

interface StoredClaim {
  hash: string;
  seq: number;
  item_id: string;
  key: 'source' | 'content';
}

/** The claims on MEMEX_CLAIMS held by `itemId`. */
async function claimsOf(bus: Bus, itemId: string): Promise<StoredClaim[]> {
  const info = await bus.jsm.streams.info(CLAIMS_STREAM, { subjects_filter: `${CLAIM_SUBJECT_ROOT}.>` });
  const found: StoredClaim[] = [];
  for (const subject of Object.keys(info.state.subjects ?? {})) {
    const stored = (await bus.jsm.streams.getMessage(CLAIMS_STREAM, { last_by_subj: subject }))!;
    const record = decodeJson<{ item_id: string; key: 'source' | 'content' }>(stored.data);
    if (record.item_id === itemId)
      found.push({ hash: subject.slice(CLAIM_SUBJECT_ROOT.length + 1), seq: stored.seq, ...record });
  }
  return found;
}

/** The hashes of the `identity.claimed` events on the log held by `itemId`. */
async function claimsOnLog(bus: Bus, itemId: string): Promise<string[]> {
  const hashes: string[] = [];
  for await (const { event } of readLog(bus, { filter: typeFilter(IdentityClaimed.type), untilCaughtUp: true }))
    if ((event.data as { item_id: string }).item_id === itemId) hashes.push(event.subject.slice('identity:'.length));
  return hashes;
}

describe('identity claims', () => {
  let h: IngestHarness;
  before(async () => {
    h = await startIngest();
  });
  after(async () => h.stop());

  test('an import claims its identities on their own stream, not the log; a deletion releases them', async () => {
    const first = await h.call(Ingest, { items: [mailItem(1)] });
    const id = first.results[0]!.id!;
    assert.deepEqual((await claimsOf(h.bus, id)).map((claim) => claim.key).sort(), ['content', 'source']);
    assert.deepEqual(await claimsOnLog(h.bus, id), []);
    assert.deepEqual((await h.call(Ingest, { items: [mailItem(1)] })).results, [{ status: 'duplicate', id }]);

    const deleted = await h.call(ItemsDelete, { id });
    assert.equal(deleted.erased_events, 3, 'its item.ingested and its two claims');
    assert.deepEqual(await claimsOf(h.bus, id), []);
    const again = await h.call(Ingest, { items: [mailItem(1)] });
    assert.equal(again.results[0]!.status, 'created', 'released, the message comes in again');
    assert.notEqual(again.results[0]!.id, id);
  });

  test('claims a version before kept on the log are copied at the next start, and still decide', async () => {
    const first = await h.call(Ingest, { items: [mailItem(2)] });
    const id = first.results[0]!.id!;
    // As that version left them: on the log, none on the claims stream, nothing copied yet.
    const legacy = new EventPublisher(h.bus);
    for (const claim of await claimsOf(h.bus, id)) {
      await legacy.publish(IdentityClaimed, {
        subject: `identity:${claim.hash}`,
        actor: { kind: 'system', id: 'ingest' },
        data: { item_id: id, key: claim.key },
        expectFirst: true,
      });
      await h.bus.jsm.streams.deleteMessage(CLAIMS_STREAM, claim.seq);
    }
    await h.bus.jsm.streams.purge(CLAIMS_STREAM, { filter: `${CLAIM_SUBJECT_ROOT}._copied_from_log` });
    const onLog = await claimsOnLog(h.bus, id);
    assert.equal(onLog.length, 2);

    // Until they are copied (in the background: minutes in a large archive), the log's count.
    const uncopied = new IdentityClaims(h.bus);
    for (const hash of onLog) {
      assert.equal((await uncopied.owner(hash))?.itemId, id);
      assert.equal(await uncopied.claim(hash, 'content', newId()), null, 'taken');
      assert.equal((await uncopied.claim(hash, 'content', id))?.itemId, id, 'its own');
    }
    assert.deepEqual(await claimsOf(h.bus, id), [], 'read, not copied');

    const restarted = await startService((config) => IngestModule.register(config), h.env.config);
    try {
      await waitUntil(async () => (await claimsOf(h.bus, id)).length === 2, 'the claims copied');
      assert.deepEqual((await claimsOf(h.bus, id)).map((claim) => claim.key).sort(), ['content', 'source']);
      assert.deepEqual((await h.call(Ingest, { items: [mailItem(2)] })).results, [{ status: 'duplicate', id }]);
      const deleted = await h.call(ItemsDelete, { id });
      assert.equal(deleted.erased_events, 5, 'its item.ingested, its two claims and the two on the log');
      assert.deepEqual(await claimsOnLog(h.bus, id), []);
      assert.deepEqual(await claimsOf(h.bus, id), []);
    } finally {
      await restarted.close();
    }
  });
});
