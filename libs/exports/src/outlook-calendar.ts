/**
 * Outlook's calendar entries and contacts as the iCalendar and vCard files the memex's handlers
 * read. Outlook keeps an appointment's recurrence and time zone as binary structures
 * ([MS-OXOCAL] 2.2.1.44: AppointmentRecurrencePattern, TZSTRUCT); they are read here into RRULE,
 * EXDATE, exceptions (RECURRENCE-ID) and a VTIMEZONE.
 */

/** An appointment's fields, as read from an Outlook data file. */
export interface OutlookAppointment {
  /** Hex of PidLidGlobalObjectId (the UID of the invitations Outlook sends), else a stable id of the item. */
  uid: string;
  subject: string;
  location: string;
  description: string;
  start: Date;
  end: Date;
  allDay: boolean;
  organizer: { name: string; address: string } | null;
  attendees: Array<{ name: string; address: string; role: 'required' | 'optional' | 'resource' }>;
  categories: string[];
  /** PidLidAppointmentRecur, when the appointment repeats. */
  recurrence: Buffer | null;
  /** PidLidTimeZoneStruct, the zone a repeating appointment's times are in. */
  timeZone: Buffer | null;
  /** PidLidTimeZoneDescription: Outlook's name of that zone (`(UTC-07:00) Mountain Time (US & Canada)`). */
  timeZoneName: string;
  /** Outlook's own words for the recurrence (`every Monday from 10:00 AM to 11:00 AM`). */
  recurrenceText: string;
  /** The rule where the file states it in parts (an .olm's), over the appointment's own UTC times. */
  stated?: StatedRule;
  created: Date | null;
  modified: Date | null;
}

/** An RRULE's parts without its end, and its end. */
export interface StatedRule {
  rule: string;
  end: { count: number } | { until: Date } | null;
}

/** A contact's fields, as read from an Outlook data file. */
export interface OutlookContact {
  displayName: string;
  givenName: string;
  middleName: string;
  surname: string;
  prefix: string;
  suffix: string;
  nickname: string;
  company: string;
  department: string;
  title: string;
  emails: string[];
  phones: Array<{ number: string; types: string[] }>;
  addresses: Array<{
    types: string[];
    poBox: string;
    street: string;
    city: string;
    region: string;
    postalCode: string;
    country: string;
  }>;
  urls: string[];
  birthday: Date | null;
  note: string;
  categories: string[];
  modified: Date | null;
}

const MINUTE = 60_000;
/** Outlook counts minutes from 1601-01-01 (in local time for recurrence dates). */
const EPOCH_1601 = Date.UTC(1601, 0, 1);

/** A content line, escaped and folded at 75 octets (RFC 5545 3.1, 3.3.11; vCard alike). */
function contentLine(name: string, value: string, params = ''): string {
  const line = `${name}${params}:${value}`;
  const folded: string[] = [];
  let rest = Buffer.from(line);
  while (rest.length > 75) {
    let cut = folded.length === 0 ? 75 : 74;
    // Never inside a UTF-8 sequence.
    while ((rest[cut]! & 0xc0) === 0x80) cut--;
    folded.push(rest.subarray(0, cut).toString());
    rest = rest.subarray(cut);
  }
  folded.push(rest.toString());
  return folded.join('\r\n ');
}

const escapeText = (text: string) =>
  text.replace(/\\/g, '\\\\').replace(/;/g, '\\;').replace(/,/g, '\\,').replace(/\r?\n/g, '\\n');
const quoteParam = (value: string) => `"${value.replace(/"/g, "'")}"`;

const pad = (n: number, width = 2) => String(n).padStart(width, '0');
/** `20210809T100000`, the wall-clock fields of a date read as UTC (local times are kept so). */
const floating = (at: Date) =>
  `${pad(at.getUTCFullYear(), 4)}${pad(at.getUTCMonth() + 1)}${pad(at.getUTCDate())}T${pad(at.getUTCHours())}${pad(at.getUTCMinutes())}${pad(at.getUTCSeconds())}`;
