import {
  CommitmentExtracted,
  EmbeddingComputed,
  ItemDeleted,
  ItemUnderstood,
  PartExtracted,
  StructureExtracted,
  UnderstandingFailed,
} from '@memex/contracts';
import { aggregateFilter, eraseEvents, lastEventOf, type Bus } from '@memex/bus';

export async function isDeleted(bus: Bus, itemId: string): Promise<boolean> {
  return (await lastEventOf(bus, ItemDeleted, `item:${itemId}`)) !== undefined;
}

/** The event types tiers 0, 1 and 2 derive from an item, which a deletion erases from the log. */
const DERIVED_TYPES = new Set<string>(
  [PartExtracted, EmbeddingComputed, StructureExtracted, ItemUnderstood, CommitmentExtracted, UnderstandingFailed].map(
    ({ type }) => type,
  ),
);

/** Erases tier 0's and 1's events about a deleted item, so its passages and vectors do not outlive it. */
export function eraseDerived(bus: Bus, itemId: string): Promise<number> {
  return eraseEvents(bus, aggregateFilter(`item:${itemId}`), { which: (event) => DERIVED_TYPES.has(event.type) });
}
