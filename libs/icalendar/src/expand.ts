import ICAL from 'ical.js';
import { instant } from './calendar.js';

/** One instance of a recurring series, as its rules place it (before any changed instance replaces it). */
export interface Occurrence {
  /** The instance's original start: how a changed or cancelled instance (RECURRENCE-ID) names it. */
  recurrenceId: string;
  start: string;
  end: string;
}

export interface Expansion {
  occurrences: Occurrence[];
  /** True when the series goes on after `complete` (or the limit cut it): a later window must expand again. */
  more: boolean;
  /** The occurrences starting before this instant are all there: `until`, or less when the limit cut the expansion. */
  complete: Date;
}

/**
 * The occurrences of a series (`CalendarEvent.source`) that start before `until`, in order, by
 * ical.js's RRULE/RDATE/EXDATE expansion in the series' own zone (so 09:00 stays 09:00 across a DST
 * change). `from` drops occurrences that end before it; the iteration itself starts at DTSTART,
 * because an RRULE has no random access.
 */
export function expandSeries(source: string, from: Date, until: Date, limit = 100_000): Expansion {
  const root = new ICAL.Component(ICAL.parse(source) as unknown[]);
  const vevent = root.getFirstSubcomponent('vevent');
  if (!vevent) throw new Error('series source holds no VEVENT');
  const calendarZone = root.getFirstPropertyValue('x-wr-timezone');
  const defaultZone = calendarZone ? root.getTimeZoneByID(String(calendarZone)) : null;
  const event = new ICAL.Event(vevent, { strictExceptions: false, exceptions: [] });
  const iterator = event.iterator();
  const occurrences: Occurrence[] = [];
  let seen = 0;
  for (let next = iterator.next(); next; next = iterator.next()) {
    // An RDATE;VALUE=PERIOD occurrence comes as a period: it starts and ends on its own.
    const period = next instanceof ICAL.Period ? next : null;
    const at = period ? period.start : (next as ICAL.Time);
    const details = event.getOccurrenceDetails(at);
    const start = instant(details.startDate, defaultZone);
    if (start >= until) return { occurrences, more: true, complete: until };
    if (++seen > limit) return { occurrences, more: true, complete: start };
    const end = instant(period ? period.getEnd() : details.endDate, defaultZone);
    if (end > from || (end.getTime() === start.getTime() && start >= from)) {
      occurrences.push({
        recurrenceId: instant(at, defaultZone).toISOString(),
        start: start.toISOString(),
        end: end.toISOString(),
      });
    }
  }
  return { occurrences, more: false, complete: until };
}