const utc = (at: Date) => `${floating(at)}Z`;
const dateOnly = (at: Date) => floating(at).slice(0, 8);
/** Local minutes since 1601 as a date whose UTC fields are that wall-clock time. */
const local = (minutes: number) => new Date(EPOCH_1601 + minutes * MINUTE);

const DAYS = ['SU', 'MO', 'TU', 'WE', 'TH', 'FR', 'SA'];
const daysOf = (mask: number) => DAYS.filter((_, i) => mask & (1 << i));

/** A time zone from TZSTRUCT: offsets in minutes east of UTC, and when daylight time starts and ends. */
interface Zone {
  standard: number;
  daylight: number;
  /** SYSTEMTIME rules (month, week 1–5, weekday, hour, minute), or null for a zone without daylight time. */
  rules: { toStandard: TransitionRule; toDaylight: TransitionRule } | null;
}

interface TransitionRule {
  month: number;
  week: number;
  weekday: number;
  hour: number;
  minute: number;
}

function zoneOf(struct: Buffer): Zone | null {
  if (struct.length < 48) return null;
  const bias = struct.readInt32LE(0);
  const rule = (at: number): TransitionRule => ({
    month: struct.readUInt16LE(at + 2),
    weekday: struct.readUInt16LE(at + 4),
    week: struct.readUInt16LE(at + 6),
    hour: struct.readUInt16LE(at + 8),
    minute: struct.readUInt16LE(at + 10),
  });
  const toStandard = rule(14);
  const toDaylight = rule(32);
  return {
    standard: -(bias + struct.readInt32LE(4)),
    daylight: -(bias + struct.readInt32LE(8)),
    rules: toStandard.month === 0 || toDaylight.month === 0 ? null : { toStandard, toDaylight },
  };
}

const offsetText = (minutes: number) =>
  `${minutes < 0 ? '-' : '+'}${pad(Math.floor(Math.abs(minutes) / 60))}${pad(Math.abs(minutes) % 60)}`;

/** The VTIMEZONE of a zone, under `tzid`. */
function vtimezone(tzid: string, zone: Zone): string[] {
  const observance = (kind: 'STANDARD' | 'DAYLIGHT', from: number, to: number, rule: TransitionRule | null) => [
    `BEGIN:${kind}`,
    rule ? `DTSTART:1601${pad(rule.month)}01T${pad(rule.hour)}${pad(rule.minute)}00` : 'DTSTART:16010101T000000',
    ...(rule
      ? [`RRULE:FREQ=YEARLY;BYMONTH=${rule.month};BYDAY=${rule.week >= 5 ? -1 : rule.week}${DAYS[rule.weekday]}`]
      : []),
    `TZOFFSETFROM:${offsetText(from)}`,
    `TZOFFSETTO:${offsetText(to)}`,
    `END:${kind}`,
  ];
  return [
    'BEGIN:VTIMEZONE',
    contentLine('TZID', escapeText(tzid)),
    ...observance('STANDARD', zone.daylight, zone.standard, zone.rules?.toStandard ?? null),
    ...(zone.rules ? observance('DAYLIGHT', zone.standard, zone.daylight, zone.rules.toDaylight) : []),
    'END:VTIMEZONE',
  ];
}

/** A modified occurrence of a repeating appointment (ExceptionInfo). */
interface Exception {
  originalStart: Date;
  start: Date;
  end: Date;
  subject: string | null;
  location: string | null;
}

/** What an AppointmentRecurrencePattern says, as iCalendar parts (local times). */
interface Recurrence {
  /** The RRULE's parts, without its end; null for a pattern iCalendar has no rule for (Hijri calendars). */
  rule: string | null;
  end: { count: number } | { until: Date } | null;
  /** The first occurrence's start and end, local. */
  start: Date;
  end_: Date;
  /** Occurrences deleted (local start of each). */
  deleted: Date[];
  exceptions: Exception[];
}

const RECURRENCE_FREQUENCY: Record<number, string> = {
  0x200a: 'DAILY',
  0x200b: 'WEEKLY',
  0x200c: 'MONTHLY',
  0x200d: 'YEARLY',
};
const END_AFTER_DATE = 0x2021;
const END_AFTER_COUNT = 0x2022;

