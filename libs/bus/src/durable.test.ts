import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { AckPolicy, DeliverPolicy, type JsMsg } from '@nats-io/jetstream';
import { noteMarkdownOf, NotePut } from '@memex/contracts';
import { createTestEnv, waitUntil, type TestEnv } from '@memex/testing';
import { Bus } from './bus.js';
import { consumeBatches } from './durable.js';
import { eraseEvents } from './erase.js';
import { EventPublisher, newId } from './publisher.js';
import { aggregateFilter, EVENTS_STREAM } from './subjects.js';

let env: TestEnv;
let bus: Bus;
let publisher: EventPublisher;
before(async () => {
  env = await createTestEnv();
  bus = await Bus.connect(env.config.natsUrl, 'durable-test');
  await bus.ensureStreams();
  publisher = new EventPublisher(bus);
});
after(async () => {
  await bus.close();
  await env.stop();
});

const publishNote = (id: string) =>
  publisher.publish(NotePut, {
    subject: `item:${id}`,
    actor: { kind: 'user', id: 'owner' },
    data: { id, title: 't', body: 'b', markdown: noteMarkdownOf('b') },
  });

/** A durable consumer of every event from `fromSeq`, read by `consumeBatches` ten at a time. */
async function consumeFrom(
  fromSeq: number,
  name: string,
  maxAckPending: number,
  apply: (batch: JsMsg[]) => Promise<void>,
) {
  await bus.jsm.consumers.add(EVENTS_STREAM, {
    durable_name: name,
    ack_policy: AckPolicy.All,
    deliver_policy: DeliverPolicy.StartSequence,
    opt_start_seq: fromSeq,
    max_ack_pending: maxAckPending,
  });
  const messages = await (await bus.js.consumers.get(EVENTS_STREAM, name)).consume({ max_messages: 100 });
  const loop = consumeBatches(messages, 10, apply);
  return async () => {
    messages.stop();
    await loop;
  };
}

test('a batch the server says more events follow is applied even when they do not come', async () => {
  const published = [];
  for (let i = 0; i < 3; i++) published.push((await publishNote(newId())).seq);
  // The first comes with 2 more counted, which the server holds back until it is acknowledged.
  const applied: number[] = [];
  const stop = await consumeFrom(published[0]!, 'held_back', 1, async (batch) => {
    applied.push(...batch.map((msg) => msg.seq));
  });
  try {
    await waitUntil(async () => applied.length === 3, 'every event applied', { timeoutMs: 10_000 });
    assert.deepEqual(applied, published);
  } finally {
    await stop();
  }
});

test('applied batches are acknowledged together, and the last once no more come', async () => {
  const published: number[] = [];
  for (let i = 0; i < 300; i++) published.push((await publishNote(newId())).seq);
  let applied = 0;
  let acks = 0;
  const stop = await consumeFrom(published[0]!, 'acks_together', 20_000, async (batch) => {
    applied += batch.length;
    const last = batch[batch.length - 1]!;
    const ack = last.ack.bind(last);
    last.ack = () => (acks++, ack());
  });
  try {
    // Ten at a time: thirty batches.
    await waitUntil(async () => applied === 300, 'every event applied', { timeoutMs: 10_000 });
    await waitUntil(
      async () =>
        (await bus.jsm.consumers.info(EVENTS_STREAM, 'acks_together')).ack_floor.stream_seq === published.at(-1),
      'the last event acknowledged',
      { timeoutMs: 5_000 },
    );
    assert.ok(acks >= 1 && acks < 10, `${acks} acknowledgements for 30 batches`);
  } finally {
    await stop();
  }
});

