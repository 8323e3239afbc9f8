import { Type } from '@sinclair/typebox';
import type { MethodDefinition } from './method.js';
import { defineMethod, Seq } from './method.js';
import { ContextBrief } from './graph.js';

const Instant = Type.String({ format: 'date-time' });

export const CalendarPerson = Type.Object({
  name: Type.String(),
  address: Type.String({ description: 'mail address, lowercase' }),
});

export const CalendarAttendee = Type.Composite([
  CalendarPerson,
  Type.Object({
    status: Type.Union(['needs-action', 'accepted', 'declined', 'tentative', 'delegated'].map((s) => Type.Literal(s))),
    role: Type.String(),
  }),
]);

/** One occurrence of an event in a range: a single event, or one instance of a recurring series. */
export const CalendarInstance = Type.Object({
  uid: Type.String({
    description: 'the event (iCalendar UID): the same in a calendar file, an invitation and a synced calendar',
  }),
  recurrence_id: Type.Union([Instant, Type.Null()], {
    description: 'an instance of a series: its original start; null for a single event',
  }),
  summary: Type.String(),
  location: Type.String(),
  start: Instant,
  end: Instant,
  all_day: Type.Boolean(),
  start_date: Type.Union([Type.String(), Type.Null()], { description: 'all-day events: the first day (YYYY-MM-DD)' }),
  end_date: Type.Union([Type.String(), Type.Null()], {
    description: 'all-day events: the day after the last (exclusive)',
  }),
  time_zone: Type.Union([Type.String(), Type.Null()], {
    description: 'the zone it was written in (IANA name, or the file’s own)',
  }),
  status: Type.Union([Type.Literal('confirmed'), Type.Literal('tentative')]),
  recurring: Type.Boolean(),
  /** A changed instance of a series (moved or edited). */
  modified: Type.Boolean(),
  transparent: Type.Boolean({ description: 'does not make its time busy' }),
  organizer: Type.Union([CalendarPerson, Type.Null()]),
  attendees: Type.Array(CalendarAttendee),
  items: Type.Array(Type.String(), {
    description:
      'where it came from: items (calendar files, invitations in mail) and Google events (`google:<account>/<calendar>/<event id>`)',
  }),
});

export const CalendarList = defineMethod({
  name: 'memex.calendar.list',
  service: 'calendar-sync',
  kind: 'query',
  access: 'any',
  summary:
    'The events in a range (day, week, month or agenda views): every instance that overlaps [from, to), recurring series expanded, moved instances in their new place and cancelled ones left out, by start.',
  params: Type.Object({
    from: Instant,
    to: Instant,
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 10_000, default: 2_000 })),
  }),
  result: Type.Object({
    instances: Type.Array(CalendarInstance),
    truncated: Type.Boolean({ description: 'more instances overlap the range than `limit`' }),
  }),
});

export const CalendarFreebusy = defineMethod({
  name: 'memex.calendar.freebusy',
  service: 'calendar-sync',
  kind: 'query',
  access: 'any',
  summary:
    'Busy time in [from, to) over every calendar: the merged intervals of instances that are not cancelled and not transparent (all-day events are free unless marked busy).',
  params: Type.Object({ from: Instant, to: Instant }),
  result: Type.Object({ busy: Type.Array(Type.Object({ start: Instant, end: Instant })) }),
});

export const CalendarBrief = defineMethod({
  name: 'memex.calendar.brief',
  service: 'calendar-sync',
  kind: 'query',
  access: 'any',
  summary:
    "A brief before a meeting (seed §6.4): the event, then memex.context.brief on its attendees and the event itself (their cards' key facts, recent threads with them, open commitments), within the caller's scope and the budget.",
  params: Type.Object({
    uid: Type.String({ minLength: 1, description: 'the event (its UID, as memex.calendar.list gives it)' }),
    budget_bytes: Type.Optional(
      Type.Integer({ minimum: 64, maximum: 262_144, description: 'UTF-8 bytes of the brief; default 4096' }),
    ),
  }),
  result: Type.Object({
    summary: Type.String(),
    start: Instant,
    end: Instant,
    location: Type.String(),
    attendees: Type.Array(CalendarAttendee),
    brief: ContextBrief.result,
  }),
});

