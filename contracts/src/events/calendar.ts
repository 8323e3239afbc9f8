import { Type } from '@sinclair/typebox';
import { defineEvent } from './envelope.js';

const Account = Type.String({ minLength: 3, maxLength: 320 });

/**
 * One Google Calendar event as calendar-sync read it (Calendar v3 `events.list`): the event in
 * the calendar's common form (`@memex/icalendar`'s CalendarEvent, read from the event's iCalendar
 * rendering), or `deleted` when Google no longer has it. Subject `gcal:<account>/<calendar>/<id>`.
 */
export const CalendarEventSynced = defineEvent({
  type: 'calendar.event_synced',
  owner: 'calendar-sync',
  v: 1,
  description:
    'A Google Calendar event was read (new, changed, or deleted at Google); a changed instance of a series is its own event.',
  data: Type.Object(
    {
      account: Account,
      calendar_id: Type.String({ minLength: 1 }),
      google_id: Type.String({ minLength: 1 }),
      etag: Type.String(),
      deleted: Type.Boolean(),
      /** The event (CalendarEvent), absent when deleted. */
      event: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
    },
    { additionalProperties: false },
  ),
});

/** A calendar's sync reached its end: the sync token to continue from (null after a 410 until the full resync ends). */
export const CalendarSyncProgressed = defineEvent({
  type: 'calendar.sync_progressed',
  owner: 'calendar-sync',
  v: 1,
  description: 'A Google calendar was synced to the end: the next incremental sync starts from `sync_token`.',
  data: Type.Object(
    {
      account: Account,
      calendar_id: Type.String({ minLength: 1 }),
      summary: Type.String(),
      sync_token: Type.Union([Type.String(), Type.Null()]),
      /** How the sync ran: first, incremental, or full after Google answered 410 to the token. */
      mode: Type.Union([Type.Literal('first'), Type.Literal('incremental'), Type.Literal('resync')]),
      changed: Type.Integer({ minimum: 0 }),
    },
    { additionalProperties: false },
  ),
});

/**
 * A Google contact (People v1) as calendar-sync mirrored it: the memex item of its vCard (ingested
 * as `contacts:<account>`), or deleted. Subject `gcontact:<account>/<resource name>`.
 */
export const ContactSynced = defineEvent({
  type: 'contact.synced',
  owner: 'calendar-sync',
  v: 1,
  description:
    'A Google contact was mirrored as a vCard item (new or changed), or deleted at Google (and its item deleted).',
  data: Type.Object(
    {
      account: Account,
      resource_name: Type.String({ minLength: 1 }),
      etag: Type.String(),
      item_id: Type.Union([Type.String(), Type.Null()], { description: 'the vCard item; null when deleted' }),
      /** The fields the memex writes back, as Google had them: what a later edit compares against on a conflict. */
      fields: Type.Optional(
        Type.Object(
          { name: Type.String(), phones: Type.Array(Type.String()), addresses: Type.Array(Type.String()) },
          { additionalProperties: false },
        ),
      ),
      /** Its mail addresses, lowercase: who is already a contact when people from mail are offered. */
      emails: Type.Optional(Type.Array(Type.String())),
    },
    { additionalProperties: false },
  ),
});

/** An account's contacts were synced to the end: the People API sync token to continue from. */
export const ContactsSyncProgressed = defineEvent({
  type: 'contacts.sync_progressed',
  owner: 'calendar-sync',
  v: 1,
  description:
    'A Google account’s contacts were synced to the end: the next incremental sync starts from `sync_token`.',
  data: Type.Object(
    {
      account: Account,
      sync_token: Type.Union([Type.String(), Type.Null()]),
      mode: Type.Union([Type.Literal('first'), Type.Literal('incremental'), Type.Literal('resync')]),
      changed: Type.Integer({ minimum: 0 }),
    },
    { additionalProperties: false },
  ),
});

/**
 * The owner declined to add someone they wrote to as a Google contact: not offered again for that
 * account. (Accepting creates the contact, which is its own record: contact.synced.)
 */
export const ContactCandidateDismissed = defineEvent({
  type: 'contact_candidate.dismissed',
  owner: 'calendar-sync',
  v: 1,
  description: 'The owner declined a contact candidate (someone they wrote to); it is not offered again.',
  data: Type.Object(
    { account: Type.String({ minLength: 3 }), address: Type.String({ minLength: 3, maxLength: 320 }) },
    { additionalProperties: false },
  ),
});

/** Events owned by calendar-sync. */
export const calendarEvents = [
  CalendarEventSynced,
  CalendarSyncProgressed,
  ContactSynced,
  ContactsSyncProgressed,
  ContactCandidateDismissed,
];
