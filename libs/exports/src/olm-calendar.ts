import { createHash } from 'node:crypto';
import { elementText, xmlParser } from './xml.js';
import {
  appointmentIcs,
  contactVcf,
  type OutlookAppointment,
  type OutlookContact,
  type StatedRule,
} from './outlook-calendar.js';

/**
 * The calendars and address books of an Outlook for Mac archive (.olm): XML files of
 * `<appointments><appointment>` and `<contacts><contact>`, one entry or many, their fields named
 * `OPFCalendarEvent…` and `OPFContact…` as Outlook for Mac names them. Each entry becomes the
 * iCalendar event or vCard a PST's would (see outlook-calendar.ts). Outlook keeps an .olm's times
 * in UTC, and a repeating appointment's rule as named parts (`OPFRecurrencePattern…`), not
 * Outlook's binary pattern.
 */

/** What a file of the archive holds, by its root element. */
export type OlmEntries =
  | { kind: 'appointments'; entries: OlmEntry[] }
  | { kind: 'contacts'; entries: OlmEntry[] }
  | { kind: 'other'; root: string | null };

/** One appointment or contact: its place in the file, and its file (or why it cannot be read). */
export interface OlmEntry {
  /** A stable name within the file: its UUID where Outlook gives one, else its position. */
  id: string;
  type: 'text/calendar' | 'text/vcard';
  bytes: Buffer | null;
  skipped?: string;
}

type Node = Record<string, unknown>;

const parser = xmlParser(['appointment', 'contact', 'appointmentAttendee', 'contactEmailAddress', 'category'], true);

/**
 * The appointments or contacts of an .olm's XML file, by what its root element holds
 * (`<appointments>` or `<contacts>`, whatever a version names its root); `other` for any other
 * file (a message, categories, settings).
 */
export function readOlmEntries(xml: string): OlmEntries {
  const parsed = parser.parse(xml) as Node;
  const root = Object.keys(parsed).find((name) => name !== '?xml') ?? null;
  const body = (root ? parsed[root] : null) as Node | string | null;
  const appointments = list(body, 'appointment');
  if (appointments.length > 0) return { kind: 'appointments', entries: appointments.map(appointmentEntry) };
  const contacts = list(body, 'contact');
  if (contacts.length > 0) return { kind: 'contacts', entries: contacts.map(contactEntry) };
  return { kind: 'other', root };
}

const list = (body: Node | string | null, name: string): Node[] =>
  typeof body === 'object' && body
    ? ((body[name] as Node[] | undefined) ?? []).map((n) => (typeof n === 'object' ? n : {}))
    : [];

/** An element's text (its `#text` when it has attributes too). */
function text(node: Node, name: string): string {
  return elementText(node[name]).trim();
}

const first = (node: Node, ...names: string[]) => names.map((name) => text(node, name)).find(Boolean) ?? '';
const yes = (value: string) => /^(1|true|yes)$/i.test(value);

/** An .olm time (`2022-05-26T17:55:40`, UTC unless it says otherwise), or null. */
export function olmDate(value: string): Date | null {
  if (!value) return null;
  const at = new Date(/[zZ]|[+-]\d\d:?\d\d$/.test(value) ? value : `${value}Z`);
  return Number.isNaN(at.getTime()) ? null : at;
}

/** HTML as its text, for a description or notes Outlook kept only as HTML. */
const htmlText = (html: string) =>
  html
    .replace(/<br\s*\/?>|<\/(p|div|li|tr)>/gi, '\n')
    .replace(/<[^>]+>/g, '')
    .replace(/&nbsp;/g, ' ')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&')
    .replace(/\n{3,}/g, '\n\n')
    .trim();

/** `Ann Lee <ann@example.com>`, `ann@example.com` or `"Ann Lee" <…>` as a name and an address. */
function mailbox(value: string): { name: string; address: string } | null {
  const match = /^\s*"?([^"<]*?)"?\s*<([^>]+)>\s*$/.exec(value);
  if (match) return { name: match[1]!.trim(), address: match[2]!.trim() };
  return /@/.test(value) ? { name: '', address: value.trim() } : null;
}

/** Every descendant element of a node, by name, flattened: Outlook nests a rule's parts at varying depths. */
function descendants(node: unknown, into = new Map<string, string>()): Map<string, string> {
  if (typeof node !== 'object' || !node) return into;
  for (const [name, value] of Object.entries(node as Node)) {
    if (typeof value === 'string') into.set(name, value.trim());
    else if (Array.isArray(value)) for (const each of value) descendants(each, into);
    else descendants(value, into);
  }
  return into;
}