export const CalendarSync = defineMethod({
  name: 'memex.calendar.sync',
  service: 'calendar-sync',
  kind: 'command',
  access: 'owner',
  summary:
    'Sync the Google calendars of every connected account (or one) now, instead of at the next poll: first sync, incremental with sync tokens, or a full resync when Google expired the token.',
  params: Type.Object({ account: Type.Optional(Type.String({ minLength: 1 })) }),
  result: Type.Object({
    accounts: Type.Array(
      Type.Object({
        account: Type.String(),
        calendars: Type.Array(
          Type.Object({
            calendar_id: Type.String(),
            mode: Type.Union([Type.Literal('first'), Type.Literal('incremental'), Type.Literal('resync')]),
            changed: Type.Integer({ description: 'events published: new, changed or deleted at Google' }),
          }),
        ),
      }),
    ),
    seq: Seq,
  }),
});

const Written = Type.Object({
  merged: Type.Boolean({
    description: 'Google had a newer version (412): it was re-read and the change merged into it',
  }),
  seq: Seq,
});

export const CalendarRsvp = defineMethod({
  name: 'memex.calendar.rsvp',
  service: 'calendar-sync',
  kind: 'command',
  access: 'owner',
  summary:
    "Answer an invitation in a Google calendar (accepted, declined, tentative) as the account's own attendee; written to Google with its etag, merged into a newer version when Google has one.",
  params: Type.Object({
    uid: Type.String({ minLength: 1 }),
    response: Type.Union([Type.Literal('accepted'), Type.Literal('declined'), Type.Literal('tentative')]),
  }),
  result: Written,
});

const EventFields = {
  summary: Type.Optional(Type.String({ maxLength: 1024 })),
  location: Type.Optional(Type.String({ maxLength: 1024 })),
  start: Type.Optional(Instant),
  end: Type.Optional(Instant),
};

/** Which part of a recurring series a change is for: the whole series (neither), one instance, or it and all after it. */
const InstanceTarget = {
  recurrence_id: Type.Optional(
    Type.String({
      format: 'date-time',
      description: 'one instance of a recurring series: its original start, as memex.calendar.list gives it',
    }),
  ),
  following: Type.Optional(
    Type.Boolean({
      description:
        'with recurrence_id: that instance and every later one — the series is split (its rule ends before the instance, a new series with the change starts there)',
    }),
  ),
};

export const CalendarUpdate = defineMethod({
  name: 'memex.calendar.update',
  service: 'calendar-sync',
  kind: 'command',
  access: 'owner',
  summary:
    'Move or edit a Google Calendar event: a single event, a whole series, one instance of a series (recurrence_id), or an instance and all after it (following: the series is split). Written with etags: when Google changed the same fields meanwhile, nothing is overwritten and the conflict is reported (error conflict); other fields merge.',
  params: Type.Object({ uid: Type.String({ minLength: 1 }), ...InstanceTarget, ...EventFields }),
  result: Type.Object({
    ...Written.properties,
    uid: Type.String({ description: 'the event changed: the new series’ UID when the series was split' }),
  }),
});

export const CalendarDelete = defineMethod({
  name: 'memex.calendar.delete',
  service: 'calendar-sync',
  kind: 'command',
  access: 'owner',
  summary:
    'Delete a Google Calendar event, one instance of a series (recurrence_id), or an instance and all after it (following: the series ends before it); refused (conflict) when it changed at Google since the memex read it.',
  params: Type.Object({ uid: Type.String({ minLength: 1 }), ...InstanceTarget }),
  result: Written,
});

export const CalendarCreate = defineMethod({
  name: 'memex.calendar.create',
  service: 'calendar-sync',
  kind: 'command',
  access: 'owner',
  summary: 'Create an event in a Google calendar (default: the primary calendar of the account).',
  params: Type.Object({
    account: Type.String({ minLength: 3 }),
    calendar_id: Type.Optional(Type.String({ minLength: 1, default: 'primary' })),
    summary: Type.String({ minLength: 1, maxLength: 1024 }),
    start: Instant,
    end: Instant,
    time_zone: Type.Optional(Type.String({ minLength: 1, description: 'IANA zone the event is written in' })),
    location: Type.Optional(Type.String({ maxLength: 1024 })),
    attendees: Type.Optional(Type.Array(Type.String({ minLength: 3 }), { maxItems: 200 })),
  }),
  result: Type.Object({ uid: Type.String(), seq: Seq }),
});

