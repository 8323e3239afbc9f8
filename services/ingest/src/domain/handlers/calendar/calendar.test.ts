import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import ical, { type VEvent as NodeIcalEvent } from 'node-ical';
import { sharedFile, sharedSkip } from '@memex/testing';
import type { CalendarEvent } from '@memex/icalendar';
import type { CalendarItem, EmailItem } from '../handler.js';
import { withAttachment } from '../testing/build.js';
import { parseEmail, registry, rejection } from '../testing/parse.js';

const CORPUS = 'corpus/calendar';
const skip = sharedSkip(CORPUS);

function corpusFiles(): string[] {
  if (skip) return [];
  const root = sharedFile(CORPUS);
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.name.endsWith('.ics')) out.push(path.relative(root, full));
    }
  };
  walk(root);
  return out.sort();
}

async function parseIcs(bytes: Buffer | string): Promise<CalendarItem> {
  const item = await registry.parse({ type: 'text/calendar', bytes: Buffer.from(bytes) });
  assert.equal(item.kind, 'event');
  return item as CalendarItem;
}

/** Files of the corpus that hold no event or are not valid iCalendar, and the reason we give. */
const REJECTED: Record<string, RegExp> = {
  'node-ical/vfreebusy-zimbra.ics': /holds no event \(VEVENT\), only 1 VFREEBUSY/,
  'icalendar-py/bom_calendar.ics': /holds no event/,
};

/**
 * Where our reading differs from node-ical's on purpose, and why. Keyed by file; node-ical is the
 * independent reading every other event is checked against.
 */
const DIFFERENCES: Record<string, string> = {
  // DTEND before DTSTART on a moved instance: we end it at its start; node-ical keeps the end as written.
  'node-ical/daily-count-exdate-recurrence-id.ics': 'end before start',
  // VALUE=DATE with date-time values; DTEND equal to DTSTART: we read one day (RFC 5545 §3.6.1), node-ical none.
  'node-ical/festival-multiday-rrule.ics': 'malformed all-day dates',
  // Two DTSTART lines in one event: node-ical refuses the file, ical.js takes the first.
  'node-ical/large-file-with-late-error.ics': 'node-ical cannot read it',
  // Likewise two DTSTART lines (hand-checked below).
  'icalendar-py/pacific_fiji.ics': 'node-ical cannot read it',
  // `DTSTART;;VALUE=DATE-TIME`: node-ical reads no date, ical.js a floating time (hand-checked below).
  'icalendar-py/broken_ical.ics': 'node-ical cannot read its start',
};

function localDate(date: Date): string {
  return `${date.getFullYear()}-${String(date.getMonth() + 1).padStart(2, '0')}-${String(date.getDate()).padStart(2, '0')}`;
}

/** node-ical's events, masters and changed instances alike. */
function independentReading(text: string): NodeIcalEvent[] {
  const out: NodeIcalEvent[] = [];
  for (const component of Object.values(ical.sync.parseICS(text))) {
    if (component?.type !== 'VEVENT') continue;
    const event = component as NodeIcalEvent;
    out.push(event);
    for (const instance of new Set(Object.values(event.recurrences ?? {}))) out.push(instance as NodeIcalEvent);
  }
  return out;
}

/** The same event in node-ical's reading: same UID (when it has one) and the same RECURRENCE-ID. */
function counterpart(theirs: NodeIcalEvent[], ours: CalendarEvent): NodeIcalEvent | undefined {
  return theirs.find((t) => {
    if (t.uid && t.uid !== ours.uid) return false;
    if (!ours.recurrenceId)
      return !t.recurrenceid && (t.uid ? true : +new Date(t.start) === +new Date(ours.start) || ours.allDay);
    return (
      t.recurrenceid !== undefined &&
      (ours.allDay
        ? localDate(new Date(t.recurrenceid)) === ours.recurrenceId.slice(0, 10) ||
          +new Date(t.recurrenceid) === +new Date(ours.recurrenceId)
        : +new Date(t.recurrenceid) === +new Date(ours.recurrenceId))
    );
  });
}

