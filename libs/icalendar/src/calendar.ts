import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import ICAL from 'ical.js';
import { tzlib_get_ical_block, tzlib_get_timezones } from 'timezones-ical-library';

/** A file or part that is not a calendar we can read; `reason` is written for the sender. */
export class CalendarFormatError extends Error {
  constructor(readonly reason: string) {
    super(reason);
    this.name = 'CalendarFormatError';
  }
}

export interface CalendarPerson {
  name: string;
  /** The mail address, lowercase, without `mailto:` ('' when the value is not a mail address). */
  address: string;
}

export type AttendeeStatus = 'needs-action' | 'accepted' | 'declined' | 'tentative' | 'delegated';

export interface Attendee extends CalendarPerson {
  status: AttendeeStatus;
  /** REQ-PARTICIPANT, OPT-PARTICIPANT, CHAIR, NON-PARTICIPANT (lowercase). */
  role: string;
}

/** One VEVENT: a single event, a recurring series' master, or one changed or cancelled instance of a series. */
export interface CalendarEvent {
  uid: string;
  /** Set on a changed (or cancelled) instance of a series: the instance's original start, an ISO instant. */
  recurrenceId: string | null;
  sequence: number;
  status: 'confirmed' | 'tentative' | 'cancelled';
  summary: string;
  description: string;
  location: string;
  /** Start and end as UTC instants (ISO 8601). */
  start: string;
  end: string;
  /** An all-day event: `startDate`/`endDate` (end exclusive) are its days; its instants are those days' midnights in `timeZone` (else UTC). */
  allDay: boolean;
  startDate: string | null;
  endDate: string | null;
  /** The IANA (or the file's own) zone the event was written in; null for UTC or floating times. */
  timeZone: string | null;
  /** RRULE/RDATE/EXDATE as written, when the event is a recurring series' master. */
  recurrence: { rules: string[]; rdates: string[]; exdates: string[] } | null;
  /** A self-contained VCALENDAR (this master and the zones it uses) to expand the series from; only on a series' master. */
  source: string | null;
  organizer: CalendarPerson | null;
  attendees: Attendee[];
  /** TRANSP:TRANSPARENT, or an all-day event without TRANSP: it does not make its time busy. */
  transparent: boolean;
  url: string | null;
}

/**
 * A to-do (VTODO) or a journal entry (VJOURNAL): what it says and when, not scheduled time (Apple's
 * Reminders, Thunderbird's tasks, a Nextcloud tasks list export).
 */
export interface CalendarEntry {
  kind: 'todo' | 'journal';
  uid: string | null;
  summary: string;
  description: string;
  /** STATUS, lowercase (needs-action, completed, in-process, cancelled; draft, final), or null. */
  status: string | null;
  categories: string[];
  /** DTSTART (a journal entry's date), DUE and COMPLETED as UTC instants, or null. */
  start: string | null;
  due: string | null;
  completed: string | null;
}

export interface ParsedCalendar {
  /** METHOD (REQUEST, REPLY, CANCEL, PUBLISH...), uppercase, or null for a plain calendar file. */
  method: string | null;
  /** X-WR-CALNAME, when the file names its calendar. */
  name: string | null;
  /** X-WR-TIMEZONE: the calendar's zone, used for floating times and all-day days. */
  timeZone: string | null;
  events: CalendarEvent[];
  /** Its to-dos and journal entries, in order. */
  entries: CalendarEntry[];
  /** Components other than events and zones (VTODO, VJOURNAL, VFREEBUSY), counted by name. */
  otherComponents: Record<string, number>;
  warnings: string[];
}

const MAX_EVENTS = 100_000;

/** The VTIMEZONE of an IANA zone, from the timezones-ical-library package; null when the name is not one. */
let ianaNames: Set<string> | null = null;
/** Parsed VTIMEZONEs by IANA name (jCal, copied for each calendar that needs one): a sync reads thousands of events in a few zones. */
const ianaZones = new Map<string, unknown[] | null>();

function ianaZone(tzid: string): ICAL.Component | null {
  ianaNames ??= new Set(tzlib_get_timezones() as string[]);
  // The library logs to the console for names it does not know: ask only about names it has.
  if (!ianaNames.has(tzid)) return null;
  if (!ianaZones.has(tzid)) {
    try {
      const block = tzlib_get_ical_block(tzid);
      const text = Array.isArray(block) ? block[0] : undefined;
      ianaZones.set(tzid, text?.startsWith('BEGIN:VTIMEZONE') ? (ICAL.parse(text) as unknown[]) : null);
    } catch {
      ianaZones.set(tzid, null);
    }
  }
  const jcal = ianaZones.get(tzid);
  return jcal ? new ICAL.Component(structuredClone(jcal)) : null;
}

