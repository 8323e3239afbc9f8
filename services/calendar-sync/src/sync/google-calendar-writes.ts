import { Inject, Injectable } from '@nestjs/common';
import type { Kysely } from 'kysely';
import { AccountsToken, CalendarEventSynced, MemexError } from '@memex/contracts';
import { callMethod, type Bus, EventPublisher } from '@memex/bus';
import { brokeredAuth, calendarApi, googleEndpoints, httpStatus, withRetry, type calendar_v3 } from '@memex/google';
import type { CalendarEvent } from '@memex/icalendar';
import { BUS, DATABASE, ServiceHost } from '@memex/runtime';
import { fromGoogleEvent } from '../domain/google-event.js';
import { googleSource } from '../projection/calendar.projector.js';
import type { CalendarDatabase } from '../projection/schema.js';

type GoogleEvent = calendar_v3.Schema$Event;

/** A Google event as the memex last read it: where it is, its etag, and what it said then. */
interface Held {
  account: string;
  calendarId: string;
  googleId: string;
  etag: string;
  data: CalendarEvent;
}

export interface EventChange {
  summary?: string;
  location?: string;
  start?: string;
  end?: string;
}

const RESPONSES = { accepted: 'accepted', declined: 'declined', tentative: 'tentative' } as const;

/** The fields of a change as Calendar v3 writes them (times in the event's own zone). */
function patchOf(change: EventChange, zone: string | null): GoogleEvent {
  const time = (iso: string) => ({ dateTime: new Date(iso).toISOString(), ...(zone ? { timeZone: zone } : {}) });
  return {
    ...(change.summary !== undefined ? { summary: change.summary } : {}),
    ...(change.location !== undefined ? { location: change.location } : {}),
    ...(change.start !== undefined ? { start: time(change.start) } : {}),
    ...(change.end !== undefined ? { end: time(change.end) } : {}),
  };
}

type Field = keyof EventChange;
const ALL_FIELDS: Field[] = ['summary', 'location', 'start', 'end'];

function fieldsOf(change: EventChange): Field[] {
  return ALL_FIELDS.filter((f) => change[f] !== undefined);
}

/** Which of `fields` Google's current version changed since the memex read `base`. */
function changedAtGoogle(fields: Field[], base: CalendarEvent, current: CalendarEvent): Field[] {
  const same = (field: keyof EventChange) =>
    field === 'start' || field === 'end'
      ? Date.parse(base[field]) === Date.parse(current[field])
      : base[field] === current[field];
  return fields.filter((field) => !same(field));
}

/**
 * memex → Google Calendar, with etags (If-Match): RSVP, create, move or edit, delete. A 412 (the
 * event changed at Google since the memex read it) re-reads it: an answer (RSVP) is merged into
 * the current version; a change to a field someone else changed meanwhile is refused and reported,
 * never written over theirs; a change to other fields is merged. What Google answers is logged as
 * calendar.event_synced, so the memex shows the event as Google now has it.
 */
@Injectable()
export class GoogleCalendarWrites {
  constructor(
    @Inject(DATABASE) private readonly db: Kysely<CalendarDatabase>,
    @Inject(BUS) private readonly bus: Bus,
    private readonly publisher: EventPublisher,
    private readonly host: ServiceHost,
  ) {}

  private api(account: string): calendar_v3.Calendar {
    return calendarApi(
      brokeredAuth(() => callMethod(this.bus, AccountsToken, { account, scope: 'calendar' })),
      googleEndpoints(),
    );
  }

  /** The Google event (the single event or the series) with this UID. */
  private async held(uid: string): Promise<Held> {
    // What the memex holds must include every write logged so far (a create just before a move).
    await this.host.projector?.waitFor(await this.bus.lastSeq(), 60_000);
    const rows = await this.db
      .selectFrom('google_events as g')
      .innerJoin('components as c', (join) => join.onRef('c.uid', '=', 'g.uid'))
      .select(['g.account', 'g.calendar_id', 'g.google_id', 'g.etag', 'c.item_id', 'c.rid', 'c.data'])
      .where('g.uid', '=', uid)
      .where('c.rid', '=', '')
      .execute();
    const row = rows.find((r) => r.item_id === googleSource(r.account, r.calendar_id, r.google_id));
    if (!row) {
      throw new MemexError(
        'not_found',
        `no Google event with UID ${JSON.stringify(uid)}: only events synced from a Google calendar can be changed at Google (calendar files and invitations stay as they are)`,
      );
    }
    return {
      account: row.account,
      calendarId: row.calendar_id,
      googleId: row.google_id,
      etag: row.etag,
      data: row.data,
    };
  }

  private async record(account: string, calendarId: string, event: GoogleEvent, zone: string | null): Promise<number> {
    const { seq } = await this.publisher.publish(CalendarEventSynced, {
      subject: `gcal:${account}/${calendarId}/${event.id}`,
      actor: { kind: 'user', id: 'owner' },
      data: {
        account,
        calendar_id: calendarId,
        google_id: event.id!,
        etag: event.etag ?? '',
        deleted: false,
        event: fromGoogleEvent(event, zone) as unknown as Record<string, unknown>,
      },
    });
    return seq;
  }

