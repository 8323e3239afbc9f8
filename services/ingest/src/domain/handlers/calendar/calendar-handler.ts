import { Type, type Static } from '@sinclair/typebox';
import { CalendarFormatError, readCalendar, type CalendarEvent } from '@memex/icalendar';
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
function searchText(events: CalendarEvent[]): string {
  return events
    .map((e) => {
      const people = [e.organizer, ...e.attendees]
        .filter((p) => p !== null)
        .map((p) => [p.name, p.address].filter(Boolean).join(' '));
      return [e.summary, e.location, e.description, people.join(', ')].filter(Boolean).join('\n');
    })
    .join('\n\n');
}

function titleOf(meta: CalendarMeta, attributes: CalendarAttributes): string {
  if (attributes.title) return attributes.title;
  if (meta.calendarName) return meta.calendarName;
  const first = meta.events.find((e) => e.summary)?.summary;
  if (first && meta.events.length === 1) return first;
  if (first) return `${first} (and ${meta.events.length - 1} more events)`;
  return attributes.filename ?? `calendar of ${meta.events.length} events`;
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
    otherComponents: calendar.otherComponents,
  };
  return {
    kind: 'event',
    identity: `sha256:${sha256Hex(input.bytes)}`,
    title: titleOf(meta, attributes),
    text: searchText(calendar.events),
    occurredAt: calendar.events[0]?.start ?? null,
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