let windowsNames: Record<string, { iana: string[] }> | null = null;

/**
 * The IANA zone of a Windows zone name, by id ("Eastern Standard Time") or by display name
 * ("(UTC-05:00) Eastern Time (US & Canada)"), as Outlook and Exchange write TZIDs. The table is
 * the one node-ical ships (windowsZones.json, from CLDR and Windows' display names).
 */
function windowsZone(tzid: string): string | null {
  if (!windowsNames) {
    const packageJson = createRequire(import.meta.url).resolve('node-ical/package.json');
    windowsNames = JSON.parse(
      fs.readFileSync(path.join(path.dirname(packageJson), 'windowsZones.json'), 'utf8'),
    ) as Record<string, { iana: string[] }>;
  }
  return windowsNames[tzid.replace(/^"|"$/g, '')]?.iana[0] ?? null;
}

/** A VTIMEZONE for a TZID the file does not define: the IANA zone of that name, or of that Windows name, under the file's TZID. */
function zoneFor(tzid: string): ICAL.Component | null {
  const iana = ianaZone(tzid) ?? (windowsZone(tzid) ? ianaZone(windowsZone(tzid)!) : null);
  if (!iana) return null;
  iana.updatePropertyWithValue('tzid', tzid);
  return iana;
}

/** Adds a VTIMEZONE for each TZID the file uses but does not define, when the TZID names a known zone. */
function completeZones(root: ICAL.Component, extra: string[], warnings: string[]): void {
  const defined = new Set(root.getAllSubcomponents('vtimezone').map((z) => String(z.getFirstPropertyValue('tzid'))));
  const used = new Set(extra);
  for (const event of root.getAllSubcomponents('vevent')) {
    for (const prop of event.getAllProperties()) {
      const tzid = prop.getParameter('tzid');
      if (typeof tzid === 'string' && tzid !== '') used.add(tzid);
    }
  }
  for (const tzid of used) {
    if (defined.has(tzid)) continue;
    const zone = zoneFor(tzid);
    if (zone) root.addSubcomponent(zone);
    else
      warnings.push(
        `time zone ${JSON.stringify(tzid)} is neither defined in the file nor an IANA or Windows zone: its times are read as UTC`,
      );
  }
}

function text(component: ICAL.Component, name: string): string {
  const value = component.getFirstPropertyValue(name);
  return value === null || value === undefined ? '' : String(value).trim();
}

function person(prop: ICAL.Property): CalendarPerson {
  const value = String(prop.getFirstValue() ?? '').trim();
  const address = /^mailto:/i.test(value)
    ? value.slice(7).trim().toLowerCase()
    : value.includes('@')
      ? value.toLowerCase()
      : '';
  const cn = prop.getParameter('cn');
  return { name: typeof cn === 'string' ? cn.trim() : '', address };
}

const STATUSES: Record<string, AttendeeStatus> = {
  'NEEDS-ACTION': 'needs-action',
  ACCEPTED: 'accepted',
  DECLINED: 'declined',
  TENTATIVE: 'tentative',
  DELEGATED: 'delegated',
};

function attendee(prop: ICAL.Property): Attendee {
  const partstat = String(prop.getParameter('partstat') ?? 'NEEDS-ACTION').toUpperCase();
  const role = String(prop.getParameter('role') ?? 'REQ-PARTICIPANT').toLowerCase();
  return { ...person(prop), status: STATUSES[partstat] ?? 'needs-action', role };
}

/**
 * A time as a UTC instant. Floating times (no zone) are read in the calendar's zone when it has one
 * (X-WR-TIMEZONE), else as UTC: a server cannot know the reader's wall clock.
 */
export function instant(time: ICAL.Time, defaultZone: ICAL.Timezone | null): Date {
  const zone = time.zone;
  const floating = !zone || zone.tzid === 'floating' || zone === ICAL.Timezone.localTimezone;
  if (floating || time.isDate) {
    const local = time.clone();
    local.isDate = false;
    local.zone = defaultZone ?? ICAL.Timezone.utcTimezone;
    return local.toJSDate();
  }
  return time.toJSDate();
}

function isoDate(time: ICAL.Time): string {
  return `${String(time.year).padStart(4, '0')}-${String(time.month).padStart(2, '0')}-${String(time.day).padStart(2, '0')}`;
}

function zoneName(time: ICAL.Time): string | null {
  const tzid = time.zone?.tzid;
  return tzid && tzid !== 'UTC' && tzid !== 'floating' && tzid !== 'Z' ? tzid : null;
}

function valuesOf(component: ICAL.Component, name: string): string[] {
  return component.getAllProperties(name).map((p) => p.toICALString());
}

