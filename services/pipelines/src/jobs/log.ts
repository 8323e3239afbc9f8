import type { EventEnvelope } from '@memex/contracts';
import { decodeJson, eventSubject, EVENTS_STREAM, isNotFound, readLog, type Bus } from '@memex/bus';

/** The event at a sequence, or undefined when it is gone (erased by a deletion). */
export async function eventAt(bus: Bus, seq: number): Promise<EventEnvelope | undefined> {
  const stored = await bus.jsm.streams.getMessage(EVENTS_STREAM, { seq }).catch((error) => {
    if (isNotFound(error)) return null;
    throw error;
  });
  return stored ? decodeJson<EventEnvelope>(stored.data) : undefined;
}

/** The last event of a type about an item, if any. */
export async function lastEventOf(bus: Bus, type: string, itemId: string): Promise<EventEnvelope | undefined> {
  const stored = await bus.jsm.streams
    .getMessage(EVENTS_STREAM, { last_by_subj: eventSubject(type, `item:${itemId}`) })
    .catch((error) => {
      if (isNotFound(error)) return null;
      throw error;
    });
  return stored ? decodeJson<EventEnvelope>(stored.data) : undefined;
}

/** Every event of a type about an item, in log order. */
export async function eventsOf(bus: Bus, type: string, itemId: string): Promise<EventEnvelope[]> {
  const events: EventEnvelope[] = [];
  for await (const { event } of readLog(bus, { filter: eventSubject(type, `item:${itemId}`), untilCaughtUp: true }))
    events.push(event);
  return events;
}

export async function isDeleted(bus: Bus, itemId: string): Promise<boolean> {
  return (await lastEventOf(bus, 'item.deleted', itemId)) !== undefined;
}

/** The event types tier 1 derives from an item, which a deletion erases from the log. */
export const DERIVED_TYPES = ['part.extracted', 'embedding.computed'] as const;

/** Erases tier 1's events about a deleted item, so its passages and vectors do not outlive it. */
export async function eraseDerived(bus: Bus, itemId: string): Promise<number> {
  let purged = 0;
  for (const type of DERIVED_TYPES) {
    const response = await bus.jsm.streams.purge(EVENTS_STREAM, { filter: eventSubject(type, `item:${itemId}`) });
    purged += response.purged;
  }
  return purged;
}
