import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Ingest, ItemsContent, ItemsGet, MemexError, OWNER_SCOPE, Types, type ParamsOf } from '@memex/contracts';
import { readLog } from '@memex/bus';
import { message } from '../domain/handlers/testing/build.js';
import { b64, startIngest, type IngestHarness } from '../testing/service.js';
import { IngestService } from './ingest.service.js';

type Item = ParamsOf<typeof Ingest>['items'][number];

function mail(n: number, extra: Array<[string, string]> = []): Buffer {
  return message(
    [
      ['From', `Ann Example <ann@example.com>`],
      ['To', 'bob@example.org'],
      ['Subject', `Message ${n}`],
      ['Date', new Date(Date.UTC(2009, 0, 1 + (n % 28), 12)).toUTCString()],
      ['Message-ID', `<m${n}@example.com>`],
      ...extra,
    ],
    `Body of message ${n}.\r\n`,
  );
}

function mailItem(n: number, source = 'archive', externalId = `box#${n}`): Item {
  return { type: 'message/rfc822', data: b64(mail(n)), source: { kind: 'mbox', id: source }, external_id: externalId };
}

describe('memex.ingest (service over NATS)', () => {
  let h: IngestHarness;
  before(async () => {
    h = await startIngest();
  });
  after(async () => h.stop());

  test('memex.types lists mail and documents with their limits and strict attribute schemas', async () => {
    const types = await h.call(Types, {});
    const mailHandler = types.handlers.find((t) => t.name === 'mail')!;
    assert.deepEqual(mailHandler.types, ['message/rfc822', 'application/vnd.ms-outlook', 'message/x-emlx']);
    assert.equal(mailHandler.limit_bytes, 25 * 1024 * 1024);
    assert.deepEqual(mailHandler.produces, ['email', 'attachment']);
    assert.equal(mailHandler.updatable, false);
    assert.equal(mailHandler.attributes['additionalProperties'], false);
    assert.ok(types.handlers.find((t) => t.name === 'document')!.types.includes('application/pdf'));
    assert.equal(types.request_limit_bytes, 40 * 1024 * 1024);
  });

  test('a message is created; sent again it is a duplicate; the same Message-ID from another source is the same item', async () => {
    const first = await h.call(Ingest, { items: [mailItem(1)] });
    assert.equal(first.results[0]!.status, 'created');
    const id = first.results[0]!.id!;
    const again = await h.call(Ingest, { items: [mailItem(1)] });
    assert.deepEqual(again.results, [{ status: 'duplicate', id }]);
    const elsewhere = await h.call(Ingest, { items: [mailItem(1, 'other-archive', 'x/1')] });
    assert.deepEqual(elsewhere.results, [{ status: 'duplicate', id }]);
    // A message never changes: new bytes under its source + external_id are still that message.
    const changed = await h.call(Ingest, { items: [{ ...mailItem(2), external_id: 'box#1' }] });
    assert.deepEqual(changed.results, [{ status: 'duplicate', id }]);

    const item = await h.call(ItemsGet, { id, min_seq: first.seq });
    assert.equal(item.kind, 'email');
    assert.equal(item.title, 'Message 1');
    assert.match(item.text, /Body of message 1/);
    assert.deepEqual(item.source, { kind: 'import:mbox', id: 'archive' });
    assert.equal(item.origin, 'imported');
    assert.equal(item.occurred_at, '2009-01-02T12:00:00.000Z');
    const content = await h.call(ItemsContent, { id });
    assert.deepEqual(Buffer.from(content.data, 'base64'), mail(1));
    assert.equal(content.next_offset, null);
    const ranged = await h.call(ItemsContent, { id, offset: 10, length: 20 });
    assert.deepEqual(Buffer.from(ranged.data, 'base64'), mail(1).subarray(10, 30));
    assert.equal(ranged.next_offset, 30);
  });

  test('documents: the same content is a duplicate from anywhere; new content under the same external_id is an update', async () => {
    const doc = (text: string, externalId: string, source = 'notes'): Item => ({
      type: 'text/markdown',
      text,
      source: { kind: 'folder', id: source },
      external_id: externalId,
      attributes: { filename: 'plan.md' },
    });
    const created = await h.call(Ingest, { items: [doc('# Plan\nFirst draft.', 'plan.md')] });
    const id = created.results[0]!.id!;
    assert.equal(created.results[0]!.status, 'created');
    assert.deepEqual((await h.call(Ingest, { items: [doc('# Plan\nFirst draft.', 'copy.md', 'elsewhere')] })).results, [
      { status: 'duplicate', id },
    ]);
    const updated = await h.call(Ingest, { items: [doc('# Plan\nSecond draft.', 'plan.md')] });
    assert.deepEqual(updated.results, [{ status: 'updated', id }]);
    const item = await h.call(ItemsGet, { id, min_seq: updated.seq });
    assert.equal(item.revision, 2);
    assert.match(item.text, /Second draft/);
    // Sending the update again changes nothing.
    assert.deepEqual((await h.call(Ingest, { items: [doc('# Plan\nSecond draft.', 'plan.md')] })).results, [
      { status: 'duplicate', id },
    ]);
  });

  test('the same document under its external_id with other labels (a photo in another album, a note relabelled) is an update carrying them', async () => {
    const note = (labels: string[], source = 'keep'): Item => ({
      type: 'text/markdown',
      text: '# Groceries\nMilk and flour.',
      source: { kind: 'takeout', id: source },
      external_id: 'Keep/Groceries.html',
      labels,
    });
    const created = await h.call(Ingest, { items: [note(['keep:Home'])] });
    const id = created.results[0]!.id!;
    // A newer export comes later: ingest's read model knows the note by its source by then.
    await h.call(ItemsGet, { id, min_seq: created.seq });
    const relabelled = await h.call(Ingest, { items: [note(['keep:Shopping', 'keep:Home'])] });
    assert.deepEqual(relabelled.results, [{ status: 'updated', id }]);
    const item = await h.call(ItemsGet, { id, min_seq: relabelled.seq });
    assert.deepEqual([item.revision, [...item.labels].sort()], [2, ['keep:Home', 'keep:Shopping']]);
    // The same labels in another order: nothing changed.
    assert.deepEqual((await h.call(Ingest, { items: [note(['keep:Home', 'keep:Shopping'])] })).results, [
      { status: 'duplicate', id },
    ]);
    // The same content from another source is that item's duplicate, and leaves its labels alone.
    assert.deepEqual((await h.call(Ingest, { items: [note(['other'], 'elsewhere')] })).results, [
      { status: 'duplicate', id },
    ]);
    assert.deepEqual([...(await h.call(ItemsGet, { id })).labels].sort(), ['keep:Home', 'keep:Shopping']);
  });

  test('a batch sent again under its batch id is answered as its first send was, not with duplicates', async () => {
    const todo = (text: string): Item => ({
      type: 'text/markdown',
      text,
      source: { kind: 'folder', id: 'resent' },
      external_id: 'todo.md',
      attributes: { filename: 'todo.md' },
    });
    // A message, its copy from another folder (a duplicate of it in this very batch), a document.
    const items = [mailItem(400, 'resent'), mailItem(400, 'resent', 'copy#400'), todo('# Todo\nBuy milk.')];
    const first = await h.call(Ingest, { items, batch: 'send-1' });
    const [message, , doc] = first.results.map((result) => result.id!);
    assert.deepEqual(
      first.results.map((result) => result.status),
      ['created', 'duplicate', 'created'],
    );
    // The answer was lost (a timeout): the sender sends the batch again, under the same id.
    assert.deepEqual((await h.call(Ingest, { items, batch: 'send-1' })).results, first.results);
    // Another batch, or none, with the same items: duplicates.
    for (const batch of ['send-2', undefined]) {
      const again = await h.call(Ingest, { items, ...(batch ? { batch } : {}) });
      assert.deepEqual(
        again.results.map((result) => [result.status, result.id]),
        [
          ['duplicate', message],
          ['duplicate', message],
          ['duplicate', doc],
        ],
      );
    }
    // An update sent again is that update.
    const update = [todo('# Todo\nBuy milk and eggs.')];
    const updated = await h.call(Ingest, { items: update, batch: 'send-3' });
    assert.deepEqual(updated.results, [{ status: 'updated', id: doc }]);
    assert.deepEqual((await h.call(Ingest, { items: update, batch: 'send-3' })).results, updated.results);
    assert.deepEqual((await h.call(Ingest, { items: update })).results, [{ status: 'duplicate', id: doc }]);
    // Stored once, whatever was answered.
    let stored = 0;
    for await (const { event } of readLog(h.bus, { filter: 'memex.evt.item.ingested.>', untilCaughtUp: true }))
      if ((event.data as { id: string }).id === message) stored++;
    assert.equal(stored, 1);
  });

  test('items.content and a title made from a file name give a safe base name; items.content keeps the original', async () => {
    const original = '../../../../root/.ssh/authorized_keys\u0007';
    const created = await h.call(Ingest, {
      items: [
        {
          type: 'text/plain',
          text: 'ssh-ed25519 AAAA',
          source: { kind: 'folder', id: 'odd' },
          attributes: { filename: original },
        },
      ],
    });
    const id = created.results[0]!.id!;
    const item = await h.call(ItemsGet, { id, min_seq: created.seq });
    assert.equal(item.title, 'authorized_keys_', 'a title made from the file name is its safe base name');
    const content = await h.call(ItemsContent, { id });
    assert.equal(content.filename, 'authorized_keys_');
    assert.equal(content.original_filename, original);
  });

  test('the same message twice in one batch, and in concurrent batches from two sources, is stored once', async () => {
    const numbers = Array.from({ length: 40 }, (_, i) => 100 + i);
    const inOne = await h.call(Ingest, { items: [mailItem(100, 'a'), mailItem(100, 'a')] });
    assert.equal(inOne.results[0]!.status, 'created');
    assert.deepEqual(inOne.results[1], { status: 'duplicate', id: inOne.results[0]!.id });

    const [a, b, c] = await Promise.all([
      h.call(Ingest, { items: numbers.map((n) => mailItem(n, 'a')) }),
      h.call(Ingest, { items: numbers.map((n) => mailItem(n, 'b', `b/${n}`)) }),
      h.call(Ingest, { items: [...numbers].reverse().map((n) => mailItem(n, 'c', `c/${n}`)) }),
    ]);
    const ids = numbers.map((_, i) => a.results[i]!.id);
    assert.deepEqual(
      b.results.map((r) => r.id),
      ids,
    );
    assert.deepEqual(c.results.map((r) => r.id).reverse(), ids);
    const created = [...a.results, ...b.results, ...c.results].filter((r) => r.status === 'created').length;
    assert.equal(created, numbers.length - 1); // message 100 was created by the first call
    // The log holds exactly one item.ingested per message.
    const seen = new Map<string, number>();
    for await (const { event } of readLog(h.bus, { filter: 'memex.evt.item.ingested.>', untilCaughtUp: true })) {
      seen.set((event.data as { id: string }).id, (seen.get((event.data as { id: string }).id) ?? 0) + 1);
    }
    for (const id of ids) assert.equal(seen.get(id!), 1, `item ${id} was published ${seen.get(id!)} times`);
  });

  test('a request over 40 MB of item data is refused as a whole, naming the limit', async () => {
    const service = h.app.get(IngestService);
    const big = 'A'.repeat(Math.ceil((41 * 1024 * 1024 * 4) / 3));
    await assert.rejects(
      service.ingest(
        { items: [{ type: 'text/plain', data: big, source: { kind: 'folder' } }] },
        { scope: OWNER_SCOPE, caller: { kind: 'user', id: 'owner' } },
      ),
      (error: MemexError) => error.code === 'too_large' && /41 MB of item data.*at most 40 MB/.test(error.message),
    );
  });

  test('an item over its handler’s limit is rejected before parsing; the rest of its batch goes in', async () => {
    const service = h.app.get(IngestService);
    const huge = Buffer.alloc(25 * 1024 * 1024 + 1, 'a');
    const result = await service.ingest(
      { items: [{ type: 'message/rfc822', data: b64(huge), source: { kind: 'mbox' } }, mailItem(300)] },
      { scope: OWNER_SCOPE, caller: { kind: 'user', id: 'owner' } },
    );
    assert.equal(result.results[0]!.status, 'rejected');
    assert.match(result.results[0]!.reason!, /over the 25 MB limit for message\/rfc822/);
    assert.equal(result.results[1]!.status, 'created');
  });
});