/** A VCALENDAR holding this master and the zones it names: enough for ical.js to expand the series anywhere. */
function seriesSource(root: ICAL.Component, vevent: ICAL.Component): string {
  const calendar = new ICAL.Component(['vcalendar', [], []]);
  calendar.addPropertyWithValue('version', '2.0');
  calendar.addPropertyWithValue('prodid', '-//memex//series//EN');
  const calendarZone = root.getFirstPropertyValue('x-wr-timezone');
  if (calendarZone) calendar.addPropertyWithValue('x-wr-timezone', String(calendarZone));
  const tzids = new Set<string>(calendarZone ? [String(calendarZone)] : []);
  for (const prop of vevent.getAllProperties()) {
    const tzid = prop.getParameter('tzid');
    if (typeof tzid === 'string') tzids.add(tzid);
  }
  for (const zone of root.getAllSubcomponents('vtimezone')) {
    if (tzids.has(String(zone.getFirstPropertyValue('tzid'))))
      calendar.addSubcomponent(new ICAL.Component(structuredClone(zone.toJSON())));
  }
  calendar.addSubcomponent(new ICAL.Component(structuredClone(vevent.toJSON())));
  return calendar.toString();
}

function readEvent(
  root: ICAL.Component,
  vevent: ICAL.Component,
  defaultZone: ICAL.Timezone | null,
  index: number,
): CalendarEvent {
  const where = `VEVENT ${index + 1}`;
  if (!vevent.hasProperty('dtstart')) throw new CalendarFormatError(`${where} has no DTSTART`);
  // RFC 5545 requires a UID, but exports without one exist: the same VEVENT text always gets the same one.
  const uid = text(vevent, 'uid') || `memex-sha256:${createHash('sha256').update(vevent.toString()).digest('hex')}`;
  const event = new ICAL.Event(vevent, { strictExceptions: false, exceptions: [] });
  const startTime = event.startDate;
  const endTime = event.endDate ?? startTime;
  if (!startTime) throw new CalendarFormatError(`${where} (UID ${uid}) has an unreadable DTSTART`);
  const allDay = startTime.isDate;
  const start = instant(startTime, defaultZone);
  let end = instant(endTime, defaultZone);
  if (end < start) end = start;
  const status = text(vevent, 'status').toUpperCase();
  const transp = text(vevent, 'transp').toUpperCase();
  const recurring = event.isRecurring() && !event.isRecurrenceException();
  const recurrenceId = vevent.hasProperty('recurrence-id')
    ? instant(event.recurrenceId, defaultZone).toISOString()
    : null;
  const organizer = vevent.getFirstProperty('organizer');
  const sequence = Number(vevent.getFirstPropertyValue('sequence') ?? 0);
  const rawUrl = text(vevent, 'url');
  return {
    uid,
    recurrenceId,
    sequence: Number.isFinite(sequence) ? sequence : 0,
    status: status === 'CANCELLED' ? 'cancelled' : status === 'TENTATIVE' ? 'tentative' : 'confirmed',
    summary: text(vevent, 'summary'),
    description: text(vevent, 'description'),
    location: text(vevent, 'location'),
    start: start.toISOString(),
    end: end.toISOString(),
    allDay,
    startDate: allDay ? isoDate(startTime) : null,
    endDate: allDay ? isoDate(endTime) : null,
    timeZone: allDay ? (defaultZone?.tzid ?? null) : zoneName(startTime),
    recurrence: recurring
      ? { rules: valuesOf(vevent, 'rrule'), rdates: valuesOf(vevent, 'rdate'), exdates: valuesOf(vevent, 'exdate') }
      : null,
    source: recurring ? seriesSource(root, vevent) : null,
    organizer: organizer ? person(organizer) : null,
    attendees: vevent.getAllProperties('attendee').map(attendee),
    transparent: transp === 'TRANSPARENT' || (transp === '' && allDay),
    url: rawUrl || null,
  };
}

const ENTRY_KINDS: Readonly<Record<string, CalendarEntry['kind']>> = { vtodo: 'todo', vjournal: 'journal' };

/** A VTODO or VJOURNAL as what it says: its times in the calendar's zone when floating, a bad one left out. */
function readEntry(component: ICAL.Component, defaultZone: ICAL.Timezone | null): CalendarEntry {
  const time = (name: string): string | null => {
    try {
      const value = component.getFirstPropertyValue(name);
      return value instanceof ICAL.Time ? instant(value, defaultZone).toISOString() : null;
    } catch {
      return null;
    }
  };
  return {
    kind: ENTRY_KINDS[component.name]!,
    uid: text(component, 'uid') || null,
    summary: text(component, 'summary'),
    description: text(component, 'description'),
    status: text(component, 'status').toLowerCase() || null,
    categories: component
      .getAllProperties('categories')
      .flatMap((p) => p.getValues().map((v) => String(v).trim()))
      .filter(Boolean),
    start: time('dtstart'),
    due: time('due'),
    completed: time('completed'),
  };
}