/** Reads an AppointmentRecurrencePattern ([MS-OXOCAL] 2.2.1.44.5); throws on one it cannot. */
function recurrenceOf(blob: Buffer): Recurrence {
  let at = 0;
  const u16 = () => ((at += 2), blob.readUInt16LE(at - 2));
  const u32 = () => ((at += 4), blob.readUInt32LE(at - 4));
  const text = () => {
    u16(); // its length with the terminator (unused)
    const length = u16();
    at += length;
    return blob.subarray(at - length, at).toString('latin1');
  };
  at = 4; // ReaderVersion, WriterVersion
  const frequency = RECURRENCE_FREQUENCY[u16()];
  const patternType = u16();
  const calendarType = u16();
  u32(); // FirstDateTime
  const period = u32();
  u32(); // SlidingFlag
  let days = 0;
  let day = 0;
  let nth = 0;
  if (patternType === 0x1) days = u32();
  else if (patternType === 0x2 || patternType === 0x3 || patternType === 0xa || patternType === 0xc) day = u32();
  else if (patternType === 0x4 || patternType === 0xb) [days, nth] = [u32(), u32()];
  const endType = u32();
  const occurrences = u32();
  const firstWeekday = u32();
  // Every occurrence deleted or changed, by the date it was on; then those changed, by the date they are on.
  const deleted = Array.from({ length: u32() }, u32);
  const modifiedCount = u32();
  at += 4 * modifiedCount;
  const startDate = u32();
  const endDate = u32();
  at += 8; // ReaderVersion2, WriterVersion2
  const startOffset = u32();
  const endOffset = u32();
  const changed = new Set<number>();
  const exceptions = Array.from({ length: u16() }, (): Exception => {
    const [start, end, originalStart] = [u32(), u32(), u32()];
    changed.add(originalStart - (originalStart % 1440));
    const flags = u16();
    const subject = flags & 0x0001 ? text() : null;
    if (flags & 0x0002) u32();
    if (flags & 0x0004) u32();
    if (flags & 0x0008) u32();
    const location = flags & 0x0010 ? text() : null;
    for (const flag of [0x0020, 0x0040, 0x0080, 0x0100]) if (flags & flag) u32();
    return { start: local(start), end: local(end), originalStart: local(originalStart), subject, location };
  });
  const first = local(startDate + startOffset);
  const parts = ((): string[] | null => {
    if (!frequency || calendarType !== 0 || patternType >= 0xa) return null;
    const weekStart = `WKST=${DAYS[firstWeekday] ?? 'SU'}`;
    const setpos = (n: number) => `BYSETPOS=${n >= 5 ? -1 : n}`;
    switch (patternType) {
      case 0x0:
        return ['FREQ=DAILY', `INTERVAL=${Math.max(1, Math.round(period / 1440))}`];
      case 0x1:
        return [`FREQ=WEEKLY`, `INTERVAL=${Math.max(1, period)}`, `BYDAY=${daysOf(days).join(',')}`, weekStart];
      default: {
        const yearly = frequency === 'YEARLY' || period % 12 === 0;
        const head = yearly
          ? ['FREQ=YEARLY', `INTERVAL=${Math.max(1, period / 12)}`, `BYMONTH=${first.getUTCMonth() + 1}`]
          : ['FREQ=MONTHLY', `INTERVAL=${Math.max(1, period)}`];
        if (patternType === 0x2) return [...head, `BYMONTHDAY=${day}`];
        if (patternType === 0x3) return [...head, 'BYMONTHDAY=-1'];
        return [...head, `BYDAY=${daysOf(days).join(',')}`, setpos(nth)];
      }
    }
  })();
  return {
    rule: parts?.join(';') ?? null,
    end:
      endType === END_AFTER_COUNT
        ? { count: occurrences }
        : endType === END_AFTER_DATE
          ? { until: local(endDate + startOffset) }
          : null,
    start: first,
    end_: local(startDate + endOffset),
    deleted: deleted.filter((date) => !changed.has(date)).map((date) => local(date + startOffset)),
    exceptions,
  };
}