test('a delivery that never reached the reader stops it before anything after the gap is applied or acknowledged', async () => {
  const published: number[] = [];
  for (let i = 0; i < 3; i++) published.push((await publishNote(newId())).seq);
  await bus.jsm.consumers.add(EVENTS_STREAM, {
    durable_name: 'lost_delivery',
    ack_policy: AckPolicy.All,
    deliver_policy: DeliverPolicy.StartSequence,
    opt_start_seq: published[0]!,
  });
  const consumer = await bus.js.consumers.get(EVENTS_STREAM, 'lost_delivery');
  // Delivered elsewhere and never acknowledged: what a connection that died takes with it.
  assert.equal((await consumer.next())?.seq, published[0]);
  const applied: number[] = [];
  const reading = consumeBatches(await consumer.consume({ max_messages: 100 }), 10, async (batch) => {
    applied.push(...batch.map((msg) => msg.seq));
  });
  await assert.rejects(reading, (error: Error) => {
    assert.equal(error.name, 'DeliveryGap');
    assert.match(error.message, /lost_delivery: delivery 2 came where 1 was due/);
    return true;
  });
  assert.deepEqual(applied, []);
  const info = await bus.jsm.consumers.info(EVENTS_STREAM, 'lost_delivery');
  assert.ok(info.ack_floor.stream_seq < published[0]!, 'nothing acknowledged past the lost delivery');
});

test('a consumer deleted while a batch is applied stops the reader with that error, not an unhandled rejection', async () => {
  const seq = (await publishNote(newId())).seq;
  await bus.jsm.consumers.add(EVENTS_STREAM, {
    durable_name: 'deleted_while_applying',
    ack_policy: AckPolicy.All,
    deliver_policy: DeliverPolicy.StartSequence,
    opt_start_seq: seq,
  });
  const consumer = await bus.js.consumers.get(EVENTS_STREAM, 'deleted_while_applying');
  // As a projector reads: a deleted consumer stops the loop rather than being retried unseen.
  const messages = await consumer.consume({ max_messages: 100, abort_on_missing_resource: true });
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);
  process.on('unhandledRejection', onUnhandled);
  try {
    let applying!: () => void;
    let release!: () => void;
    const entered = new Promise<void>((resolve) => (applying = resolve));
    const released = new Promise<void>((resolve) => (release = resolve));
    const reading = consumeBatches(messages, 10, async () => {
      applying();
      await released;
    });
    await entered;
    // The reader has asked for the next message; the server answers that one with a 409 while
    // the batch is still being applied.
    await bus.jsm.consumers.delete(EVENTS_STREAM, 'deleted_while_applying');
    await new Promise((resolve) => setTimeout(resolve, 500));
    release();
    await assert.rejects(reading, /consumer deleted/);
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(unhandled, [], 'the failure waited for the reader to ask');
  } finally {
    process.off('unhandledRejection', onUnhandled);
  }
});

test("erasing one item's events while a durable consumer reads never makes it skip another's", async () => {
  const erased = newId();
  const from = (await bus.lastSeq()) + 1;
  const kept: number[] = [];
  for (let i = 0; i < 200; i++) {
    if (i % 4 === 0) await publishNote(erased);
    kept.push((await publishNote(newId())).seq);
  }
  const seen = new Set<number>();
  const stop = await consumeFrom(from, 'slow_reader', 20_000, async (batch) => {
    for (const msg of batch) seen.add(msg.seq);
    await new Promise((resolve) => setTimeout(resolve, 20));
  });
  try {
    await waitUntil(async () => seen.size > 0, 'the first batch');
    assert.equal(await eraseEvents(bus, aggregateFilter(`item:${erased}`)), 50);
    await waitUntil(async () => kept.every((seq) => seen.has(seq)), 'every event of the other items', {
      timeoutMs: 20_000,
    });
  } finally {
    await stop();
  }
});

test("two erasers of the same item's events both finish, and every event is gone once", async () => {
  const erased = newId();
  for (let i = 0; i < 20; i++) await publishNote(erased);
  const counts = await Promise.all([1, 2, 3].map(() => eraseEvents(bus, aggregateFilter(`item:${erased}`))));
  assert.ok(counts.every((n) => n <= 20) && counts.some((n) => n > 0), `erased ${counts.join(', ')}`);
  assert.equal(await eraseEvents(bus, aggregateFilter(`item:${erased}`)), 0, 'nothing left to erase');
});
