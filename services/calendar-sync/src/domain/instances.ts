import { expandSeries } from '@memex/icalendar';
import type { FoldedEvent } from './fold.js';

/** One occurrence placed in time, with the event row that describes it. */
export interface PlacedInstance {
  rid: string;
  eventRid: string;
  start: Date;
  end: Date;
  busy: boolean;
}

/**
 * How far ahead of the latest change (or of its start) a series is kept expanded in the read
 * model; windows beyond are expanded when asked (rarer, and slower by the iteration from DTSTART).
 */
export const EXPANSION_YEARS = 1;
/** No series keeps more instances than this in the read model (a minutely rule would be endless). */
export const MAX_STORED_INSTANCES = 5_000;

export function expansionHorizon(seriesStart: Date, latestChange: Date): Date {
  const from = seriesStart > latestChange ? seriesStart : latestChange;
  const horizon = new Date(from);
  horizon.setUTCFullYear(horizon.getUTCFullYear() + EXPANSION_YEARS);
  return horizon;
}

function placed(rid: string, event: FoldedEvent, start: Date, end: Date): PlacedInstance {
  return { rid, eventRid: event.rid, start, end, busy: !event.data.transparent };
}

/**
 * The instances of one UID in [from, until): a single event once; a series' occurrences (ical.js
 * expansion), each replaced by its changed instance when there is one; changed instances the rules
 * do not produce (moved from an RDATE that is gone) still shown. Cancelled ones are left out.
 * `expandedUntil` is set when the series goes on: its instances are complete up to there.
 */
export function placeInstances(
  events: FoldedEvent[],
  from: Date,
  until: Date,
): { instances: PlacedInstance[]; expandedUntil: Date | null } {
  const master = events.find((e) => e.rid === '');
  const changed = new Map(events.filter((e) => e.rid !== '').map((e) => [e.rid, e]));
  const instances: PlacedInstance[] = [];
  let expandedUntil: Date | null = null;
  const overlaps = (start: Date, end: Date) =>
    start < until && (end > from || (end.getTime() === start.getTime() && start >= from));
  if (master && master.data.status !== 'cancelled') {
    if (master.data.source) {
      const expansion = expandSeries(master.data.source, from, until, MAX_STORED_INSTANCES);
      expandedUntil = expansion.more ? expansion.complete : null;
      for (const occurrence of expansion.occurrences) {
        if (changed.has(occurrence.recurrenceId)) continue;
        instances.push(placed(occurrence.recurrenceId, master, new Date(occurrence.start), new Date(occurrence.end)));
      }
    } else {
      const start = new Date(master.data.start);
      const end = new Date(master.data.end);
      if (overlaps(start, end)) instances.push(placed('', master, start, end));
    }
  }
  for (const [rid, event] of changed) {
    if (event.data.status === 'cancelled' || master?.data.status === 'cancelled') continue;
    const start = new Date(event.data.start);
    const end = new Date(event.data.end);
    if (overlaps(start, end)) instances.push(placed(rid, event, start, end));
  }
  instances.sort((a, b) => a.start.getTime() - b.start.getTime());
  return { instances, expandedUntil };
}