describe('calendar: the shared corpus', { skip }, () => {
  for (const file of corpusFiles()) {
    it(`${file} parses with every event checked against node-ical, or is rejected with a reason`, async () => {
      const bytes = fs.readFileSync(sharedFile(`${CORPUS}/${file}`));
      const expectedRejection = REJECTED[file];
      if (expectedRejection) {
        assert.match((await rejection(parseIcs(bytes))).reason, expectedRejection);
        return;
      }
      const item = await parseIcs(bytes);
      assert.ok(item.meta.events.length + (item.meta.entries?.length ?? 0) > 0);
      for (const event of item.meta.events) {
        assert.ok(Date.parse(event.start) <= Date.parse(event.end), `${event.uid}: start after end`);
        assert.equal(event.allDay, event.startDate !== null);
      }
      if (DIFFERENCES[file]) return;
      const theirs = independentReading(bytes.toString('utf8'));
      for (const event of item.meta.events) {
        const label = `${file} ${event.uid}${event.recurrenceId ? ` @ ${event.recurrenceId}` : ''}`;
        const other = counterpart(theirs, event);
        assert.ok(other, `${label}: node-ical has no such event`);
        if (event.allDay) {
          // All-day events are days, not instants: node-ical puts them at local midnight.
          assert.equal(event.startDate, localDate(new Date(other.start)), `${label}: start day`);
          if (other.end) assert.equal(event.endDate, localDate(new Date(other.end)), `${label}: end day`);
        } else {
          assert.equal(event.start, new Date(other.start).toISOString(), `${label}: start`);
          if (other.end) assert.equal(event.end, new Date(other.end).toISOString(), `${label}: end`);
        }
      }
    });
  }
});

/** Values worked out by hand from each file's text and the zone's offset on that day. */
const HAND_CHECKED: Array<{
  file: string;
  uid: string;
  recurrenceId?: string;
  start: string;
  end: string;
  zone: string | null;
}> = [
  // 19:00–21:00 in Phoenix (UTC−7 all year, no DST).
  {
    file: 'node-ical/meetup-timed-tz.ics',
    uid: 'event_nsmxnyppbfc@meetup.com',
    start: '2011-11-10T02:00:00.000Z',
    end: '2011-11-10T04:00:00.000Z',
    zone: 'America/Phoenix',
  },
  // A moved instance at 14:00 in Kyiv in August (EEST, UTC+3).
  {
    file: 'node-ical/google-calendar-kiev-tz.ics',
    uid: '6m2q7kb2l02798oagemrcgm6pk@google.com',
    recurrenceId: '2016-08-26T11:00:00.000Z',
    start: '2016-08-26T11:00:00.000Z',
    end: '2016-08-26T12:00:00.000Z',
    zone: 'Europe/Kiev',
  },
  // Exchange's own zone, UTC+7: 09:00–12:00.
  {
    file: 'node-ical/exchange-custom-tz.ics',
    uid: '040000008200E00074C5B7101A82E00800000000C9AB6E5A6AFED401000000000000000010000000C55132227F0F0948A7D58F6190A3AEF9',
    start: '2019-04-30T02:00:00.000Z',
    end: '2019-04-30T05:00:00.000Z',
    zone: '(UTC+07:00) Bangkok, Hanoi, Jakarta',
  },
  // 15:00 in London on 23 October 2024 (BST, UTC+1).
  {
    file: 'icalendar-py/alarm_thunderbird_future.ics',
    uid: 'b9a23b47-f109-4e7a-908c-75e925b27def',
    start: '2024-10-23T14:00:00.000Z',
    end: '2024-10-23T15:00:00.000Z',
    zone: 'Europe/London',
  },
  // The file's own Fiji zone: UTC+12 in August 2014 (no DST then); no DTEND, so no duration.
  {
    file: 'icalendar-py/pacific_fiji.ics',
    uid: 'noend123',
    start: '2014-08-28T20:00:00.000Z',
    end: '2014-08-28T20:00:00.000Z',
    zone: 'custom_Pacific/Fiji',
  },
  // A floating time (no zone, no calendar zone) is read as UTC; a DTSTART alone lasts no time.
  {
    file: 'icalendar-py/broken_ical.ics',
    uid: 'abc',
    start: '2014-04-09T09:30:00.000Z',
    end: '2014-04-09T09:30:00.000Z',
    zone: null,
  },
  // No VTIMEZONE in the file: America/Los_Angeles comes from the IANA database (PDT, UTC−7).
  {
    file: 'node-ical/daily-count-exdate-recurrence-id.ics',
    uid: '0000001',
    start: '2015-07-06T19:00:00.000Z',
    end: '2015-07-06T20:00:00.000Z',
    zone: 'America/Los_Angeles',
  },
  // A Windows display name for a zone, without VTIMEZONE: US Eastern, EDT (UTC−4) in July.
  {
    file: 'node-ical/windows-quoted-tz-rrule.ics',
    uid: '0000001',
    start: '2015-07-06T16:00:00.000Z',
    end: '2015-07-06T20:00:00.000Z',
    zone: '(UTC-05:00) Eastern Time (US and Canada)',
  },
];

