import { test } from 'node:test';
import assert from 'node:assert/strict';
import { expandSeries, readCalendar, readVCards } from '@memex/icalendar';
import { appointmentIcs, contactVcf, type OutlookAppointment } from './outlook-calendar.js';

/** Minutes from 1601 to a wall-clock time, as Outlook counts local times. */
const minutes = (y: number, m: number, d: number, h = 0, mi = 0) =>
  (Date.UTC(y, m - 1, d, h, mi) - Date.UTC(1601, 0, 1)) / 60_000;

/** Little-endian fields, as the structures of [MS-OXOCAL] are laid out. */
function fields(...parts: Array<[16 | 32, number] | Buffer>): Buffer {
  return Buffer.concat(
    parts.map((part) => {
      if (Buffer.isBuffer(part)) return part;
      const bytes = Buffer.alloc(part[0] / 8);
      if (part[0] === 16) bytes.writeUInt16LE(part[1]);
      else bytes.writeInt32LE(part[1] | 0);
      return bytes;
    }),
  );
}

/** TZSTRUCT of Central European time: UTC+1, +2 from the last Sunday of March 02:00 to the last of October 03:00. */
const CENTRAL_EUROPE = fields(
  [32, -60],
  [32, 0],
  [32, -60],
  [16, 0],
  ...([0, 10, 0, 5, 3, 0, 0, 0].map((n) => [16, n]) as Array<[16, number]>),
  [16, 0],
  ...([0, 3, 0, 5, 2, 0, 0, 0].map((n) => [16, n]) as Array<[16, number]>),
);

/**
 * AppointmentRecurrencePattern of a review on the last Friday of each month, 09:00–10:00, from
 * 26 January 2024 until 28 June 2024; March's deleted, April's moved to Thursday 14:00 and renamed.
 */
function lastFridayReview(): Buffer {
  const subject = Buffer.from('Moved review', 'latin1');
  const location = Buffer.from('Room 2', 'latin1');
  return fields(
    [16, 0x3004],
    [16, 0x3004],
    [16, 0x200c], // monthly
    [16, 0x0004], // MonthNth
    [16, 0],
    [32, 0], // FirstDateTime
    [32, 1], // every month
    [32, 0],
    [32, 1 << 5], // Friday
    [32, 5], // the last
    [32, 0x2021], // ends after a date
    [32, 6],
    [32, 1], // weeks start on Monday
    [32, 2],
    [32, minutes(2024, 3, 29)],
    [32, minutes(2024, 4, 26)],
    [32, 1],
    [32, minutes(2024, 4, 25)],
    [32, minutes(2024, 1, 26)],
    [32, minutes(2024, 6, 28)],
    [32, 0x3006],
    [32, 0x3009],
    [32, 9 * 60],
    [32, 10 * 60],
    [16, 1],
    [32, minutes(2024, 4, 25, 14)],
    [32, minutes(2024, 4, 25, 15)],
    [32, minutes(2024, 4, 26, 9)],
    [16, 0x0001 | 0x0010],
    [16, subject.length + 1],
    [16, subject.length],
    subject,
    [16, location.length + 1],
    [16, location.length],
    location,
    [32, 0],
    [32, 0],
  );
}

const appointment = (changes: Partial<OutlookAppointment>): OutlookAppointment => ({
  uid: '040000008200E00074C5B7101A82E008',
  subject: 'Monthly review',
  location: 'Room 1',
  description: 'Numbers, then plans.',
  start: new Date('2024-01-26T08:00:00Z'),
  end: new Date('2024-01-26T09:00:00Z'),
  allDay: false,
  organizer: { name: 'Ann Lee', address: 'ann@example.com' },
  attendees: [{ name: 'Bob', address: 'bob@example.com', role: 'optional' }],
  categories: ['Work'],
  recurrence: null,
  timeZone: null,
  timeZoneName: '',
  recurrenceText: '',
  created: null,
  modified: new Date('2024-01-20T10:00:00Z'),
  ...changes,
});

