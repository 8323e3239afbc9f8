import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CalendarDelete, CalendarList, CalendarSync, CalendarUpdate, type ResultOf } from '@memex/contracts';
import { startGoogleCalendar, type GoogleHarness } from './testing/google.js';

type Instances = ResultOf<typeof CalendarList>['instances'];
const ACCOUNT = 'owner@example.com';
const UID = 'standup@google.com';
const BERLIN = 'Europe/Berlin';

/**
 * Changes to part of a recurring series, written to the fake Calendar v3 with etags: one
 * instance, and "this and following" (the series split). The series is a Monday 09:00 Berlin
 * stand-up from 16 March 2026, six weeks, across the 29 March change to summer time; every
 * expected instant below is worked out by hand (CET = UTC+1, CEST = UTC+2).
 */
describe('calendar-sync: one instance, and this and following, of a Google series across DST', () => {
  let h: GoogleHarness;
  let seq = 0;
  const sync = async () => {
    const result = await h.call(CalendarSync, { account: ACCOUNT });
    seq = Math.max(seq, result.seq);
    return result.accounts[0]!.calendars[0]!;
  };
  const list = async (): Promise<Instances> =>
    (await h.call(CalendarList, { from: '2026-03-01T00:00:00Z', to: '2026-06-01T00:00:00Z', min_seq: seq })).instances;
  const shown = (instances: Instances) => instances.map((i) => [i.summary, i.start, i.end]);

  before(async () => {
    h = await startGoogleCalendar();
    h.calendar.addCalendar('primary', 'Owner', BERLIN);
    h.calendar.put('primary', {
      id: 'standup',
      summary: 'Stand-up',
      start: { dateTime: '2026-03-16T09:00:00+01:00', timeZone: BERLIN },
      end: { dateTime: '2026-03-16T09:30:00+01:00', timeZone: BERLIN },
      recurrence: ['RRULE:FREQ=WEEKLY;COUNT=6'],
    });
    await h.connect(ACCOUNT);
    await sync();
  });
  after(async () => h?.stop());

  it('one instance moved: an exception at Google (RECURRENCE-ID), the rest of the series untouched', async () => {
    // 23 March, 09:00 CET (08:00Z) moved to 11:00 CET (10:00Z).
    const moved = await h.call(CalendarUpdate, {
      uid: UID,
      recurrence_id: '2026-03-23T08:00:00Z',
      start: '2026-03-23T11:00:00+01:00',
      end: '2026-03-23T11:30:00+01:00',
    });
    seq = moved.seq;
    assert.deepEqual([moved.uid, moved.merged], [UID, false]);
    const exception = h.calendar.event('primary', 'standup_20260323T080000Z')!;
    assert.equal(exception.recurringEventId, 'standup');
    assert.deepEqual(exception.originalStartTime, { dateTime: '2026-03-23T08:00:00.000Z', timeZone: BERLIN });
    assert.deepEqual(exception.start, { dateTime: '2026-03-23T10:00:00.000Z', timeZone: BERLIN });
    assert.deepEqual(h.calendar.event('primary', 'standup')!.recurrence, ['RRULE:FREQ=WEEKLY;COUNT=6']);

    const instances = await list();
    assert.deepEqual(shown(instances), [
      ['Stand-up', '2026-03-16T08:00:00.000Z', '2026-03-16T08:30:00.000Z'],
      ['Stand-up', '2026-03-23T10:00:00.000Z', '2026-03-23T10:30:00.000Z'],
      ['Stand-up', '2026-03-30T07:00:00.000Z', '2026-03-30T07:30:00.000Z'],
      ['Stand-up', '2026-04-06T07:00:00.000Z', '2026-04-06T07:30:00.000Z'],
      ['Stand-up', '2026-04-13T07:00:00.000Z', '2026-04-13T07:30:00.000Z'],
      ['Stand-up', '2026-04-20T07:00:00.000Z', '2026-04-20T07:30:00.000Z'],
    ]);
    assert.deepEqual([instances[1]!.modified, instances[1]!.recurrence_id], [true, '2026-03-23T08:00:00.000Z']);
    assert.equal((await sync()).changed, 0, 'Google holds what the memex recorded');
  });

  it('an instance changed at Google meanwhile: another field merges (412, re-read), the same field is refused', async () => {
    h.calendar.edit('primary', 'standup_20260323T080000Z', { location: 'Room 2' });
    const renamed = await h.call(CalendarUpdate, {
      uid: UID,
      recurrence_id: '2026-03-23T08:00:00Z',
      summary: 'Stand-up (late)',
    });
    seq = renamed.seq;
    assert.equal(renamed.merged, true);
    const exception = h.calendar.event('primary', 'standup_20260323T080000Z')!;
    assert.deepEqual([exception.summary, exception.location], ['Stand-up (late)', 'Room 2']);

    h.calendar.edit('primary', 'standup_20260323T080000Z', { summary: 'Stand-up (theirs)' });
    await assert.rejects(
      h.call(CalendarUpdate, { uid: UID, recurrence_id: '2026-03-23T08:00:00Z', summary: 'Stand-up (mine)' }),
      /changed at Google since the memex read it \(summary: "Stand-up \(theirs\)" at Google/,
    );
    assert.equal(h.calendar.event('primary', 'standup_20260323T080000Z')!.summary, 'Stand-up (theirs)');
    await assert.rejects(
      h.call(CalendarUpdate, { uid: UID, recurrence_id: '2026-03-24T08:00:00Z', summary: 'x' }),
      /has no instance that starts at 2026-03-24T08:00:00Z/,
    );
    await sync();
  });

  it('this and following from the first summer-time Monday: the old rule ends (UNTIL), a new series holds the rest at 11:00 Berlin', async () => {
    // Someone renamed the series at Google since the last sync: the split merges it (412 path), the times are the memex's.
    h.calendar.edit('primary', 'standup', { summary: 'Team stand-up' });
    const split = await h.call(CalendarUpdate, {
      uid: UID,
      recurrence_id: '2026-03-30T07:00:00Z',
      following: true,
      start: '2026-03-30T11:00:00+02:00',
      end: '2026-03-30T11:30:00+02:00',
    });
    seq = split.seq;
    assert.equal(split.merged, true);
    assert.notEqual(split.uid, UID);
    assert.deepEqual(h.calendar.event('primary', 'standup')!.recurrence, ['RRULE:FREQ=WEEKLY;UNTIL=20260330T065959Z']);
    const created = h.calendar.event('primary', split.uid.replace(/@google\.com$/, ''))!;
    assert.deepEqual(created.recurrence, ['RRULE:FREQ=WEEKLY;COUNT=4']);
    assert.deepEqual(created.start, { dateTime: '2026-03-30T09:00:00.000Z', timeZone: BERLIN });
    assert.equal(created.summary, 'Team stand-up');

    const instances = await list();
    assert.deepEqual(shown(instances), [
      ['Team stand-up', '2026-03-16T08:00:00.000Z', '2026-03-16T08:30:00.000Z'],
      ['Stand-up (theirs)', '2026-03-23T10:00:00.000Z', '2026-03-23T10:30:00.000Z'],
      // 11:00 CEST is 09:00Z, every week.
      ['Team stand-up', '2026-03-30T09:00:00.000Z', '2026-03-30T09:30:00.000Z'],
      ['Team stand-up', '2026-04-06T09:00:00.000Z', '2026-04-06T09:30:00.000Z'],
      ['Team stand-up', '2026-04-13T09:00:00.000Z', '2026-04-13T09:30:00.000Z'],
      ['Team stand-up', '2026-04-20T09:00:00.000Z', '2026-04-20T09:30:00.000Z'],
    ]);
    assert.deepEqual(
      instances.map((i) => i.uid),
      [UID, UID, split.uid, split.uid, split.uid, split.uid],
    );
    assert.equal((await sync()).changed, 0, 'Google holds what the memex recorded');
  });

  it('deleting one instance cancels it at Google; deleting from an instance on ends the series before it', async () => {
    const newUid = (await list()).find((i) => i.start === '2026-03-30T09:00:00.000Z')!.uid;
    const newId = newUid.replace(/@google\.com$/, '');
    const one = await h.call(CalendarDelete, { uid: newUid, recurrence_id: '2026-04-06T09:00:00Z' });
    seq = one.seq;
    assert.equal(h.calendar.event('primary', `${newId}_20260406T090000Z`)!.status, 'cancelled');
    const rest = await h.call(CalendarDelete, { uid: newUid, recurrence_id: '2026-04-20T09:00:00Z', following: true });
    seq = rest.seq;
    assert.deepEqual(h.calendar.event('primary', newId)!.recurrence, ['RRULE:FREQ=WEEKLY;UNTIL=20260420T085959Z']);
    assert.deepEqual(
      (await list()).map((i) => i.start),
      ['2026-03-16T08:00:00.000Z', '2026-03-23T10:00:00.000Z', '2026-03-30T09:00:00.000Z', '2026-04-13T09:00:00.000Z'],
    );
    await assert.rejects(
      h.call(CalendarUpdate, { uid: newUid, following: true, summary: 'x' }),
      /following needs recurrence_id/,
    );
    assert.equal((await sync()).changed, 0);
  });
});
