import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { sharedFile, sharedSkip } from '@memex/testing';
import { expandSeries, readCalendar } from './index.js';

const skip = sharedSkip('corpus/calendar');

function series(file: string, uid: string) {
  const calendar = readCalendar(fs.readFileSync(sharedFile(`corpus/calendar/${file}`), 'utf8'));
  const master = calendar.events.find((e) => e.uid === uid && e.recurrenceId === null);
  assert.ok(master?.source, `${file}: no series ${uid}`);
  return master.source;
}

describe('expandSeries', { skip }, () => {
  it('keeps 10:00 Los Angeles time across the November DST change, with RDATEs added and EXDATEs removed', () => {
    const source = series('ical.js/recur_instances.ics', '623c13c0-6c2b-45d6-a12b-c33ad61c4868');
    const { occurrences, more } = expandSeries(
      source,
      new Date('2012-10-01T00:00:00Z'),
      new Date('2013-01-01T00:00:00Z'),
    );
    // First Tuesdays (10-02 PDT = 17:00Z; 11-06 PST = 18:00Z), RDATEs 11-05, 11-10, 11-30; 12-04 is an EXDATE.
    assert.deepEqual(
      occurrences.map((o) => o.start),
      [
        '2012-10-02T17:00:00.000Z',
        '2012-11-05T18:00:00.000Z',
        '2012-11-06T18:00:00.000Z',
        '2012-11-10T18:00:00.000Z',
        '2012-11-30T18:00:00.000Z',
      ],
    );
    assert.ok(occurrences.every((o) => Date.parse(o.end) - Date.parse(o.start) === 30 * 60_000));
    assert.equal(more, true);
  });

  it('reads an RDATE given as a period (its own start and end)', () => {
    const source = series('ical.js/recur_instances.ics', '623c13c0-6c2b-45d6-a12b-c33ad61c4868');
    const { occurrences } = expandSeries(source, new Date('2023-11-24T00:00:00Z'), new Date('2023-11-26T00:00:00Z'));
    assert.deepEqual(occurrences, [
      { recurrenceId: '2023-11-25T09:00:00.000Z', start: '2023-11-25T09:00:00.000Z', end: '2023-11-25T12:30:00.000Z' },
    ]);
  });

  it('expands a daily all-day series across the October DST change in Berlin day by day', () => {
    const source = series(
      'node-ical/whole_day_moved_over_dst_change_berlin.ics',
      '14nv8jl8d6dvdbl477lod4fftf@google.com',
    );
    const { occurrences, more } = expandSeries(
      source,
      new Date('2024-10-01T00:00:00Z'),
      new Date('2024-11-30T00:00:00Z'),
    );
    assert.deepEqual(
      occurrences.map((o) => o.recurrenceId),
      ['2024-10-27T00:00:00.000Z', '2024-10-28T00:00:00.000Z', '2024-10-29T00:00:00.000Z'],
    );
    assert.equal(more, false, 'COUNT=3 ends the series');
  });

  it('drops instances that end before the window and stops at its end', () => {
    const source = series('node-ical/daily-count-exdate-recurrence-id.ics', '0000001');
    const { occurrences } = expandSeries(source, new Date('2015-07-09T00:00:00Z'), new Date('2015-07-12T00:00:00Z'));
    // Daily at 12:00 PDT (19:00Z) from 07-06, COUNT=10, 07-08 and 07-10 excluded.
    assert.deepEqual(
      occurrences.map((o) => o.start),
      ['2015-07-09T19:00:00.000Z', '2015-07-11T19:00:00.000Z'],
    );
  });
});