const WEEKDAYS: [string, string][] = [
  ['Sunday', 'SU'],
  ['Monday', 'MO'],
  ['Tuesday', 'TU'],
  ['Wednesday', 'WE'],
  ['Thursday', 'TH'],
  ['Friday', 'FR'],
  ['Saturday', 'SA'],
];

/**
 * A repeating appointment's rule from its named parts, or null for none; `{ unread }` for a
 * pattern this does not know (the appointment keeps its first occurrence and says it repeats).
 */
function statedRule(appointment: Node, start: Date): StatedRule | { unread: string } | null {
  const recurring = appointment['OPFCalendarEventCopyRecurrence'];
  const parts = descendants(recurring ?? {});
  if (!recurring && !yes(text(appointment, 'OPFCalendarEventIsRecurring'))) return null;
  const type = (parts.get('OPFRecurrencePatternType') ?? '').replace(/^OPFRecurrencePattern/, '');
  const interval = Math.max(1, Number.parseInt(parts.get('OPFRecurrencePatternInterval') ?? '1', 10) || 1);
  const days = WEEKDAYS.filter(([name]) => yes(parts.get(`OPFRecurrencePattern${name}`) ?? '')).map(([, day]) => day);
  const dayOfMonth = parts.get('OPFRecurrencePatternDayOfMonth') || String(start.getUTCDate());
  const month = parts.get('OPFRecurrencePatternMonth') || String(start.getUTCMonth() + 1);
  const rule = (() => {
    switch (type) {
      case 'Daily':
        return `FREQ=DAILY;INTERVAL=${interval}`;
      case 'Weekly':
        return `FREQ=WEEKLY;INTERVAL=${interval};BYDAY=${(days.length > 0 ? days : [WEEKDAYS[start.getUTCDay()]![1]]).join(',')}`;
      case 'AbsoluteMonthly':
        return `FREQ=MONTHLY;INTERVAL=${interval};BYMONTHDAY=${dayOfMonth}`;
      case 'AbsoluteYearly':
        return `FREQ=YEARLY;INTERVAL=${interval};BYMONTH=${month};BYMONTHDAY=${dayOfMonth}`;
      default:
        return null;
    }
  })();
  if (!rule) return { unread: type ? `by Outlook's "${type}" pattern` : 'by a pattern the archive does not name' };
  const count = Number.parseInt(
    parts.get('OPFRecurrenceGetOccurenceCount') ?? parts.get('OPFRecurrenceGetOccurrenceCount') ?? '',
    10,
  );
  const until = olmDate(parts.get('OPFRecurrenceCopyEndDate') ?? '');
  return { rule, end: count > 0 ? { count } : until ? { until } : null };
}

/** A stable id for an entry Outlook gave no UUID: the file's own key plus its position. */
const positional = (index: number) => `#${index}`;

function appointmentEntry(node: Node, index: number): OlmEntry {
  const uuid = text(node, 'OPFCalendarEventCopyUUID');
  const id = uuid || positional(index);
  const start = olmDate(text(node, 'OPFCalendarEventCopyStartTime'));
  if (!start) return { id, type: 'text/calendar', bytes: null, skipped: 'an appointment without a start time' };
  const end = olmDate(text(node, 'OPFCalendarEventCopyEndTime')) ?? start;
  const organizer = mailbox(text(node, 'OPFCalendarEventCopyOrganizer'));
  const attendees = list(node['OPFCalendarEventCopyAttendeeList'] as Node | null, 'appointmentAttendee').flatMap(
    (attendee): OutlookAppointment['attendees'] => {
      const address = String(attendee['OPFCalendarAttendeeAddress'] ?? '').trim();
      const fromText = mailbox(String(attendee['#text'] ?? ''));
      const who = address ? { name: String(attendee['OPFCalendarAttendeeName'] ?? '').trim(), address } : fromText;
      if (!who) return [];
      const type = String(attendee['OPFCalendarAttendeeType'] ?? '');
      return [{ ...who, role: type === '2' ? 'optional' : type === '3' ? 'resource' : 'required' }];
    },
  );
  const rule = statedRule(node, start);
  const appointment: OutlookAppointment = {
    uid:
      uuid ||
      `olm-${createHash('sha256')
        .update(`${text(node, 'OPFCalendarEventCopySummary')}\n${start.toISOString()}`)
        .digest('hex')
        .slice(0, 32)}`,
    subject: text(node, 'OPFCalendarEventCopySummary'),
    location: text(node, 'OPFCalendarEventCopyLocation'),
    description:
      first(node, 'OPFCalendarEventCopyDescriptionPlain') || htmlText(text(node, 'OPFCalendarEventCopyDescription')),
    start,
    end,
    allDay: yes(text(node, 'OPFCalendarEventGetIsAllDayEvent')),
    organizer,
    attendees,
    categories: [],
    recurrence: null,
    timeZone: null,
    timeZoneName: '',
    recurrenceText: rule && 'unread' in rule ? rule.unread : '',
    ...(rule && !('unread' in rule) ? { stated: rule } : {}),
    created: null,
    modified: olmDate(text(node, 'OPFCalendarEventCopyModDate')),
  };
  return { id, type: 'text/calendar', bytes: Buffer.from(appointmentIcs(appointment)) };
}