export const ContactsSync = defineMethod({
  name: 'memex.contacts.sync',
  service: 'calendar-sync',
  kind: 'command',
  access: 'owner',
  summary:
    'Sync the Google contacts of every connected account (or one) now: each contact mirrored as a vCard item (its groups as the card’s categories), first sync, incremental with People sync tokens, a full resync when the token expired.',
  params: Type.Object({ account: Type.Optional(Type.String({ minLength: 1 })) }),
  result: Type.Object({
    accounts: Type.Array(
      Type.Object({
        account: Type.String(),
        mode: Type.Union([Type.Literal('first'), Type.Literal('incremental'), Type.Literal('resync')]),
        changed: Type.Integer({ description: 'contacts mirrored or deleted' }),
      }),
    ),
    seq: Seq,
  }),
});

export const ContactsUpdate = defineMethod({
  name: 'memex.contacts.update',
  service: 'calendar-sync',
  kind: 'command',
  access: 'owner',
  summary:
    "Change a Google contact's name, phones or addresses at Google (with its etag); refused (conflict) when Google changed the same field meanwhile, merged otherwise.",
  params: Type.Object({
    account: Type.String({ minLength: 3 }),
    resource_name: Type.String({ minLength: 1, description: 'the contact (people/c…), as its card’s UID says' }),
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 500 })),
    phones: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { maxItems: 50 })),
    addresses: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 1000 }), { maxItems: 20 })),
  }),
  result: Written,
});

export const ContactsCreate = defineMethod({
  name: 'memex.contacts.create',
  service: 'calendar-sync',
  kind: 'command',
  access: 'owner',
  summary:
    'Create a Google contact (for a person known from mail, once you confirm it), in the contact group "memex" so the contacts the memex made stay separable; mirrored as a vCard item at once.',
  params: Type.Object({
    account: Type.String({ minLength: 3 }),
    name: Type.String({ minLength: 1, maxLength: 500 }),
    emails: Type.Array(Type.String({ minLength: 3, maxLength: 320 }), { minItems: 1, maxItems: 20 }),
    phones: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { maxItems: 20 })),
  }),
  result: Type.Object({ resource_name: Type.String(), seq: Seq }),
});

export const ContactsCandidates = defineMethod({
  name: 'memex.contacts.candidates',
  service: 'calendar-sync',
  kind: 'query',
  access: 'owner',
  summary:
    'People you wrote to from an account (its Sent mail) who are not among its Google contacts and were not declined, most written to first: offered as new contacts, created only when you accept (memex.contacts.candidates.decide).',
  params: Type.Object({
    account: Type.String({ minLength: 3 }),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 50 })),
  }),
  result: Type.Object({
    candidates: Type.Array(
      Type.Object({
        address: Type.String(),
        name: Type.String({ description: 'the name your mail gave them, or empty' }),
        sent: Type.Integer({ description: 'messages of yours to them read' }),
        last_sent: Instant,
      }),
    ),
    read: Type.Integer({ description: 'Sent messages read (the most recent, up to 5,000)' }),
  }),
});

export const ContactsCandidatesDecide = defineMethod({
  name: 'memex.contacts.candidates.decide',
  service: 'calendar-sync',
  kind: 'command',
  access: 'owner',
  summary:
    'Accept a contact candidate (the contact is created at Google, in the group memex, and mirrored) or decline it (never offered again).',
  params: Type.Object({
    account: Type.String({ minLength: 3 }),
    address: Type.String({ minLength: 3, maxLength: 320 }),
    accept: Type.Boolean(),
    name: Type.Optional(
      Type.String({ minLength: 1, maxLength: 500, description: 'the name to give; default: your mail’s' }),
    ),
  }),
  result: Type.Object({ resource_name: Type.Union([Type.String(), Type.Null()]), seq: Seq }),
});

/** API methods of the calendar area. */
export const calendarMethods: MethodDefinition[] = [
  CalendarList,
  CalendarFreebusy,
  CalendarBrief,
  CalendarSync,
  CalendarRsvp,
  CalendarUpdate,
  CalendarDelete,
  CalendarCreate,
  ContactsSync,
  ContactsUpdate,
  ContactsCreate,
  ContactsCandidates,
  ContactsCandidatesDecide,
];
