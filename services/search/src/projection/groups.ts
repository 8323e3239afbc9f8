import type { EmbeddingComputed, ItemIngested, PartExtracted } from '@memex/contracts';
import type { LoggedOf } from '@memex/runtime';

export type Ingested = LoggedOf<typeof ItemIngested>;
export type Extracted = LoggedOf<typeof PartExtracted>;
export type Embedded = LoggedOf<typeof EmbeddingComputed>;
export type ImportEvent = Ingested | Extracted | Embedded;

/**
 * Events applied together in three phases — items, then passages, then vectors — each phase
 * with a few statements for all its events. Each list keeps the log's order.
 */
export interface Group {
  ingested: Ingested[];
  extracted: Extracted[];
  embedded: Embedded[];
}

const PHASE = { 'item.ingested': 0, 'part.extracted': 1, 'embedding.computed': 2 } as const;

function itemOf({ event }: ImportEvent): string {
  return event.type === 'item.ingested' ? event.data.id : event.data.item_id;
}

/**
 * Splits a run of an import's events into groups whose phased application has exactly the effect
 * of applying the events one by one. An event of one item depends only on that item's rows and
 * on earlier events of it, so a group may hold many items, and one item's events as long as the
 * phases take them in their log order: its item, then its passages (the pieces of one split:
 * same revision and pipeline), then its vectors in any spaces. An event that would go to an
 * earlier phase than one of its item's already in the group, a second item.ingested of an item,
 * or passages of another split start a new group.
 *
 * `phasesInOrder`: groups whose events' phases also never go back across items. Needed while
 * search waits to switch to a new space: the switch is checked after each embedding against the
 * count of items with text, which passages raise, so no passages may move ahead of a vector.
 */
export function groupsOf(run: readonly ImportEvent[], phasesInOrder: boolean): Group[] {
  const groups: Group[] = [];
  let group: Group | undefined;
  let latest = new Map<string, { phase: number; split?: string }>();
  let furthest = 0;
  for (const logged of run) {
    const phase = PHASE[logged.event.type];
    const id = itemOf(logged);
    const split = logged.event.type === 'part.extracted' ? splitOf(logged as Extracted) : undefined;
    const seen = latest.get(id);
    const fits =
      group !== undefined &&
      !(phasesInOrder && phase < furthest) &&
      (!seen ||
        phase > seen.phase ||
        (phase === seen.phase && phase === PHASE['part.extracted'] && split === seen.split) ||
        (phase === seen.phase && phase === PHASE['embedding.computed']));
    if (!fits) {
      group = { ingested: [], extracted: [], embedded: [] };
      groups.push(group);
      latest = new Map();
      furthest = 0;
    }
    latest.set(id, { phase, ...(split !== undefined ? { split } : {}) });
    furthest = Math.max(furthest, phase);
    if (logged.event.type === 'item.ingested') group!.ingested.push(logged as Ingested);
    else if (logged.event.type === 'part.extracted') group!.extracted.push(logged as Extracted);
    else group!.embedded.push(logged as Embedded);
  }
  return groups;
}

/** Which split of an item's text a piece of passages belongs to. */
function splitOf({ event }: Extracted): string {
  return `${event.data.revision}\n${event.data.pipeline}`;
}
