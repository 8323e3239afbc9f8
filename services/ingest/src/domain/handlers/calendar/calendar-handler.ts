import { Type, type Static } from '@sinclair/typebox';
import { CalendarFormatError, readCalendar, type CalendarEntry, type CalendarEvent } from '@memex/icalendar';
import { RejectedItem, type CalendarItem, type CalendarMeta, type IngestHandler } from '../handler.js';
import { charsetParam, decodeText, sha256Hex } from '../text.js';

export const CALENDAR_LIMIT_BYTES = 50 * 1024 * 1024;

export const calendarAttributesSchema = Type.Object(
  {
    filename: Type.Optional(
      Type.String({ minLength: 1, description: "The file's name; the title when the calendar names none." }),
    ),
    modified: Type.Optional(
      Type.String({
        format: 'date-time',
        description: 'When the file was last changed (memex import folder sends it; the events carry their own dates).',
      }),
    ),
    title: Type.Optional(Type.String({ minLength: 1, description: 'A title that overrides the calendar name.' })),
  },
  { additionalProperties: false },
);
type CalendarAttributes = Static<typeof calendarAttributesSchema>;

/** What search finds an event by: its title, place, text, and who takes part. */
function searchText(events: CalendarEvent[], entries: CalendarEntry[]): string {
  const eventTexts = events.map((e) => {
    const people = [e.organizer, ...e.attendees]
      .filter((p) => p !== null)
      .map((p) => [p.name, p.address].filter(Boolean).join(' '));
    return [e.summary, e.location, e.description, people.join(', ')].filter(Boolean).join('\n');
  });
  // A to-do as a check box, done or not; a journal entry as its summary.
  const entryTexts = entries.map((e) => {
    const line =
      e.kind === 'todo' ? `[${e.status === 'completed' || e.completed ? 'x' : ' '}] ${e.summary}` : e.summary;
    return [line, e.description, e.categories.join(', ')].filter(Boolean).join('\n');
  });
  return [...eventTexts, ...entryTexts].join('\n\n');
}

/** When a list of to-dos or a journal is dated: its first entry's start, due or done time. */
function firstEntryTime(entries: CalendarEntry[]): string | null {
  for (const e of entries) {
    const time = e.start ?? e.due ?? e.completed;
    if (time) return time;
  }
  return null;
}

function titleOf(meta: CalendarMeta, attributes: CalendarAttributes): string {
  if (attributes.title) return attributes.title;
  if (meta.calendarName) return meta.calendarName;
  const first = meta.events.find((e) => e.summary)?.summary;
  if (first && meta.events.length === 1) return first;
  if (first) return `${first} (and ${meta.events.length - 1} more events)`;
  if (meta.events.length > 0) return attributes.filename ?? `calendar of ${meta.events.length} events`;
  // A list of to-dos or a journal: its first entry, else its file.
  const entries = meta.entries ?? [];
  const entry = entries.find((e) => e.summary)?.summary;
  if (entry) return entries.length === 1 ? entry : `${entry} (and ${entries.length - 1} more)`;
  return attributes.filename ?? `${entries.length} to-dos and journal entries`;
}

/**
 * An iCalendar file, or an invitation or its answer (METHOD REQUEST/REPLY/CANCEL). The item keeps
 * every VEVENT with instants, zone, recurrence and attendees in its meta; calendar-sync builds the
 * calendar from it and matches invitations to their events by UID.
 */
export async function parseCalendar(input: {
  bytes: Buffer;
  type: string;
  attributes: Record<string, unknown>;
}): Promise<CalendarItem> {
  const attributes = input.attributes as CalendarAttributes;
  const { text } = decodeText(input.bytes, charsetParam(input.type));
  let calendar;
  try {
    calendar = readCalendar(text);
  } catch (error) {
    if (error instanceof CalendarFormatError) throw new RejectedItem(error.reason);
    throw error;
  }
  const meta: CalendarMeta = {
    format: 'icalendar',
    method: calendar.method,
    calendarName: calendar.name,
    timeZone: calendar.timeZone,
    filename: attributes.filename ?? null,
    events: calendar.events,
    ...(calendar.entries.length > 0 ? { entries: calendar.entries } : {}),
    otherComponents: calendar.otherComponents,
  };
  return {
    kind: 'event',
    identity: `sha256:${sha256Hex(input.bytes)}`,
    title: titleOf(meta, attributes),
    text: searchText(calendar.events, calendar.entries),
    occurredAt: calendar.events[0]?.start ?? firstEntryTime(calendar.entries),
    warnings: calendar.warnings,
    meta,
  };
}

export const calendarHandler: IngestHandler = {
  name: 'calendar',
  types: ['text/calendar', 'application/ics'],
  attributesSchema: calendarAttributesSchema,
  identityRule:
    'Content hash (sha256 of the bytes). The same source and external_id with new content updates the item; its events are matched to the calendar by UID.',
  limitBytes: CALENDAR_LIMIT_BYTES,
  produces: ['event'],
  updatable: true,
  parse: parseCalendar,
};
