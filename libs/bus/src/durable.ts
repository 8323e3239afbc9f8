import type { ConsumerConfig, ConsumerMessages, JsMsg } from '@nats-io/jetstream';
import type { Bus } from './bus.js';
import { isNotFound } from './bus.js';
import { IDLE, nextOf, orIdle } from './log-reader.js';
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
 * Creates a durable consumer (on the events stream unless told another) unless it exists (its
 * position is kept by JetStream, so a restart resumes where it stopped), and brings an existing
 * one's acknowledgement deadline and pending limit to those asked for (an upgrade may change
 * them). Safe when replicas race to create it.
 */
export async function ensureDurable(
  bus: Bus,
  config: Partial<ConsumerConfig> & { durable_name: string },
  stream = EVENTS_STREAM,
): Promise<void> {
  let existing: ConsumerConfig;
  try {
    existing = (await bus.jsm.consumers.info(stream, config.durable_name)).config;
  } catch (error) {
    if (!isNotFound(error)) throw error;
    await bus.jsm.consumers.add(stream, config).catch((addError: unknown) => {
      if (!/already (exists|in use)/i.test(String(addError))) throw addError;
    });
    return;
  }
  const changed = (['ack_wait', 'max_ack_pending'] as const).filter(
    (field) => config[field] !== undefined && config[field] !== existing[field],
  );
  if (changed.length > 0)
    await bus.jsm.consumers.update(
      stream,
      config.durable_name,
      Object.fromEntries(changed.map((field) => [field, config[field]])),
    );
}

/**
 * Applied messages are acknowledged together: once this long has passed since the first of them,
 * or when no message comes for this long. A consumer that keeps up with an import applies batches
 * of a few events, and an ack each was a write to NATS, and work for it, per few events (a tenth
 * of a consumer's CPU in the services that skip most of the log).
 */
export const ACK_EVERY_MS = 200;
/** ...or once this many are applied: far below a consumer's `max_ack_pending`. */
export const ACK_EVERY_MESSAGES = 1000;

/**
 * A delivery of the consumer never reached this client: the server sent it into a connection that
 * then died (NATS drops a client that misses its pings). With ack policy `all`, acknowledging any
 * later message would acknowledge the lost one too, and it would never come again; the reader
 * stops before it, and makes its consumer again from the last event it applied.
 */
export class DeliveryGap extends Error {
  constructor(consumer: string, expected: number, delivered: number) {
    super(
      `consumer ${consumer}: delivery ${delivered} came where ${expected} was due (lost with a dropped connection); reading again from the last event applied`,
    );
    this.name = 'DeliveryGap';
  }
}

/**
 * A durable consumer's messages in batches, in order: a batch is what the server still has
 * pending plus what the client already holds, up to `maxBatch`; `apply` takes it. The last
 * message applied is acknowledged (the consumer's ack policy is `all`) every `ACK_EVERY_MS` or
 * `ACK_EVERY_MESSAGES`, so a crash redoes at most that (a projector skips what its checkpoint
 * has). Resolves when the messages stop; rejects when `apply` or the connection fails, and with
 * `DeliveryGap` (after applying what came before it) when a delivery is missing: `messages` must
 * read a consumer made for this reader, whose deliveries count from 1.
 */
export async function consumeBatches(
  messages: ConsumerMessages,
  maxBatch: number,
  apply: (batch: JsMsg[]) => Promise<void>,
): Promise<void> {
  const iterator = messages[Symbol.asyncIterator]();
  let batch: JsMsg[] = [];
  let next = nextOf(iterator);
  const unacked = new Unacked();
  let due = 1;
  try {
    for (;;) {
      // Events that came while the last batch was applied wait in the client's buffer, or are on
      // their way: take them into this batch (a live import would otherwise commit one message at
      // a time), but never wait long with a batch in hand.
      const result =
        batch.length > 0
          ? await orIdle(next, messages.getPending() > 0 ? BUFFERED_WAIT_MS : SERVER_PENDING_WAIT_MS)
          : unacked.any
            ? await orIdle(next, ACK_EVERY_MS)
            : await next;
      if (result === IDLE && batch.length === 0) {
        unacked.ack();
        continue;
      }
      if (result !== IDLE) {
        if (result.done) return;
        const { consumer, deliverySequence } = result.value.info;
        if (deliverySequence !== due) {
          if (batch.length > 0) {
            await apply(batch);
            unacked.applied(batch);
          }
          throw new DeliveryGap(consumer, due, deliverySequence);
        }
        due++;
        batch.push(result.value);
        next = nextOf(iterator);
        if ((result.value.info.pending > 0 || messages.getPending() > 0) && batch.length < maxBatch) continue;
      }
      await apply(batch);
      unacked.applied(batch);
      batch = [];
    }
  } finally {
    // What was applied counts as done, whatever stops the loop; on a closed connection it cannot
    // be said, and comes again (the error that stopped the loop is the one to report).
    try {
      unacked.ack();
    } catch {}
    // Nor does this client pull more: a reader made again must not compete with it for deliveries.
    try {
      messages.stop();
    } catch {}
  }
}

/** The last message applied and not yet acknowledged, and how many before it. */
class Unacked {
  private last: JsMsg | undefined;
  private count = 0;
  private since = 0;

  get any(): boolean {
    return this.last !== undefined;
  }

  applied(batch: readonly JsMsg[]): void {
    if (!this.last) this.since = performance.now();
    this.last = batch[batch.length - 1];
    this.count += batch.length;
    if (this.count >= ACK_EVERY_MESSAGES || performance.now() - this.since >= ACK_EVERY_MS) this.ack();
  }

  ack(): void {
    this.last?.ack();
    this.last = undefined;
    this.count = 0;
  }
}
