import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  CalendarCreate,
  CalendarDelete,
  CalendarList,
  CalendarRsvp,
  CalendarSync,
  CalendarUpdate,
  Ingest,
  MemexError,
  type ResultOf,
} from '@memex/contracts';
import { serviceHealth } from '@memex/runtime';
import { invitationMail } from './testing/generate.js';
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
  attendees: [
    { email: 'owner@example.com', responseStatus: 'accepted' },
    { email: 'bob@example.com', displayName: 'Bob', responseStatus: 'needsAction' },
  ],
};

describe('calendar-sync: Google Calendar v3', () => {
  let h: GoogleHarness;
  let seq = 0;
  const sync = async () => {
    const result = await h.call(CalendarSync, { account: ACCOUNT });
    seq = Math.max(seq, result.seq);
    return result.accounts[0]!.calendars[0]!;
  };
  const list = async (from: string, to: string): Promise<Instances> =>
    (await h.call(CalendarList, { from, to, min_seq: seq })).instances;

  before(async () => {
    h = await startGoogleCalendar();
    h.calendar.addCalendar('primary', 'Owner', 'Europe/Berlin');
    h.calendar.put('primary', SERIES);
    // The 23 March instance moved to Tuesday 14:00; the 6 April one cancelled.
    h.calendar.put('primary', {
      id: 'weekly1_20260323T080000Z',
      recurringEventId: 'weekly1',
      iCalUID: 'weekly1@google.com',
      summary: 'Weekly sync (moved)',
      originalStartTime: { dateTime: '2026-03-23T09:00:00+01:00', timeZone: 'Europe/Berlin' },
      start: { dateTime: '2026-03-24T14:00:00+01:00', timeZone: 'Europe/Berlin' },
      end: { dateTime: '2026-03-24T15:00:00+01:00', timeZone: 'Europe/Berlin' },
    });
    h.calendar.put('primary', {
      id: 'weekly1_20260406T070000Z',
      recurringEventId: 'weekly1',
      status: 'cancelled',
      originalStartTime: { dateTime: '2026-04-06T09:00:00+02:00', timeZone: 'Europe/Berlin' },
    });
    h.calendar.put('primary', {
      id: 'lunch1',
      summary: 'Lunch',
      start: { dateTime: '2026-03-20T12:00:00+01:00' },
      end: { dateTime: '2026-03-20T13:00:00+01:00' },
    });
    h.calendar.put('primary', {
      id: 'holiday1',
      summary: 'Holiday',
      start: { date: '2026-03-27' },
      end: { date: '2026-03-28' },
    });
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
    assert.deepEqual(
      instances[0]!.attendees.map((a) => [a.address, a.status]),
      [
        ['owner@example.com', 'accepted'],
        ['bob@example.com', 'needs-action'],
      ],
    );
  });

  it('incremental sync with the sync token: a change and a deletion at Google, nothing else republished', async () => {
    h.calendar.put('primary', {
      id: 'lunch1',
      summary: 'Lunch with Bob',
      start: { dateTime: '2026-03-20T12:30:00+01:00' },
      end: { dateTime: '2026-03-20T13:30:00+01:00' },
    });
    h.calendar.remove('primary', 'holiday1');
    const next = await sync();
    assert.deepEqual([next.mode, next.changed], ['incremental', 2]);
    assert.equal(h.calendar.syncTokensSeen.length, 1);
    const day = await list('2026-03-20T00:00:00Z', '2026-03-28T00:00:00Z');
    assert.deepEqual(
      day.map((i) => [i.summary, i.start]),
      [
        ['Lunch with Bob', '2026-03-20T11:30:00.000Z'],
        ['Weekly sync (moved)', '2026-03-24T13:00:00.000Z'],
      ],
    );
    assert.deepEqual([(await sync()).changed], [0], 'nothing changed, nothing published');
  });

  it('a 410 on the sync token: a full resync that publishes only what differs', async () => {
    h.calendar.put('primary', {
      id: 'review1',
      summary: 'Review',
      start: { dateTime: '2026-03-25T10:00:00+01:00' },
      end: { dateTime: '2026-03-25T11:00:00+01:00' },
    });
    h.calendar.expireTokens();
    const resync = await sync();
    // Only the new event: the unchanged ones keep their etag and are not published again.
    assert.deepEqual([resync.mode, resync.changed], ['resync', 1]);
    const week = await list('2026-03-23T00:00:00Z', '2026-03-30T00:00:00Z');
    assert.deepEqual(
      week.map((i) => i.summary),
      ['Weekly sync (moved)', 'Review'],
    );
    assert.equal((await sync()).mode, 'incremental', 'the resync left a fresh token');
  });

  it('RSVP round trip: the answer goes to Google with the etag, and comes back in the calendar', async () => {
    const { merged, seq: written } = await h.call(CalendarRsvp, { uid: 'weekly1@google.com', response: 'declined' });
    seq = written;
    assert.equal(merged, false);
    const atGoogle = h.calendar.event('primary', 'weekly1')!;
    assert.deepEqual(
      atGoogle.attendees?.map((a) => [a.email, a.responseStatus]),
      [
        ['owner@example.com', 'declined'],
        ['bob@example.com', 'needsAction'],
      ],
    );
    const [first] = await list('2026-03-16T00:00:00Z', '2026-03-17T00:00:00Z');
    assert.deepEqual(
      first?.attendees.map((a) => a.status),
      ['declined', 'needs-action'],
    );
    assert.equal((await sync()).changed, 0, 'the next sync finds the etag it wrote: nothing to publish');
  });

  it('a 412 on an RSVP: the event changed at Google meanwhile is re-read and the answer merged into it', async () => {
    h.calendar.edit('primary', 'weekly1', { summary: 'Weekly sync (new agenda)' });
    const { merged, seq: written } = await h.call(CalendarRsvp, { uid: 'weekly1@google.com', response: 'tentative' });
    seq = written;
    assert.equal(merged, true);
    const atGoogle = h.calendar.event('primary', 'weekly1')!;
    assert.equal(atGoogle.summary, 'Weekly sync (new agenda)', 'their change stays');
    assert.equal(atGoogle.attendees?.[0]?.responseStatus, 'tentative', 'our answer is in');
    const [first] = await list('2026-03-16T00:00:00Z', '2026-03-17T00:00:00Z');
    assert.equal(first?.summary, 'Weekly sync (new agenda)');
  });

  it('a 412 on a move of a field someone else changed: reported, nothing overwritten; a change to another field merges', async () => {
    h.calendar.edit('primary', 'lunch1', {
      start: { dateTime: '2026-03-20T13:00:00+01:00' },
      end: { dateTime: '2026-03-20T14:00:00+01:00' },
    });
    await assert.rejects(
      h.call(CalendarUpdate, { uid: 'lunch1@google.com', start: '2026-03-20T10:00:00Z', end: '2026-03-20T11:00:00Z' }),
      (e: unknown) =>
        e instanceof MemexError &&
        e.code === 'conflict' &&
        /changed at Google since the memex read it \(start/.test(e.message),
    );
    assert.equal(
      h.calendar.event('primary', 'lunch1')!.start?.dateTime,
      '2026-03-20T13:00:00+01:00',
      'their move stands',
    );
    const { merged } = await h.call(CalendarUpdate, { uid: 'lunch1@google.com', location: 'Canteen' });
    assert.equal(merged, true);
    const atGoogle = h.calendar.event('primary', 'lunch1')!;
    assert.deepEqual([atGoogle.location, atGoogle.start?.dateTime], ['Canteen', '2026-03-20T13:00:00+01:00']);
  });

  it('create, move and delete from the memex reach Google, and the next sync brings back nothing twice', async () => {
    const created = await h.call(CalendarCreate, {
      account: ACCOUNT,
      summary: 'Dentist',
      start: '2026-03-26T08:00:00Z',
      end: '2026-03-26T09:00:00Z',
      time_zone: 'Europe/Berlin',
    });
    seq = created.seq;
    assert.match(created.uid, /^new\d+@google\.com$/);
    assert.equal(h.calendar.event('primary', created.uid.replace('@google.com', ''))?.summary, 'Dentist');
    seq = (
      await h.call(CalendarUpdate, { uid: created.uid, start: '2026-03-26T09:00:00Z', end: '2026-03-26T10:00:00Z' })
    ).seq;
    const dentist = (await list('2026-03-26T00:00:00Z', '2026-03-27T00:00:00Z')).filter((i) => i.summary === 'Dentist');
    assert.deepEqual(
      dentist.map((i) => [i.start, i.time_zone]),
      [['2026-03-26T09:00:00.000Z', 'Europe/Berlin']],
    );
    seq = (await h.call(CalendarDelete, { uid: 'review1@google.com' })).seq;
    assert.equal(h.calendar.event('primary', 'review1')?.status, 'cancelled');
    assert.deepEqual(
      (await list('2026-03-25T00:00:00Z', '2026-03-26T00:00:00Z')).map((i) => i.summary),
      [],
    );
    assert.equal((await sync()).changed, 0, 'what the memex wrote is not read back as new');
  });

  it('an invitation in a mail for an event of the Google calendar shows as that one event, from both places', async () => {
    const mail = invitationMail(
      'REQUEST',
      [
        'UID:lunch1@google.com',
        'SEQUENCE:0',
        'DTSTART:20260320T120000Z',
        'DTEND:20260320T130000Z',
        'SUMMARY:Lunch with Bob',
      ],
      'lunch-invite',
    );
    const ingested = await h.call(Ingest, {
      items: [{ type: 'message/rfc822', data: Buffer.from(mail).toString('base64'), source: { kind: 'test' } }],
    });
    seq = ingested.seq;
    const lunch = (await list('2026-03-20T00:00:00Z', '2026-03-21T00:00:00Z')).filter(
      (i) => i.uid === 'lunch1@google.com',
    );
    assert.equal(lunch.length, 1, 'one event');
    assert.equal(lunch[0]!.items.length, 2, `from Google and from the mail: ${lunch[0]!.items.join(', ')}`);
    assert.ok(lunch[0]!.items.some((i) => i.startsWith('google:')));
  });

  it('Google refusing: the sync fails naming the account, and health says so until a sync succeeds', async () => {
    const health = async () => (await serviceHealth(h.bus, 'calendar-sync', { timeoutMs: 10_000 })).problems ?? [];
    // A 400 is not retried (a 5xx is, with backoff, before the sync gives up the same way).
    h.google.fail({ path: /\/calendarList$/, times: 1, status: 400 });
    await assert.rejects(h.call(CalendarSync, { account: ACCOUNT }), new RegExp(`${ACCOUNT}: .*400`));
    assert.match((await health()).join('\n'), new RegExp(`^the calendar sync of ${ACCOUNT} fails since \\S+: .*400`));
    assert.equal((await sync()).changed, 0);
    assert.deepEqual(await health(), [], 'healthy once a sync succeeds');
  });
});