/** A local time as UTC in `zone`, at most later than the true instant by the zones' difference (for an UNTIL). */
const latestUtc = (at: Date, zone: Zone | null) =>
  new Date(at.getTime() - Math.min(zone?.standard ?? 0, zone?.daylight ?? 0) * MINUTE);

/**
 * An appointment as an iCalendar file of one VEVENT (and one more for each occurrence moved or
 * changed): a repeating one in its own time zone with its rule, deleted occurrences as EXDATE; an
 * all-day one by dates. A recurrence it cannot read leaves the first occurrence, with Outlook's
 * words for the rule in its description.
 */
export function appointmentIcs(appointment: OutlookAppointment): string {
  const { uid, allDay } = appointment;
  let recurrence: Recurrence | null = null;
  let unreadRule = false;
  try {
    if (appointment.recurrence) recurrence = recurrenceOf(appointment.recurrence);
  } catch {
    unreadRule = true;
  }
  if (recurrence && !recurrence.rule) unreadRule = true;
  const stated = recurrence || unreadRule ? undefined : appointment.stated;
  // A repeating appointment whose rule is neither in Outlook's pattern nor stated: its first occurrence.
  if (!appointment.recurrence && !stated && appointment.recurrenceText) unreadRule = true;
  const zone = recurrence && appointment.timeZone ? zoneOf(appointment.timeZone) : null;
  const tzid = appointment.timeZoneName.trim() || 'Outlook';
  const lines = ['BEGIN:VCALENDAR', 'VERSION:2.0', 'PRODID:-//memex//Outlook data file//EN'];
  if (zone) lines.push(...vtimezone(tzid, zone));

  // A time of a repeating appointment is local (in its zone, or floating without one); else UTC.
  const at = (name: string, time: Date, isLocal: boolean) => {
    if (allDay) return contentLine(name, dateOnly(time), ';VALUE=DATE');
    if (!isLocal) return contentLine(name, utc(time));
    return zone ? contentLine(name, floating(time), `;TZID=${quoteParam(tzid)}`) : contentLine(name, floating(time));
  };
  // An all-day appointment Outlook keeps from local midnight to midnight, in UTC: the nearest midnights are its dates.
  const day = (time: Date) => new Date(Math.round(time.getTime() / 86_400_000) * 86_400_000);
  const [start, end, isLocal] = recurrence
    ? [recurrence.start, recurrence.end_, true]
    : allDay
      ? [day(appointment.start), day(appointment.end), false]
      : [appointment.start, appointment.end, false];
  const description = [
    appointment.description.trim(),
    unreadRule && appointment.recurrenceText ? `Repeats ${appointment.recurrenceText}.` : '',
  ]
    .filter(Boolean)
    .join('\n\n');

  const event = (body: string[]) => ['BEGIN:VEVENT', contentLine('UID', escapeText(uid)), ...body, 'END:VEVENT'];
  const stamp = contentLine('DTSTAMP', utc(appointment.modified ?? appointment.created ?? appointment.start));
  const summary = (subject: string) => (subject ? [contentLine('SUMMARY', escapeText(subject))] : []);
  const place = (location: string) => (location ? [contentLine('LOCATION', escapeText(location))] : []);
  const ruleEnd = ({ end }: StatedRule, until: (at: Date) => Date) => [
    ...(end && 'count' in end ? [`COUNT=${end.count}`] : []),
    ...(end && 'until' in end ? [`UNTIL=${allDay ? dateOnly(end.until) : utc(until(end.until))}`] : []),
  ];
  const rule = recurrence?.rule
    ? [recurrence.rule, ...ruleEnd({ rule: recurrence.rule, end: recurrence.end }, (at) => latestUtc(at, zone))].join(
        ';',
      )
    : stated && [stated.rule, ...ruleEnd(stated, (at) => at)].join(';');
  lines.push(
    ...event([
      stamp,
      at('DTSTART', start, isLocal),
      at('DTEND', end, isLocal),
      ...summary(appointment.subject),
      ...place(appointment.location),
      ...(description ? [contentLine('DESCRIPTION', escapeText(description))] : []),
      ...(appointment.categories.length > 0
        ? [contentLine('CATEGORIES', appointment.categories.map(escapeText).join(','))]
        : []),
      ...(appointment.organizer
        ? [
            contentLine(
              'ORGANIZER',
              `mailto:${appointment.organizer.address}`,
              appointment.organizer.name && appointment.organizer.name !== appointment.organizer.address
                ? `;CN=${quoteParam(appointment.organizer.name)}`
                : '',
            ),
          ]
        : []),
      ...appointment.attendees.map((attendee) =>
        contentLine(
          'ATTENDEE',
          `mailto:${attendee.address}`,
          `${attendee.name && attendee.name !== attendee.address ? `;CN=${quoteParam(attendee.name)}` : ''};ROLE=${
            attendee.role === 'optional'
              ? 'OPT-PARTICIPANT'
              : attendee.role === 'resource'
                ? 'NON-PARTICIPANT'
                : 'REQ-PARTICIPANT'
          }${attendee.role === 'resource' ? ';CUTYPE=RESOURCE' : ''}`,
        ),
      ),
      ...(rule ? [contentLine('RRULE', rule)] : []),
      ...(recurrence?.rule ? recurrence.deleted.map((deleted) => at('EXDATE', deleted, true)) : []),
    ]),
  );
  if (recurrence?.rule)
    for (const exception of recurrence.exceptions)
      lines.push(
        ...event([
          stamp,
          at('RECURRENCE-ID', exception.originalStart, true),
          at('DTSTART', exception.start, true),
          at('DTEND', exception.end, true),
          ...summary(exception.subject ?? appointment.subject),
          ...place(exception.location ?? appointment.location),
        ]),
      );
  lines.push('END:VCALENDAR');
  return `${lines.join('\r\n')}\r\n`;
}

