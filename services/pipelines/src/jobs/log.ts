import {
  CommitmentExtracted,
  EmbeddingComputed,
  ItemDeleted,
  ItemUnderstood,
  PartExtracted,
  StructureExtracted,
  UnderstandingFailed,
} from '@memex/contracts';
import { eventSubject, EVENTS_STREAM, lastEventOf, type Bus } from '@memex/bus';

export async function isDeleted(bus: Bus, itemId: string): Promise<boolean> {
  return (await lastEventOf(bus, ItemDeleted, `item:${itemId}`)) !== undefined;
}

/** The event types tiers 0, 1 and 2 derive from an item, which a deletion erases from the log. */
export const DERIVED_EVENTS = [
  PartExtracted,
  EmbeddingComputed,
  StructureExtracted,
  ItemUnderstood,
  CommitmentExtracted,
  UnderstandingFailed,
];

/** Erases tier 0's and 1's events about a deleted item, so its passages and vectors do not outlive it. */
export async function eraseDerived(bus: Bus, itemId: string): Promise<number> {
  let purged = 0;
  for (const { type } of DERIVED_EVENTS) {
    const response = await bus.jsm.streams.purge(EVENTS_STREAM, { filter: eventSubject(type, `item:${itemId}`) });
    purged += response.purged;
  }
  return purged;
}
