import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { MemexError, NotePut, TokenCreated, noteMarkdownOf } from '@memex/contracts';
import { createTestEnv, type TestEnv } from '@memex/testing';
import { Bus } from './bus.js';
import { readLog } from './log-reader.js';
import { draftOf, EventPublisher, newId, type DraftOf } from './publisher.js';
import { aggregateFilter, EVENTS_STREAM } from './subjects.js';

let env: TestEnv;
let bus: Bus;
let publisher: EventPublisher;
before(async () => {
  env = await createTestEnv();
  bus = await Bus.connect(env.config.natsUrl, 'bus-test');
  await bus.ensureStreams();
  publisher = new EventPublisher(bus);
});
after(async () => {
  await bus.close();
  await env.stop();
});

function note(id = newId()): DraftOf<typeof NotePut> {
  return {
    subject: `item:${id}`,
    actor: { kind: 'user', id: 'owner' },
    data: { id, title: 't', body: 'b', markdown: noteMarkdownOf('b') },
  };
}

test('streams are created idempotently with the log configuration', async () => {
  await bus.ensureStreams();
  const info = await bus.jsm.streams.info(EVENTS_STREAM);
  assert.deepEqual(info.config.subjects, ['memex.evt.>']);
  assert.equal(info.config.max_msg_size, 1024 * 1024);
  assert.equal((await bus.jsm.streams.info('MEMEX_JOBS')).config.retention, 'workqueue');
});

test('publishing the same event twice stores it once', async () => {
  const draft = { ...note(), id: newId() };
  const first = await publisher.publish(NotePut, draft);
  const second = await publisher.publish(NotePut, draft);
  assert.equal(second.duplicate, true);
  assert.equal(second.seq, first.seq);
  const stored = [];
  for await (const logged of readLog(bus, { filter: aggregateFilter(draft.subject), untilCaughtUp: true }))
    stored.push(logged);
  assert.equal(stored.length, 1);
  assert.equal(stored[0]!.event.id, draft.id);
});

test('a malformed event is rejected before it reaches the log, naming the problem', async () => {
  const before = await bus.lastSeq();
  assert.throws(
    () => publisher.build(NotePut, { ...note(), data: { id: 'x', body: 1 } as never }),
    (error: MemexError) => {
      assert.equal(error.code, 'invalid_params');
      assert.match(error.message, /^invalid note\.put v2 event: .*data\.id: Expected string to match/);
      assert.match(error.message, /data\.title: is required/);
      assert.match(error.message, /data\.body: Expected string, got 1/);
      return true;
    },
  );
  await assert.rejects(
    publisher.publishAll([draftOf(NotePut, note()), draftOf(NotePut, { ...note(), subject: 'no subject' })]),
    /invalid event envelope: subject: Expected string to match/,
  );
  assert.equal(await bus.lastSeq(), before, 'nothing of the invalid batch was published');
});

test('expectFirst makes the log itself refuse a second claim on an aggregate', async () => {
  const id = newId();
  await publisher.publish(NotePut, { ...note(id), expectFirst: true });
  await assert.rejects(
    publisher.publish(NotePut, { ...note(id), expectFirst: true }),
    (error: MemexError) => error.code === 'conflict',
  );
});

test('expectLastSeq refuses an update when another came after the one it read', async () => {
  const id = newId();
  const { seq } = await publisher.publish(NotePut, note(id));
  await publisher.publish(NotePut, { ...note(id), expectLastSeq: seq });
  await assert.rejects(
    publisher.publish(NotePut, { ...note(id), expectLastSeq: seq }),
    (error: MemexError) => error.code === 'conflict' && /after \d+/.test(error.message),
  );
});

test("a service's publisher refuses an event another service owns, before anything is sent", async () => {
  const ingest = new EventPublisher(bus, 'ingest');
  const before = await bus.lastSeq();
  const token = {
    subject: `token:${newId()}`,
    actor: { kind: 'user' as const, id: 'owner' },
    data: { id: newId(), name: 'n', labels: [], sha256: '0'.repeat(64) },
  };
  await assert.rejects(ingest.publish(TokenCreated, token), (error: MemexError) => {
    assert.equal(error.code, 'forbidden');
    assert.equal(error.message, 'the ingest service may not publish token.created: gateway owns it');
    return true;
  });
  await assert.rejects(ingest.publishAll([draftOf(NotePut, note()), draftOf(TokenCreated, token)]), /gateway owns it/);
  assert.equal(await bus.lastSeq(), before);
  assert.equal((await ingest.publish(NotePut, note())).event.type, 'note.put');
});

test('publishAll keeps order and answers each sequence', async () => {
  const drafts = Array.from({ length: 50 }, () => draftOf(NotePut, note()));
  const published = await publisher.publishAll(drafts);
  const seqs = published.map((p) => p.seq);
  assert.deepEqual(
    seqs,
    [...seqs].sort((a, b) => a - b),
  );
  assert.equal(new Set(seqs).size, 50);
});

test('a read to the end ends when the events after it are erased while it reads', async () => {
  const published = await publisher.publishAll(Array.from({ length: 1500 }, () => draftOf(NotePut, note())));
  const first = published[0]!.seq;
  const tail = published.slice(1000).map((p) => p.seq);
  let read = 0;
  for await (const { seq } of readLog(bus, { fromSeq: first, untilCaughtUp: true })) {
    if (read++ === 0) {
      // What the reader has fetched so far was delivered saying more events follow; erase those.
      for (const erased of tail) await bus.jsm.streams.deleteMessage(EVENTS_STREAM, erased, false);
    }
    assert.ok(seq >= first);
  }
  assert.ok(read >= 1000 && read <= 1500, `read ${read}`);
});