/** A contact as a vCard 3.0. */
export function contactVcf(contact: OutlookContact): string {
  // A semicolon is escaped only where it separates parts (N, ADR, ORG), as vCard readers expect.
  const text = (value: string) => value.replace(/\\/g, '\\\\').replace(/,/g, '\\,').replace(/\r?\n/g, '\\n');
  const structured = (...parts: string[]) => parts.map(escapeText).join(';');
  const name = [contact.prefix, contact.givenName, contact.middleName, contact.surname, contact.suffix]
    .filter(Boolean)
    .join(' ');
  const fullName = contact.displayName || name || contact.company || contact.emails[0] || 'Outlook contact';
  const types = (list: string[]) => (list.length > 0 ? `;TYPE=${list.join(',')}` : '');
  const lines = [
    'BEGIN:VCARD',
    'VERSION:3.0',
    contentLine('FN', text(fullName)),
    contentLine(
      'N',
      structured(contact.surname, contact.givenName, contact.middleName, contact.prefix, contact.suffix),
    ),
    ...(contact.nickname ? [contentLine('NICKNAME', text(contact.nickname))] : []),
    ...(contact.company || contact.department
      ? [contentLine('ORG', structured(contact.company, ...(contact.department ? [contact.department] : [])))]
      : []),
    ...(contact.title ? [contentLine('TITLE', text(contact.title))] : []),
    ...contact.emails.map((email, i) => contentLine('EMAIL', text(email), `;TYPE=INTERNET${i === 0 ? ',PREF' : ''}`)),
    ...contact.phones.map((phone) => contentLine('TEL', text(phone.number), types(phone.types))),
    ...contact.addresses.map((a) =>
      contentLine('ADR', structured(a.poBox, '', a.street, a.city, a.region, a.postalCode, a.country), types(a.types)),
    ),
    ...contact.urls.map((url) => contentLine('URL', url)),
    ...(contact.birthday
      ? [contentLine('BDAY', dateOnly(contact.birthday).replace(/(\d{4})(\d\d)(\d\d)/, '$1-$2-$3'))]
      : []),
    ...(contact.note.trim() ? [contentLine('NOTE', text(contact.note.trim()))] : []),
    ...(contact.categories.length > 0 ? [contentLine('CATEGORIES', contact.categories.map(text).join(','))] : []),
    ...(contact.modified ? [contentLine('REV', utc(contact.modified))] : []),
    'END:VCARD',
  ];
  return `${lines.join('\r\n')}\r\n`;
}
