import { DeliverPolicy, type ConsumerMessages, type JsMsg } from '@nats-io/jetstream';
import type { MsgHdrs } from '@nats-io/transport-node';
import type { EventEnvelope } from '@memex/contracts';
import type { Bus } from './bus.js';
import { decodeEvent } from './events.js';
import { EVENT_SUBJECT_ROOT, EVENTS_STREAM, typeOfSubject } from './subjects.js';

export interface LoggedEvent {
  seq: number;
  event: EventEnvelope;
  /** The event's type as its subject names it, known without decoding it (read from the log). */
  type?: string;
  headers: MsgHdrs | undefined;
  /** Events of the filter still after this one when it was delivered. */
  pending: number;
}

export interface ReadLogOptions {
  fromSeq?: number;
  /** Subject filters (NATS 2.9 allows only one per consumer: see `typeFilters`); default every event. */
  filter?: string | readonly string[];
  /** Stop after the event that leaves nothing pending (a snapshot read), instead of following. */
  untilCaughtUp?: boolean;
  signal?: AbortSignal;
}

/** How long a read to the end waits for the next event before asking whether any is left. */
const CAUGHT_UP_CHECK_MS = 500;
export const IDLE = Symbol('idle');

/** The promise's value, or IDLE when it takes longer than `ms`. */
export async function orIdle<T>(promise: Promise<T>, ms: number): Promise<T | typeof IDLE> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<typeof IDLE>((resolve) => (timer = setTimeout(resolve, ms, IDLE))),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The iterator's next result, asked for before the caller is done with the last one (it applies
 * or yields it first): a failure meanwhile (the consumer deleted) waits for the caller to await
 * it, instead of counting as an unhandled rejection, which ends a Node process.
 */
export function nextOf<T>(iterator: AsyncIterator<T>): Promise<IteratorResult<T>> {
  const next = iterator.next();
  next.catch(() => undefined);
  return next;
}

/**
 * Reads the log in order through an ordered (ephemeral) consumer: replays, the SSE stream,
 * and anything else that reads without keeping a position in JetStream.
 */
export async function* readLog(bus: Bus, options: ReadLogOptions = {}): AsyncGenerator<LoggedEvent> {
  const fromSeq = Math.max(1, options.fromSeq ?? 1);
  if (options.untilCaughtUp) {
    const info = await bus.jsm.streams.info(EVENTS_STREAM);
    if (info.state.last_seq < fromSeq) return;
  }
  const consumer = await bus.js.consumers.get(EVENTS_STREAM, {
    filter_subjects: oneOrSeveral(options.filter ?? `${EVENT_SUBJECT_ROOT}.>`),
    deliver_policy: DeliverPolicy.StartSequence,
    opt_start_seq: fromSeq,
  });
  const messages: ConsumerMessages = await consumer.consume({ max_messages: 1000 });
  const stop = () => messages.stop();
  // A signal aborted before this point would never fire its listener.
  if (options.signal?.aborted) stop();
  options.signal?.addEventListener('abort', stop, { once: true });
  try {
    if (options.untilCaughtUp && (await consumer.info(true)).num_pending === 0) return;
    const iterator = messages[Symbol.asyncIterator]();
    let next = nextOf(iterator);
    let delivered = 0;
    for (;;) {
      const result = options.untilCaughtUp ? await orIdle(next, CAUGHT_UP_CHECK_MS) : await next;
      if (result === IDLE) {
        // Nothing left on the server and all it sent is read: the events that were still to come
        // when the last one was delivered have been erased since (a deletion). None will come.
        const info = await consumer.info();
        if (info.num_pending === 0 && info.delivered.consumer_seq <= delivered) return;
        continue;
      }
      if (result.done) return;
      const msg = result.value;
      delivered = msg.info.deliverySequence;
      next = nextOf(iterator);
      yield loggedMessage(msg);
      if (options.untilCaughtUp && msg.info.pending === 0) return;
    }
  } finally {
    options.signal?.removeEventListener('abort', stop);
    messages.stop();
  }
}

/**
 * A message of the log as a LoggedEvent whose payload (and headers) are decoded when first read:
 * a consumer whose one filter (NATS 2.9) takes in types it has no handler for skips those by
 * `type`, undecoded (ingest's replay: two identity claims beside each message).
 */
export function loggedMessage(msg: JsMsg): LoggedEvent {
  let event: EventEnvelope | undefined;
  return {
    seq: msg.seq,
    get event() {
      return (event ??= decodeEvent(msg.data));
    },
    type: typeOfSubject(msg.subject),
    // Decoded when read (a batch's trace is its last event's), not for every event.
    get headers() {
      return msg.headers;
    },
    pending: msg.info.pending,
  };
}

/** A single filter goes as a string: NATS 2.9 knows only the single filter_subject. */
export function oneOrSeveral(filter: string | readonly string[]): string | string[] {
  if (typeof filter === 'string') return filter;
  return filter.length === 1 ? filter[0]! : [...filter];
}
