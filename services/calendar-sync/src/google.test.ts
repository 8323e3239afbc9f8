import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CalendarList, CalendarSync, type ResultOf } from '@memex/contracts';
import { startGoogleCalendar, type GoogleHarness } from './testing/google.js';

type Instances = ResultOf<typeof CalendarList>['instances'];
const ACCOUNT = 'owner@example.com';

/** A weekly Monday 09:00 Berlin series from 2026-03-16 (across the 29 March DST change), six weeks. */
const SERIES = {
  id: 'weekly1',
  summary: 'Weekly sync',
  start: { dateTime: '2026-03-16T09:00:00+01:00', timeZone: 'Europe/Berlin' },
  end: { dateTime: '2026-03-16T10:00:00+01:00', timeZone: 'Europe/Berlin' },
  recurrence: ['RRULE:FREQ=WEEKLY;COUNT=6'],
  organizer: { email: 'ada@example.com', displayName: 'Ada' },
  attendees: [{ email: 'owner@example.com', responseStatus: 'accepted' }, { email: 'bob@example.com', displayName: 'Bob', responseStatus: 'needsAction' }],
};

describe('calendar-sync: Google Calendar v3', () => {
  let h: GoogleHarness;
  let seq = 0;
  const sync = async () => {
    const result = await h.call(CalendarSync, { account: ACCOUNT });
    seq = Math.max(seq, result.seq);
    return result.accounts[0]!.calendars[0]!;
  };
  const list = async (from: string, to: string): Promise<Instances> => (await h.call(CalendarList, { from, to, min_seq: seq })).instances;

  before(async () => {
    h = await startGoogleCalendar();
    h.calendar.addCalendar('primary', 'Owner', 'Europe/Berlin');
    h.calendar.put('primary', SERIES);
    // The 23 March instance moved to Tuesday 14:00; the 6 April one cancelled.
    h.calendar.put('primary', {
      id: 'weekly1_20260323T080000Z', recurringEventId: 'weekly1', iCalUID: 'weekly1@google.com', summary: 'Weekly sync (moved)',
      originalStartTime: { dateTime: '2026-03-23T09:00:00+01:00', timeZone: 'Europe/Berlin' },
      start: { dateTime: '2026-03-24T14:00:00+01:00', timeZone: 'Europe/Berlin' },
      end: { dateTime: '2026-03-24T15:00:00+01:00', timeZone: 'Europe/Berlin' },
    });
    h.calendar.put('primary', {
      id: 'weekly1_20260406T070000Z', recurringEventId: 'weekly1', status: 'cancelled',
      originalStartTime: { dateTime: '2026-04-06T09:00:00+02:00', timeZone: 'Europe/Berlin' },
    });
    h.calendar.put('primary', { id: 'lunch1', summary: 'Lunch', start: { dateTime: '2026-03-20T12:00:00+01:00' }, end: { dateTime: '2026-03-20T13:00:00+01:00' } });
    h.calendar.put('primary', { id: 'holiday1', summary: 'Holiday', start: { date: '2026-03-27' }, end: { date: '2026-03-28' } });
    await h.connect(ACCOUNT);
  });
  after(async () => h?.stop());

  it('first sync: every event, a series across DST with its moved and cancelled instances, all-day days', async () => {
    const first = await sync();
    assert.deepEqual([first.mode, first.changed], ['first', 5]);
    const instances = await list('2026-03-01T00:00:00Z', '2026-05-01T00:00:00Z');
    assert.deepEqual(
      instances.map((i) => [i.summary, i.start, i.all_day ? i.start_date : null]),
      [
        ['Weekly sync', '2026-03-16T08:00:00.000Z', null],
        ['Lunch', '2026-03-20T11:00:00.000Z', null],
        ['Weekly sync (moved)', '2026-03-24T13:00:00.000Z', null],
        ['Holiday', '2026-03-27T00:00:00.000Z', '2026-03-27'],
        // Summer time from 29 March: 09:00 Berlin is 07:00Z.
        ['Weekly sync', '2026-03-30T07:00:00.000Z', null],
        ['Weekly sync', '2026-04-13T07:00:00.000Z', null],
        ['Weekly sync', '2026-04-20T07:00:00.000Z', null],
      ],
    );
    assert.ok(instances[0]!.items[0]!.startsWith('google:owner@example.com/primary/'));
    assert.deepEqual(instances[0]!.attendees.map((a) => [a.address, a.status]), [['owner@example.com', 'accepted'], ['bob@example.com', 'needs-action']]);
  });

  it('incremental sync with the sync token: a change and a deletion at Google, nothing else republished', async () => {
    h.calendar.put('primary', { id: 'lunch1', summary: 'Lunch with Bob', start: { dateTime: '2026-03-20T12:30:00+01:00' }, end: { dateTime: '2026-03-20T13:30:00+01:00' } });
    h.calendar.remove('primary', 'holiday1');
    const next = await sync();
    assert.deepEqual([next.mode, next.changed], ['incremental', 2]);
    assert.equal(h.calendar.syncTokensSeen.length, 1);
    const day = await list('2026-03-20T00:00:00Z', '2026-03-28T00:00:00Z');
    assert.deepEqual(day.map((i) => [i.summary, i.start]), [['Lunch with Bob', '2026-03-20T11:30:00.000Z'], ['Weekly sync (moved)', '2026-03-24T13:00:00.000Z']]);
    assert.deepEqual([(await sync()).changed], [0], 'nothing changed, nothing published');
  });

  it('a 410 on the sync token: a full resync that publishes only what differs', async () => {
    h.calendar.put('primary', { id: 'review1', summary: 'Review', start: { dateTime: '2026-03-25T10:00:00+01:00' }, end: { dateTime: '2026-03-25T11:00:00+01:00' } });
    h.calendar.expireTokens();
    const resync = await sync();
    // Only the new event: the unchanged ones keep their etag and are not published again.
    assert.deepEqual([resync.mode, resync.changed], ['resync', 1]);
    const week = await list('2026-03-23T00:00:00Z', '2026-03-30T00:00:00Z');
    assert.deepEqual(week.map((i) => i.summary), ['Weekly sync (moved)', 'Review']);
    assert.equal((await sync()).mode, 'incremental', 'the resync left a fresh token');
  });
});