/** The top components of an iCalendar or vCard text (a file may hold several), by ical.js. */
export function parseComponents(text: string, format: 'iCalendar' | 'vCard'): ICAL.Component[] {
  let parsed: unknown;
  try {
    parsed = ICAL.parse(text);
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    throw new CalendarFormatError(`not a readable ${format} file: ${why}`);
  }
  // One component parses to its jCal array, several to an array of them.
  const list = (
    Array.isArray(parsed) && typeof parsed[0] === 'string' ? [parsed] : (parsed as unknown[])
  ) as unknown[][];
  return list.map((jcal) => new ICAL.Component(jcal));
}

/**
 * Outlook has written `DTSTART;TZID="W. Europe Standard Time:20200609T090000"`: the quote closes
 * after the value, so the line has no value and ical.js refuses the whole file (node-ical keeps
 * one among its tests). A whole line (not one folded on, whose value may follow on the next)
 * whose only colons are inside a quoted parameter gets the quote closed before its last colon.
 */
function closeSwallowingQuotes(text: string): string {
  // The line break is matched (not `$`, which in JavaScript also stops before a CR) so that a line
  // folded on is told by the space that starts the next.
  return text.replace(/^([^\r\n:"]*;[^\r\n:"=]+=)"([^"\r\n]*):([^":\r\n]*)"[ \t]*(\r?\n)(?![ \t])/gm, '$1"$2":$3$4');
}

/** The VCALENDAR components of a text (a file may hold several), or a reason why it holds none. */
function parseRoots(input: string): ICAL.Component[] {
  const body = closeSwallowingQuotes(input.replace(/^\uFEFF/, ''));
  if (!/^\s*BEGIN:VCALENDAR/i.test(body)) {
    const first = body.trim().split(/\r?\n/, 1)[0] ?? '';
    throw new CalendarFormatError(
      `not an iCalendar file: it starts with ${JSON.stringify(first.slice(0, 40))} instead of BEGIN:VCALENDAR`,
    );
  }
  const roots = parseComponents(body, 'iCalendar');
  const wrong = roots.find((r) => r.name !== 'vcalendar');
  if (wrong)
    throw new CalendarFormatError(
      `not an iCalendar file: its top component is ${wrong.name.toUpperCase()}, not VCALENDAR`,
    );
  return roots;
}

/**
 * Reads an iCalendar text (RFC 5545) with ical.js: every VEVENT with its instants, zones, attendees
 * and recurrence. Zones the file names but does not define are taken from the IANA database when
 * the name is an IANA zone; its to-dos and journal entries as what they say. A VEVENT without UID
 * or DTSTART rejects the file; so does a file with no event, to-do or journal entry at all (its
 * other components are named in the reason).
 */
export function readCalendar(input: string): ParsedCalendar {
  const roots = parseRoots(input);
  const warnings: string[] = [];
  const events: CalendarEvent[] = [];
  const entries: CalendarEntry[] = [];
  const otherComponents: Record<string, number> = {};
  let method: string | null = null;
  let name: string | null = null;
  let timeZone: string | null = null;
  for (const root of roots) {
    const calendarZone = text(root, 'x-wr-timezone') || null;
    completeZones(root, calendarZone ? [calendarZone] : [], warnings);
    const defaultZone = calendarZone ? root.getTimeZoneByID(calendarZone) : null;
    method ??= text(root, 'method').toUpperCase() || null;
    name ??= text(root, 'x-wr-calname') || null;
    timeZone ??= calendarZone;
    const vevents = root.getAllSubcomponents('vevent');
    if (events.length + vevents.length > MAX_EVENTS) {
      throw new CalendarFormatError(`the calendar holds more than ${MAX_EVENTS} events: split it into several files`);
    }
    vevents.forEach((vevent, i) => events.push(readEvent(root, vevent, defaultZone, events.length + i)));
    for (const sub of root.getAllSubcomponents()) {
      if (sub.name === 'vevent' || sub.name === 'vtimezone') continue;
      if (ENTRY_KINDS[sub.name]) entries.push(readEntry(sub, defaultZone));
      otherComponents[sub.name.toUpperCase()] = (otherComponents[sub.name.toUpperCase()] ?? 0) + 1;
    }
  }
  if (events.length === 0 && entries.length === 0) {
    const others = Object.entries(otherComponents).map(([n, c]) => `${c} ${n}`);
    throw new CalendarFormatError(
      `the calendar holds no event (VEVENT)${others.length > 0 ? `, only ${others.join(', ')}` : ''}: nothing to import`,
    );
  }
  return { method, name, timeZone, events, entries, otherComponents, warnings };
}
