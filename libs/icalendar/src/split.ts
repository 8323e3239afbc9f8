import { CalendarFormatError } from './calendar.js';
import { expandSeries } from './expand.js';

/** The recurrence lines (RRULE/EXDATE, as iCalendar and Calendar v3 write them) of the two series a split leaves. */
export interface SeriesSplit {
  /** The original series, ending before the split: its RRULE gets an UNTIL (a COUNT gives way to it). */
  before: string[];
  /** The new series from the split on: the same rule, its COUNT less the instances already past. */
  after: string[];
}

/** `20260330T065959Z`: an UNTIL in UTC, as RFC 5545 requires when DTSTART names a zone. */
function utcStamp(at: Date): string {
  return at
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}/, '');
}

/**
 * "This and following" (RFC 5545 has no operation for it; clients, Google included, split the
 * series): the series whose master is `source`, with recurrence `lines`, split at the instance
 * that originally starts at `splitAt`. The old series keeps the instances before it (UNTIL one
 * second earlier, an instant, so a DST change between does not move it); the new one starts
 * there with the same rule. EXDATEs stay on both (one outside a series' instances is inert).
 * An all-day series names the split's first day in `splitDay` (YYYY-MM-DD): its UNTIL is the
 * day before, a date. An RDATE (extra dates outside the rule) or two RRULEs are refused rather
 * than guessed at.
 */
export function splitSeries(
  source: string,
  lines: string[],
  splitAt: Date,
  splitDay: string | null = null,
): SeriesSplit {
  const rules = lines.filter((line) => /^RRULE[:;]/i.test(line));
  if (lines.some((line) => /^RDATE[:;]/i.test(line))) {
    throw new CalendarFormatError('a series with RDATE (extra dates) cannot be split: change its instances one by one');
  }
  if (rules.length !== 1) {
    throw new CalendarFormatError(`a series with ${rules.length} RRULEs cannot be split (one is needed)`);
  }
  const [name, value] = [rules[0]!.slice(0, rules[0]!.indexOf(':')), rules[0]!.slice(rules[0]!.indexOf(':') + 1)];
  const parts = value.split(';').filter(Boolean);
  const keep = parts.filter((part) => !/^(UNTIL|COUNT)=/i.test(part));
  const count = parts.find((part) => /^COUNT=/i.test(part));
  const until = parts.find((part) => /^UNTIL=/i.test(part));

  const past = expandSeries(source, new Date(0), splitAt).occurrences;
  if (past.length === 0)
    throw new CalendarFormatError('the split is at or before the first instance: change the whole series');
  const beforeUntil = splitDay
    ? `UNTIL=${utcStamp(new Date(Date.parse(`${splitDay}T00:00:00Z`) - 86_400_000)).slice(0, 8)}`
    : `UNTIL=${utcStamp(new Date(splitAt.getTime() - 1000))}`;
  let afterEnd: string[] = until ? [until] : [];
  if (count) {
    const left = Number(count.split('=')[1]) - past.length;
    if (left <= 0)
      throw new CalendarFormatError(`the series has ${count.split('=')[1]} instances, none from the split on`);
    afterEnd = [`COUNT=${left}`];
  }
  const others = lines.filter((line) => line !== rules[0]);
  return {
    before: [`${name}:${[...keep, beforeUntil].join(';')}`, ...others],
    after: [`${name}:${[...keep, ...afterEnd].join(';')}`, ...others],
  };
}