describe('calendar: hand-checked instants', { skip }, () => {
  for (const check of HAND_CHECKED) {
    it(`${check.file}: ${check.start} – ${check.end}`, async () => {
      const item = await parseIcs(fs.readFileSync(sharedFile(`${CORPUS}/${check.file}`)));
      const event = item.meta.events.find(
        (e) => e.uid === check.uid && e.recurrenceId === (check.recurrenceId ?? null),
      );
      assert.ok(event, `no event ${check.uid}`);
      assert.deepEqual(
        { start: event.start, end: event.end, zone: event.timeZone },
        { start: check.start, end: check.end, zone: check.zone },
      );
    });
  }

  it('keeps an all-day event as days across the October DST change in Berlin', async () => {
    const item = await parseIcs(
      fs.readFileSync(sharedFile(`${CORPUS}/node-ical/whole_day_moved_over_dst_change_berlin.ics`)),
    );
    const [series, moved] = item.meta.events;
    assert.deepEqual([series?.startDate, series?.endDate, series?.allDay], ['2024-10-27', '2024-10-28', true]);
    assert.deepEqual(series?.recurrence?.rules, ['RRULE:FREQ=DAILY;WKST=SU;COUNT=3']);
    assert.deepEqual(
      [moved?.recurrenceId, moved?.startDate, moved?.endDate],
      ['2024-10-28T00:00:00.000Z', '2024-10-30', '2024-10-31'],
    );
  });
});

const INVITE = [
  'BEGIN:VCALENDAR',
  'VERSION:2.0',
  'PRODID:-//test//invite//EN',
  'METHOD:REQUEST',
  'BEGIN:VEVENT',
  'UID:review-42@example.com',
  'SEQUENCE:1',
  'DTSTAMP:20260301T120000Z',
  'DTSTART;TZID=Europe/Paris:20260330T100000',
  'DTEND;TZID=Europe/Paris:20260330T110000',
  'SUMMARY:Quarterly review',
  'LOCATION:Room 4',
  'ORGANIZER;CN=Ada Lovelace:mailto:Ada@Example.com',
  'ATTENDEE;CN=Bob;PARTSTAT=NEEDS-ACTION;ROLE=REQ-PARTICIPANT:mailto:bob@example.com',
  'ATTENDEE;CN=Carol;PARTSTAT=ACCEPTED:mailto:carol@example.com',
  'END:VEVENT',
  'END:VCALENDAR',
  '',
].join('\r\n');