/** A phone field's vCard types, by the words of its element's name (`OPFContactCopyBusinessFax`). */
function phoneTypes(name: string): string[] {
  const types = [
    /Business|Work|Company/i.test(name) ? 'WORK' : '',
    /Home/i.test(name) ? 'HOME' : '',
    /Cell|Mobile/i.test(name) ? 'CELL' : '',
    /Fax/i.test(name) ? 'FAX' : '',
    /Pager/i.test(name) ? 'PAGER' : '',
  ].filter(Boolean);
  return types.length > 0 ? types : ['VOICE'];
}

const ADDRESS_KINDS: [string, string][] = [
  ['Home', 'HOME'],
  ['Business', 'WORK'],
  ['Other', ''],
];

function contactEntry(node: Node, index: number): OlmEntry {
  const id = text(node, 'OPFContactExchangeID') || positional(index);
  const emails = [
    ...new Set(
      [
        'OPFContactCopyEmailAddressList',
        'OPFContactCopyEmailAddressList1',
        'OPFContactCopyEmailAddressList2',
        'OPFContactCopyDefaultEmailAddress',
      ]
        .flatMap((name) => list(node[name] as Node | null, 'contactEmailAddress'))
        .map((entry) => String(entry['OPFContactEmailAddressAddress'] ?? entry['#text'] ?? '').trim())
        .filter((address) => address.includes('@')),
    ),
  ];
  const fields = Object.keys(node).filter((name) => name.startsWith('OPFContactCopy') && text(node, name));
  const phones = fields
    .filter((name) => /(Phone|Fax|Pager)\d*$/i.test(name))
    .map((name) => ({ number: text(node, name), types: phoneTypes(name) }));
  const addresses = ADDRESS_KINDS.flatMap(([kind, type]) => {
    const part = (...names: string[]) => first(node, ...names.map((name) => `OPFContactCopy${kind}${name}`));
    const address = {
      types: type ? [type] : [],
      poBox: '',
      street: part('StreetAddress', 'AddressStreet', 'Street'),
      city: part('City', 'AddressCity'),
      region: part('State', 'AddressState', 'Region'),
      postalCode: part('Zip', 'ZipCode', 'PostalCode', 'AddressPostalCode'),
      country: part('Country', 'AddressCountry'),
    };
    return [address.street, address.city, address.region, address.postalCode, address.country].some(Boolean)
      ? [address]
      : [];
  });
  const contact: OutlookContact = {
    displayName: first(node, 'OPFContactCopyDisplayName'),
    givenName: first(node, 'OPFContactCopyFirstName'),
    middleName: first(node, 'OPFContactCopyMiddleName'),
    surname: first(node, 'OPFContactCopyLastName'),
    prefix: '',
    suffix: first(node, 'OPFContactCopySuffix'),
    nickname: first(node, 'OPFContactCopyNickName', 'OPFContactCopyNickname'),
    company: first(node, 'OPFContactCopyBusinessCompany', 'OPFContactCopyCompany'),
    department: first(node, 'OPFContactCopyBusinessDepartment', 'OPFContactCopyDepartment'),
    title: first(node, 'OPFContactCopyBusinessTitle', 'OPFContactCopyJobTitle'),
    emails,
    phones,
    addresses,
    urls: fields.filter((name) => /(WebPage|Website|HomePage)$/i.test(name)).map((name) => text(node, name)),
    birthday: olmDate(first(node, 'OPFContactCopyBirthday', 'OPFContactCopyBirthDate')),
    note: first(node, 'OPFContactCopyNotesPlain') || htmlText(text(node, 'OPFContactCopyNotes')),
    categories: [],
    modified: olmDate(text(node, 'OPFContactCopyModDate')),
  };
  if (!contact.displayName && !contact.givenName && !contact.surname && !contact.company && emails.length === 0)
    return { id, type: 'text/vcard', bytes: null, skipped: 'a contact with no name, company or address' };
  return { id, type: 'text/vcard', bytes: Buffer.from(contactVcf(contact)) };
}
