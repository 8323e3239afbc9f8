import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { formatInstances, viewRange } from './calendar.js';

describe('memex calendar: views', () => {
  it('turns a day into the range of its view', () => {
    assert.deepEqual(viewRange('day', '2026-03-29'), {
      from: '2026-03-29T00:00:00.000Z',
      to: '2026-03-30T00:00:00.000Z',
    });
    // 2026-03-29 is a Sunday: its ISO week starts on Monday the 23rd.
    assert.deepEqual(viewRange('week', '2026-03-29'), {
      from: '2026-03-23T00:00:00.000Z',
      to: '2026-03-30T00:00:00.000Z',
    });
    assert.deepEqual(viewRange('month', '2026-02-14'), {
      from: '2026-02-01T00:00:00.000Z',
      to: '2026-03-01T00:00:00.000Z',
    });
    assert.deepEqual(viewRange('agenda', '2026-12-30', 3), {
      from: '2026-12-30T00:00:00.000Z',
      to: '2027-01-02T00:00:00.000Z',
    });
    assert.throws(() => viewRange('day', 'tomorrow'), /not a day: "tomorrow"/);
  });

  it('shows times in the zone asked for and all-day events as days', () => {
    const base = {
      uid: 'u',
      recurrence_id: null,
      location: '',
      time_zone: 'Europe/Berlin',
      status: 'confirmed' as const,
      recurring: false,
      modified: false,
      transparent: false,
      organizer: null,
      attendees: [],
      items: [],
    };
    const text = formatInstances(
      [
        {
          ...base,
          summary: 'Sync',
          start: '2026-03-30T07:00:00.000Z',
          end: '2026-03-30T08:00:00.000Z',
          all_day: false,
          start_date: null,
          end_date: null,
        },
        {
          ...base,
          summary: 'Trip',
          start: '2026-04-01T00:00:00.000Z',
          end: '2026-04-04T00:00:00.000Z',
          all_day: true,
          start_date: '2026-04-01',
          end_date: '2026-04-04',
        },
      ],
      'Europe/Berlin',
    );
    assert.equal(text, '2026-03-30 09:00 – 10:00  Sync\n2026-04-01 – 2026-04-03  all day  Trip');
  });
});