  /** Runs `write` with the held etag; on 412 re-reads, lets `merge` decide, and writes once more with the fresh etag. */
  private async withEtag<T>(
    held: Held,
    write: (etag: string, current: GoogleEvent | null) => Promise<T>,
    merge: (current: GoogleEvent) => void,
  ): Promise<{ result: T; merged: boolean }> {
    try {
      return { result: await withRetry(() => write(held.etag, null)), merged: false };
    } catch (error) {
      if (httpStatus(error) !== 412) throw error;
    }
    const api = this.api(held.account);
    const current = (await withRetry(() => api.events.get({ calendarId: held.calendarId, eventId: held.googleId })))
      .data;
    merge(current);
    return { result: await withRetry(() => write(current.etag ?? '', current)), merged: true };
  }

  async rsvp(uid: string, response: keyof typeof RESPONSES): Promise<{ seq: number; merged: boolean }> {
    const held = await this.held(uid);
    const api = this.api(held.account);
    const answer = (attendees: GoogleEvent['attendees']) => {
      const list = attendees ?? [];
      if (!list.some((a) => a.email?.toLowerCase() === held.account)) {
        throw new MemexError(
          'invalid_params',
          `${held.account} is not an attendee of ${JSON.stringify(held.data.summary)}`,
        );
      }
      return list.map((a) =>
        a.email?.toLowerCase() === held.account ? { ...a, responseStatus: RESPONSES[response] } : a,
      );
    };
    const ours = held.data.attendees.map((a) => ({
      email: a.address,
      ...(a.name ? { displayName: a.name } : {}),
      responseStatus:
        ({ 'needs-action': 'needsAction', delegated: 'needsAction' } as Record<string, string>)[a.status] ?? a.status,
    }));
    const { result, merged } = await this.withEtag(
      held,
      async (etag, current) =>
        (
          await api.events.patch(
            {
              calendarId: held.calendarId,
              eventId: held.googleId,
              requestBody: { attendees: answer(current?.attendees ?? ours) },
            },
            { headers: { 'If-Match': etag } },
          )
        ).data,
      () => undefined, // An answer is the owner's alone: it merges into any newer version.
    );
    return { seq: await this.record(held.account, held.calendarId, result, held.data.timeZone), merged };
  }

  async update(uid: string, change: EventChange): Promise<{ seq: number; merged: boolean }> {
    const held = await this.held(uid);
    const api = this.api(held.account);
    const { result, merged } = await this.withEtag(
      held,
      async (etag) =>
        (
          await api.events.patch(
            { calendarId: held.calendarId, eventId: held.googleId, requestBody: patchOf(change, held.data.timeZone) },
            { headers: { 'If-Match': etag } },
          )
        ).data,
      (current) => this.refuseConflicts(held, fieldsOf(change), current),
    );
    return { seq: await this.record(held.account, held.calendarId, result, held.data.timeZone), merged };
  }

  async delete(uid: string): Promise<{ seq: number; merged: boolean }> {
    const held = await this.held(uid);
    const api = this.api(held.account);
    const { merged } = await this.withEtag(
      held,
      async (etag) =>
        api.events.delete({ calendarId: held.calendarId, eventId: held.googleId }, { headers: { 'If-Match': etag } }),
      // Deleting what someone changed meanwhile would throw their change away unseen.
      (current) => this.refuseConflicts(held, ALL_FIELDS, current),
    );
    const { seq } = await this.publisher.publish(CalendarEventSynced, {
      subject: `gcal:${held.account}/${held.calendarId}/${held.googleId}`,
      actor: { kind: 'user', id: 'owner' },
      data: { account: held.account, calendar_id: held.calendarId, google_id: held.googleId, etag: '', deleted: true },
    });
    return { seq, merged };
  }

  async create(
    account: string,
    calendarId: string,
    event: Required<Pick<EventChange, 'summary' | 'start' | 'end'>> &
      EventChange & { timeZone?: string; attendees?: string[] },
  ): Promise<{ seq: number; uid: string }> {
    const api = this.api(account);
    const requestBody: GoogleEvent = {
      ...patchOf(event, event.timeZone ?? null),
      ...(event.attendees ? { attendees: event.attendees.map((email) => ({ email })) } : {}),
    };
    const created = (await withRetry(() => api.events.insert({ calendarId, requestBody }))).data;
    const seq = await this.record(account, calendarId, created, event.timeZone ?? null);
    return { seq, uid: created.iCalUID ?? `${created.id}@google.com` };
  }

  private refuseConflicts(held: Held, fields: Field[], current: GoogleEvent): void {
    const now = fromGoogleEvent(current, held.data.timeZone, held.data.uid);
    const conflicts = changedAtGoogle(fields, held.data, now);
    if (now.status === 'cancelled')
      throw new MemexError(
        'conflict',
        `${JSON.stringify(held.data.summary)} was deleted at Google meanwhile: nothing was changed`,
      );
    if (conflicts.length > 0) {
      const said = conflicts
        .map((f) => `${f}: ${JSON.stringify(now[f])} at Google, ${JSON.stringify(held.data[f])} when the memex read it`)
        .join('; ');
      throw new MemexError(
        'conflict',
        `${JSON.stringify(held.data.summary)} changed at Google since the memex read it (${said}); nothing was overwritten: sync and try again`,
      );
    }
  }
}