describe('calendar: invitations in mail', () => {
  it('reads the text/calendar part of a message as the invitation, with its method, zone and attendees', async () => {
    const mail: EmailItem = await parseEmail(
      withAttachment('You are invited.', {
        headers: ['Content-Type: text/calendar; method=REQUEST; charset=utf-8'],
        body: INVITE,
      }),
    );
    const part = mail.children?.find((c) => c.kind === 'attachment' && c.meta.parsedAs === 'calendar');
    assert.ok(part && part.kind === 'attachment' && part.meta.calendar, 'no calendar part');
    const calendar = part.meta.calendar;
    assert.equal(calendar.method, 'REQUEST');
    const [event] = calendar.events;
    // 10:00 in Paris on 30 March 2026 is already summer time (UTC+2): the change was on the 29th.
    assert.deepEqual(
      [event?.uid, event?.start, event?.end, event?.timeZone],
      ['review-42@example.com', '2026-03-30T08:00:00.000Z', '2026-03-30T09:00:00.000Z', 'Europe/Paris'],
    );
    assert.deepEqual(event?.organizer, { name: 'Ada Lovelace', address: 'ada@example.com' });
    assert.deepEqual(
      event?.attendees.map((a) => [a.address, a.status]),
      [
        ['bob@example.com', 'needs-action'],
        ['carol@example.com', 'accepted'],
      ],
    );
    assert.match(part.text, /Quarterly review/);
  });

  it('keeps a broken calendar part as an attachment and says why it is unreadable', async () => {
    const mail = await parseEmail(
      withAttachment('Hi', { headers: ['Content-Type: text/calendar'], body: 'BEGIN:VCALENDAR\r\nEND:VCALENDAR\r\n' }),
    );
    const part = mail.children?.[0];
    assert.ok(part?.kind === 'attachment');
    assert.equal(part.meta.parsedAs, null);
    assert.match(part.meta.unreadable ?? '', /holds no event/);
  });

  it('keeps to-dos and journal entries: a list of them alone is an item, found by what they say', async () => {
    const lines = (...body: string[]) => ['BEGIN:VCALENDAR', 'VERSION:2.0', ...body, 'END:VCALENDAR', ''].join('\r\n');
    const todos = await parseIcs(
      lines(
        'X-WR-TIMEZONE:Europe/Paris',
        'BEGIN:VTODO',
        'UID:t1',
        'SUMMARY:Renew the passport',
        'DUE:20240301T090000',
        'CATEGORIES:Admin,Travel',
        'END:VTODO',
        'BEGIN:VTODO',
        'UID:t2',
        'SUMMARY:Migrer le blog',
        'STATUS:COMPLETED',
        'COMPLETED:20130716T105745Z',
        'END:VTODO',
        'BEGIN:VJOURNAL',
        'UID:j1',
        'DTSTART;VALUE=DATE:20240110',
        'SUMMARY:Kick-off notes',
        'DESCRIPTION:Agreed on the rhubarb pilot.',
        'END:VJOURNAL',
      ),
    );
    assert.equal(todos.title, 'Renew the passport (and 2 more)');
    assert.equal(todos.meta.events.length, 0);
    assert.deepEqual(
      todos.meta.entries?.map((e) => [e.kind, e.summary, e.status, e.due, e.completed, e.categories]),
      [
        ['todo', 'Renew the passport', null, '2024-03-01T08:00:00.000Z', null, ['Admin', 'Travel']],
        ['todo', 'Migrer le blog', 'completed', null, '2013-07-16T10:57:45.000Z', []],
        ['journal', 'Kick-off notes', null, null, null, []],
      ],
    );
    assert.match(todos.text, /\[ \] Renew the passport\nAdmin, Travel/);
    assert.match(todos.text, /\[x\] Migrer le blog/);
    assert.match(todos.text, /rhubarb pilot/);
    assert.equal(todos.occurredAt, '2024-03-01T08:00:00.000Z');
    // Beside events, they are kept too.
    const mixed = await parseIcs(
      lines(
        'BEGIN:VEVENT',
        'UID:e1',
        'SUMMARY:Dentist',
        'DTSTART:20240105T100000Z',
        'END:VEVENT',
        'BEGIN:VTODO',
        'UID:t3',
        'SUMMARY:Floss',
        'END:VTODO',
      ),
    );
    assert.equal(mixed.title, 'Dentist');
    assert.deepEqual(
      mixed.meta.entries?.map((e) => e.summary),
      ['Floss'],
    );
    assert.match(mixed.text, /\[ \] Floss/);
  });

  it("reads Outlook's line whose quoted zone swallows its value (the whole file was refused)", async () => {
    const item = await parseIcs(
      [
        'BEGIN:VCALENDAR',
        'VERSION:2.0',
        'BEGIN:VEVENT',
        'UID:standup',
        'SUMMARY:Stand-up',
        'DTSTART;TZID="W. Europe Standard Time:20200609T090000"',
        'DTEND;TZID="(UTC+01:00) Amsterdam, Berlin, Bern, Rome, Stockholm, Vienna:20200609T093000"',
        // A line folded right after its quote (its value on the next line) is no such line.
        'DTSTAMP;X-ZONE="(UTC+01:00) Amsterdam, Berlin, Bern, Rome, Stockholm, Vienna"',
        ' :20200609T080000Z',
        'END:VEVENT',
        'END:VCALENDAR',
        '',
      ].join('\r\n'),
    );
    const [event] = item.meta.events;
    assert.deepEqual([event?.start, event?.end], ['2020-06-09T07:00:00.000Z', '2020-06-09T07:30:00.000Z']);
  });

  it('rejects a file that is not iCalendar, naming what it starts with', async () => {
    assert.match((await rejection(parseIcs('hello\r\n'))).reason, /not an iCalendar file: it starts with "hello"/);
  });
});
