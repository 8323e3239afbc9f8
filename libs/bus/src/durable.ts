import type { ConsumerConfig, ConsumerMessages, JsMsg } from '@nats-io/jetstream';
import type { Bus } from './bus.js';
import { isNotFound } from './bus.js';
import { IDLE, orIdle } from './log-reader.js';
import { EVENTS_STREAM } from './subjects.js';

/** How long a batch waits for an event the client already holds (bounds a stall on a miscount). */
const BUFFERED_WAIT_MS = 5;
/**
 * How long a batch waits for an event the server said was still to come. Bounded: that count is
 * taken at delivery, and events erased since (a deletion) never come, so an unbounded wait would
 * hold the batch, unapplied and unacknowledged, until the next event is written.
 */
const SERVER_PENDING_WAIT_MS = 50;

/**
 * Creates a durable consumer on the events stream unless it exists (its position is kept by
 * JetStream, so a restart resumes where it stopped). Safe when replicas race to create it.
 */
export async function ensureDurable(
  bus: Bus,
  config: Partial<ConsumerConfig> & { durable_name: string },
): Promise<void> {
  try {
    await bus.jsm.consumers.info(EVENTS_STREAM, config.durable_name);
  } catch (error) {
    if (!isNotFound(error)) throw error;
    await bus.jsm.consumers.add(EVENTS_STREAM, config).catch((addError: unknown) => {
      if (!/already (exists|in use)/i.test(String(addError))) throw addError;
    });
  }
}

/**
 * A durable consumer's messages in batches, in order: a batch is what the server still has
 * pending plus what the client already holds, up to `maxBatch`; `apply` takes it, then the last
 * message is acknowledged (the consumer's ack policy is `all`), so a crash redoes at most a
 * batch. Resolves when the messages stop; rejects when `apply` or the connection fails.
 */
export async function consumeBatches(
  messages: ConsumerMessages,
  maxBatch: number,
  apply: (batch: JsMsg[]) => Promise<void>,
): Promise<void> {
  const iterator = messages[Symbol.asyncIterator]();
  let batch: JsMsg[] = [];
  let next = iterator.next();
  for (;;) {
    // Events that came while the last batch was applied wait in the client's buffer, or are on
    // their way: take them into this batch (a live import would otherwise commit one message at
    // a time), but never wait long with a batch in hand.
    const result =
      batch.length === 0
        ? await next
        : await orIdle(next, messages.getPending() > 0 ? BUFFERED_WAIT_MS : SERVER_PENDING_WAIT_MS);
    if (result !== IDLE) {
      if (result.done) return;
      batch.push(result.value);
      next = iterator.next();
      if ((result.value.info.pending > 0 || messages.getPending() > 0) && batch.length < maxBatch) continue;
    }
    const last = batch[batch.length - 1]!;
    await apply(batch);
    last.ack();
    batch = [];
  }
}
