import type { Attendee, CalendarEvent, CalendarPerson } from '@memex/icalendar';

/**
 * The calendar read model. `components` is what each item said (one row per VEVENT of a calendar
 * file or an invitation); `events` is what they add up to per UID and instance (domain/fold.ts);
 * `instances` places each event and each occurrence of a series in time (domain/instances.ts).
 * `rid` is the instance's RECURRENCE-ID as an ISO instant, '' for a single event or a series.
 */
export interface ComponentsTable {
  item_id: string;
  position: number;
  uid: string;
  rid: string;
  /** REQUEST, REPLY, CANCEL, PUBLISH, or '' for a plain calendar file. */
  method: string;
  sequence: number;
  data: CalendarEvent;
  labels: string[];
  kind: string;
  spam: boolean;
  /** When the item was logged: a series is expanded ahead of the latest of these. */
  recorded_at: Date;
  seq: number;
}

export interface EventsTable {
  uid: string;
  rid: string;
  status: 'confirmed' | 'tentative' | 'cancelled';
  summary: string;
  location: string;
  all_day: boolean;
  start: Date;
  end: Date;
  start_date: string | null;
  end_date: string | null;
  time_zone: string | null;
  transparent: boolean;
  organizer: CalendarPerson | null;
  attendees: Attendee[];
  /** A series' master: its VCALENDAR for expanding windows past `expanded_until`. */
  source: string | null;
  /** A series: instances are in `instances` up to here; a later window is expanded when asked. */
  expanded_until: Date | null;
  items: string[];
  labels: string[];
  kind: string;
  spam: boolean;
}

export interface InstancesTable {
  uid: string;
  /** The instance: its RECURRENCE-ID, '' for a single event. */
  rid: string;
  /** The events row with its details: '' (the single event or the series) or a changed instance's rid. */
  event_rid: string;
  /** [start, end), or [start, start] for an event without duration. */
  span: string;
  start: Date;
  end: Date;
  busy: boolean;
}

/** A connected Google account (mail-sync's account.connected) and the scopes it granted. */
export interface GoogleAccountsTable {
  account: string;
  scopes: string[];
}

/** How far each Google calendar is synced: the sync token of its last completed sync. */
export interface GoogleCalendarsTable {
  account: string;
  calendar_id: string;
  summary: string;
  sync_token: string | null;
  synced_at: Date;
}

/** Each Google event held, with the etag it was read at (a full resync skips the unchanged). */
export interface GoogleEventsTable {
  account: string;
  calendar_id: string;
  google_id: string;
  etag: string;
  uid: string;
}

/** How far each account's Google contacts are synced. */
export interface GoogleContactAccountsTable {
  account: string;
  sync_token: string | null;
  synced_at: Date;
}

/** Each Google contact mirrored, with the etag it was read at and the vCard item that mirrors it. */
export interface GoogleContactsTable {
  account: string;
  resource_name: string;
  etag: string;
  item_id: string;
  /** Name, phones and addresses as Google had them when last read (null for rows logged before they were kept). */
  fields: ContactFields | null;
  /** Its mail addresses, lowercase (null for rows logged before they were kept). */
  emails: string[] | null;
}

export interface ContactFields {
  name: string;
  phones: string[];
  addresses: string[];
}

/** Contact candidates (people written to) the owner declined, per account. */
export interface ContactCandidatesDismissedTable {
  account: string;
  address: string;
}

export interface CalendarDatabase {
  contact_candidates_dismissed: ContactCandidatesDismissedTable;
  google_contact_accounts: GoogleContactAccountsTable;
  google_contacts: GoogleContactsTable;
  components: ComponentsTable;
  events: EventsTable;
  instances: InstancesTable;
  google_accounts: GoogleAccountsTable;
  google_calendars: GoogleCalendarsTable;
  google_events: GoogleEventsTable;
}
