import { readCalendar, type CalendarEvent } from '@memex/icalendar';
import type { calendar_v3 } from '@memex/google';

type GoogleTime = calendar_v3.Schema$EventDateTime;

const RESPONSES: Record<string, string> = {
  needsAction: 'NEEDS-ACTION',
  accepted: 'ACCEPTED',
  declined: 'DECLINED',
  tentative: 'TENTATIVE',
};

/** `20260316T090000` for an instant's wall-clock time in an IANA zone. */
function wallClock(instant: Date, zone: string): string {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    })
      .formatToParts(instant)
      .map((p) => [p.type, p.value]),
  );
  return `${parts.year}${parts.month}${parts.day}T${parts.hour}${parts.minute}${parts.second}`;
}

/** A DTSTART-like content line for a Calendar v3 time: a day, a time in its zone, or UTC. */
function timeLine(name: string, time: GoogleTime | undefined, fallbackZone: string | null): string | null {
  if (!time) return null;
  if (time.date) return `${name};VALUE=DATE:${time.date.replace(/-/g, '')}`;
  if (!time.dateTime) return null;
  const instant = new Date(time.dateTime);
  const zone = time.timeZone ?? fallbackZone;
  if (zone) {
    try {
      return `${name};TZID=${zone}:${wallClock(instant, zone)}`;
    } catch {
      // A zone Intl does not know: the instant in UTC is still right.
    }
  }
  return `${name}:${instant
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}/, '')}`;
}

function text(value: string): string {
  return value
    .replace(/\\/g, '\\\\')
    .replace(/\r?\n/g, '\\n')
    .replace(/[,;]/g, (c) => `\\${c}`);
}

function person(
  name: string,
  entry: { email?: string | null; displayName?: string | null },
  params: string[] = [],
): string {
  const cn = entry.displayName ? [`CN="${entry.displayName.replace(/"/g, "'")}"`] : [];
  return `${[name, ...cn, ...params].join(';')}:mailto:${entry.email ?? ''}`;
}

/**
 * A Calendar v3 event in the calendar's common form: written as the VEVENT Google would export
 * (DTSTART in its zone, RRULE/EXDATE/RDATE as given, RECURRENCE-ID for a changed or cancelled
 * instance) and read back by the same ical.js reading as a calendar file, so a synced event and
 * an imported one are one thing. `masterUid` names the series when an instance omits its iCalUID.
 */
export function fromGoogleEvent(
  event: calendar_v3.Schema$Event,
  calendarZone: string | null,
  masterUid?: string,
): CalendarEvent {
  const uid = event.iCalUID ?? masterUid ?? `${event.recurringEventId ?? event.id}@google.com`;
  const zone = event.start?.timeZone ?? calendarZone;
  const lines = [
    'BEGIN:VCALENDAR',
    'VERSION:2.0',
    'PRODID:-//memex//google calendar//EN',
    'BEGIN:VEVENT',
    `UID:${uid}`,
    `SEQUENCE:${event.sequence ?? 0}`,
    `STATUS:${(event.status ?? 'confirmed').toUpperCase()}`,
    timeLine('DTSTART', event.start ?? event.originalStartTime ?? undefined, zone),
    timeLine('DTEND', event.end ?? undefined, zone),
    event.recurringEventId ? timeLine('RECURRENCE-ID', event.originalStartTime ?? undefined, zone) : null,
    ...(event.recurrence ?? []),
    event.summary ? `SUMMARY:${text(event.summary)}` : null,
    event.location ? `LOCATION:${text(event.location)}` : null,
    event.description ? `DESCRIPTION:${text(event.description)}` : null,
    event.transparency === 'transparent' ? 'TRANSP:TRANSPARENT' : null,
    event.organizer?.email ? person('ORGANIZER', event.organizer) : null,
    ...(event.attendees ?? [])
      .filter((a) => a.email)
      .map((a) =>
        person('ATTENDEE', a, [`PARTSTAT=${RESPONSES[a.responseStatus ?? 'needsAction'] ?? 'NEEDS-ACTION'}`]),
      ),
    event.htmlLink ? `URL:${event.htmlLink}` : null,
    'END:VEVENT',
    'END:VCALENDAR',
    '',
  ].filter((l): l is string => l !== null);
  const [read] = readCalendar(lines.join('\r\n')).events;
  return read!;
}