test('an Outlook series: its rule, zone, deleted and moved occurrences, as iCalendar expands them', () => {
  const ics = appointmentIcs(
    appointment({
      recurrence: lastFridayReview(),
      timeZone: CENTRAL_EUROPE,
      timeZoneName: '(UTC+01:00) Amsterdam, Berlin, Bern, Rome, Stockholm, Vienna',
    }),
  );
  const calendar = readCalendar(ics);
  assert.deepEqual(calendar.warnings, []);
  const [series, moved] = calendar.events;
  assert.match(
    series!.recurrence!.rules[0]!,
    /^RRULE:FREQ=MONTHLY;INTERVAL=1;BYDAY=FR;BYSETPOS=-1;UNTIL=20240628T\d{6}Z$/,
  );
  assert.deepEqual(
    [series!.summary, series!.location, series!.organizer?.address, series!.attendees.map((a) => a.address)],
    ['Monthly review', 'Room 1', 'ann@example.com', ['bob@example.com']],
  );
  // 09:00 in Berlin: 08:00 UTC in winter, 07:00 in summer; March deleted; the rule ends with June.
  assert.deepEqual(
    expandSeries(series!.source!, new Date('2024-01-01'), new Date('2025-01-01')).occurrences.map((o) => o.start),
    [
      '2024-01-26T08:00:00.000Z',
      '2024-02-23T08:00:00.000Z',
      '2024-04-26T07:00:00.000Z',
      '2024-05-31T07:00:00.000Z',
      '2024-06-28T07:00:00.000Z',
    ],
  );
  assert.deepEqual(
    [moved!.recurrenceId, moved!.start, moved!.end, moved!.summary, moved!.location],
    ['2024-04-26T07:00:00.000Z', '2024-04-25T12:00:00.000Z', '2024-04-25T13:00:00.000Z', 'Moved review', 'Room 2'],
  );
});

test('an Outlook appointment that does not repeat is in UTC; an all-day one by its dates; a rule it cannot read is told in words', () => {
  const [single] = readCalendar(appointmentIcs(appointment({ attendees: [], organizer: null }))).events;
  assert.deepEqual(
    [single!.start, single!.end, single!.recurrence, single!.organizer],
    ['2024-01-26T08:00:00.000Z', '2024-01-26T09:00:00.000Z', null, null],
  );
  // Outlook keeps an all-day day from local midnight to midnight, in UTC (here UTC+10).
  const [holiday] = readCalendar(
    appointmentIcs(
      appointment({ allDay: true, start: new Date('2024-01-25T14:00:00Z'), end: new Date('2024-01-26T14:00:00Z') }),
    ),
  ).events;
  assert.deepEqual([holiday!.allDay, holiday!.startDate, holiday!.endDate], [true, '2024-01-26', '2024-01-27']);
  const [unread] = readCalendar(
    appointmentIcs(
      appointment({ recurrence: Buffer.from([0x04, 0x30]), recurrenceText: 'every Friday from 9:00 AM to 10:00 AM' }),
    ),
  ).events;
  assert.match(unread!.description, /Repeats every Friday from 9:00 AM to 10:00 AM\.$/);
});

test('an Outlook contact as a vCard: names, addresses, phones, birthday, note', () => {
  const [card] = readVCards(
    contactVcf({
      displayName: 'Dr. Ann Lee',
      givenName: 'Ann',
      middleName: '',
      surname: 'Lee',
      prefix: 'Dr.',
      suffix: '',
      nickname: 'Annie',
      company: 'Acme, Inc.',
      department: 'Research',
      title: 'Chief; Scientist, Research',
      emails: ['ann@acme.example', 'ann.lee@example.org'],
      phones: [
        { number: '+1 415 555 0100', types: ['WORK', 'VOICE'] },
        { number: '+1 415 555 0199', types: ['CELL', 'VOICE'] },
      ],
      addresses: [
        {
          types: ['WORK'],
          poBox: '',
          street: '1 Market St\nSuite 5',
          city: 'San Francisco',
          region: 'CA',
          postalCode: '94105',
          country: 'USA',
        },
      ],
      urls: ['https://acme.example/ann'],
      birthday: new Date('1980-05-01T00:00:00Z'),
      note: 'Met at the 2019 conference.',
      categories: ['Clients'],
      modified: null,
    }),
  );
  assert.deepEqual(
    [card!.fullName, card!.name?.given, card!.name?.family, card!.nicknames, card!.organization, card!.title],
    ['Dr. Ann Lee', 'Ann', 'Lee', ['Annie'], 'Acme, Inc., Research', 'Chief; Scientist, Research'],
  );
  assert.deepEqual(
    card!.emails.map((e) => e.address),
    ['ann@acme.example', 'ann.lee@example.org'],
  );
  assert.deepEqual(
    card!.phones.map((p) => [p.e164, p.types.includes('cell')]),
    [
      ['+14155550100', false],
      ['+14155550199', true],
    ],
  );
  assert.deepEqual(
    [card!.addresses[0]!.street, card!.addresses[0]!.locality, card!.birthday, card!.note, card!.categories],
    ['1 Market St\nSuite 5', 'San Francisco', '1980-05-01', 'Met at the 2019 conference.', ['Clients']],
  );
});
