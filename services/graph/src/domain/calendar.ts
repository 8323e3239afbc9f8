import { calendarOf, type DataOf, type ItemIngested } from '@memex/contracts';

/**
 * What the graph reads from an item that carries a calendar (services/ingest's calendar handler:
 * a calendar file's `meta.events`, or an invitation part's `meta.calendar.events`) and from a
 * Google Calendar event calendar-sync read (the same CalendarEvent form): each event is a
 * thing `event:<UID>` with its time and place, its organizer and attendees join the people of the
 * same address, and people who meet get a `met_with` link with the event's item as evidence.
 */

export interface CalendarPerson {
  name: string;
  address: string;
  status?: string;
}

export interface CalendarEventFacts {
  uid: string;
  summary: string;
  location: string;
  start: string;
  end: string;
  status: string;
  organizer: CalendarPerson | null;
  attendees: CalendarPerson[];
}

/** Above this many people an event is a broadcast (a town hall, a webinar), not a meeting: no met_with between them all. */
export const MAX_MEETING_SIZE = 12;

const ADDRESS = /^[^@\s<>()]+@[^@\s<>()]+$/;

/** The events an item carries, or none: cancelled events and answers (REPLY) make no meeting. */
export function calendarEventsOf(item: DataOf<typeof ItemIngested>): CalendarEventFacts[] {
  const calendar = calendarOf(item);
  if (!calendar || calendar.method === 'REPLY' || calendar.method === 'CANCEL') return [];
  return calendar.events.filter(isMeeting);
}

/** An event that took or takes place: not cancelled, with a UID to name its thing. */
export function isMeeting(event: CalendarEventFacts): boolean {
  return event.status !== 'cancelled' && typeof event.uid === 'string' && event.uid !== '';
}

/** A synced event's CalendarEvent (calendar.event_synced's `event`) when it is a meeting, else null. */
export function syncedMeetingOf(event: Record<string, unknown> | undefined): CalendarEventFacts | null {
  if (!event) return null;
  const text = (name: string) => typeof event[name] === 'string';
  const wellFormed =
    ['uid', 'summary', 'location', 'start', 'end', 'status'].every(text) && Array.isArray(event['attendees']);
  const facts = event as unknown as CalendarEventFacts;
  return wellFormed && isMeeting(facts) ? facts : null;
}

/**
 * What a Google Calendar event the graph learns from `calendar.event_synced` stands as in its
 * evidence: it is no memex item, so the graph keeps it under the source id calendar-sync gives it
 * (`google:<account>/<calendar>/<id>`, its `googleSource`), of kind `event`.
 */
export function syncedEventSource(account: string, calendarId: string, googleId: string): string {
  return `google:${account}/${calendarId}/${googleId}`;
}

/** Who took part: the organizer and every attendee who did not decline, each address once. */
export function participantsOfEvent(event: CalendarEventFacts): CalendarPerson[] {
  const out = new Map<string, CalendarPerson>();
  for (const person of [...(event.organizer ? [event.organizer] : []), ...event.attendees]) {
    const address = person.address.trim().toLowerCase();
    if (!ADDRESS.test(address) || person.status === 'declined' || out.has(address)) continue;
    out.set(address, { name: person.name, address });
  }
  return [...out.values()];
}

/** Each pair of participants once (addresses in order), for a meeting small enough to be one. */
export function meetingPairs(people: CalendarPerson[]): Array<[string, string]> {
  if (people.length > MAX_MEETING_SIZE) return [];
  const addresses = people.map((p) => p.address).sort();
  const pairs: Array<[string, string]> = [];
  for (let i = 0; i < addresses.length; i++)
    for (let j = i + 1; j < addresses.length; j++) pairs.push([addresses[i]!, addresses[j]!]);
  return pairs;
}

/** A card of a vCard item (services/ingest's contacts handler): its name, mail addresses and phones. */
export interface ContactCardFacts {
  fullName: string;
  emails: Array<{ address: string }>;
  /** E.164 when the handler could read the number (cards read before it did carry none). */
  phones?: Array<{ e164?: string | null }>;
}

/** The cards of a contacts item, or none. */
export function contactCardsOf(item: DataOf<typeof ItemIngested>): ContactCardFacts[] {
  return item.kind === 'contact' ? item.meta.cards : [];
}

/** A card's distinct, well-formed addresses, lowercase. */
export function cardAddresses(card: ContactCardFacts): string[] {
  return [
    ...new Set(
      card.emails
        .map((e) =>
          String(e.address ?? '')
            .trim()
            .toLowerCase(),
        )
        .filter((a) => ADDRESS.test(a)),
    ),
  ];
}
