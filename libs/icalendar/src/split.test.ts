import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { expandSeries, readCalendar, splitSeries } from './index.js';

/** A VEVENT master with DTSTART in Berlin and the given recurrence lines. */
function master(start: string, lines: string[], allDay = false): string {
  const text = [
    'BEGIN:VCALENDAR',
    'VERSION:2.0',
    'PRODID:-//test//EN',
    'BEGIN:VEVENT',
    'UID:split-test',
    allDay ? `DTSTART;VALUE=DATE:${start}` : `DTSTART;TZID=Europe/Berlin:${start}`,
    allDay ? '' : `DTEND;TZID=Europe/Berlin:${start.slice(0, 9)}100000`,
    ...lines,
    'SUMMARY:Weekly',
    'END:VEVENT',
    'END:VCALENDAR',
    '',
  ].filter(Boolean);
  const [event] = readCalendar(text.join('\r\n')).events;
  return event!.source!;
}

const starts = (source: string, lines: string[]) => {
  const text = source.replace(/RRULE:[^\r\n]*(\r\n)?/g, '').replace(/EXDATE[^\r\n]*(\r\n)?/g, '');
  const withLines = text.replace('END:VEVENT', `${lines.join('\r\n')}\r\nEND:VEVENT`);
  return expandSeries(withLines, new Date(0), new Date('2027-01-01T00:00:00Z')).occurrences.map((o) => o.start);
};

describe('splitSeries (this and following)', () => {
  it('ends the old rule one second before the split instant and carries the rest of a COUNT, across the DST change', () => {
    const lines = ['RRULE:FREQ=WEEKLY;COUNT=6', 'EXDATE;TZID=Europe/Berlin:20260406T090000'];
    const source = master('20260316T090000', lines);
    // 30 March 09:00 Berlin is summer time already: 07:00Z.
    const split = splitSeries(source, lines, new Date('2026-03-30T07:00:00Z'));
    assert.deepEqual(split.before, [
      'RRULE:FREQ=WEEKLY;UNTIL=20260330T065959Z',
      'EXDATE;TZID=Europe/Berlin:20260406T090000',
    ]);
    assert.deepEqual(split.after, ['RRULE:FREQ=WEEKLY;COUNT=4', 'EXDATE;TZID=Europe/Berlin:20260406T090000']);
    // Independent of the splitter: the old rule, re-expanded, stops at the two winter instances.
    assert.deepEqual(starts(source, split.before), ['2026-03-16T08:00:00.000Z', '2026-03-23T08:00:00.000Z']);
  });

  it('keeps an UNTIL on the new series, ends an all-day series the day before the split day, refuses what it cannot split', () => {
    const weekly = ['RRULE:FREQ=WEEKLY;BYDAY=MO;UNTIL=20261231T230000Z'];
    const split = splitSeries(master('20260316T090000', weekly), weekly, new Date('2026-05-04T07:00:00Z'));
    assert.deepEqual(split.after, weekly);
    assert.equal(split.before[0], 'RRULE:FREQ=WEEKLY;BYDAY=MO;UNTIL=20260504T065959Z');

    const daily = ['RRULE:FREQ=DAILY;COUNT=10'];
    const days = splitSeries(master('20260327', daily, true), daily, new Date('2026-03-30T00:00:00Z'), '2026-03-30');
    assert.deepEqual(days, { before: ['RRULE:FREQ=DAILY;UNTIL=20260329'], after: ['RRULE:FREQ=DAILY;COUNT=7'] });

    const withRdate = ['RRULE:FREQ=WEEKLY;COUNT=6', 'RDATE;TZID=Europe/Berlin:20260318T090000'];
    assert.throws(
      () => splitSeries(master('20260316T090000', withRdate), withRdate, new Date('2026-03-30T07:00:00Z')),
      /RDATE/,
    );
    assert.throws(
      () => splitSeries(master('20260316T090000', daily), daily, new Date('2026-03-16T08:00:00Z')),
      /at or before the first instance/,
    );
  });
});
