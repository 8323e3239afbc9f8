import type { EventEnvelope } from '@memex/contracts';
import { isNotFound, type Bus } from './bus.js';
import { readLog } from './log-reader.js';
import { EVENTS_STREAM } from './subjects.js';

export interface EraseOptions {
  /** Called with every event the filter reads, erased or not (a deletion collects what to release). */
  seen?: (event: EventEnvelope) => void;
  /** Which of the events read to erase; default all. */
  which?: (event: EventEnvelope) => boolean;
}

/**
 * Overwrites and removes the log's events matching a subject filter; returns how many. One
 * message at a time, never a filtered purge: on NATS 2.9 a purge with a subject moves every
 * durable consumer with a wider filter (every projector's) past events it has not yet been
 * given, and they are never delivered (nats-server #3838, #5075).
 */
export async function eraseEvents(bus: Bus, filter: string, options: EraseOptions = {}): Promise<number> {
  const { seen, which = () => true } = options;
  const seqs: number[] = [];
  for await (const { seq, event } of readLog(bus, { filter, untilCaughtUp: true })) {
    seen?.(event);
    if (which(event)) seqs.push(seq);
  }
  for (const seq of seqs) {
    // Another eraser of the same item (a deletion, and a worker that finished after it) was first.
    await bus.jsm.streams.deleteMessage(EVENTS_STREAM, seq, true).catch((error: unknown) => {
      if (!isNotFound(error)) throw error;
    });
  }
  return seqs.length;
}
