import { Inject, Injectable } from '@nestjs/common';
import type { Kysely } from 'kysely';
import { AccountsToken, CalendarEventSynced, MemexError } from '@memex/contracts';
import { callMethod, type Bus, EventPublisher } from '@memex/bus';
import { brokeredAuth, calendarApi, googleEndpoints, httpStatus, withRetry, type calendar_v3 } from '@memex/google';
import { CalendarFormatError, splitSeries, type CalendarEvent } from '@memex/icalendar';
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

/** One instance of a recurring series (its original start), or it and every later one. */
export interface InstanceTarget {
  recurrenceId: string;
  following: boolean;
}

const RESPONSES = { accepted: 'accepted', declined: 'declined', tentative: 'tentative' } as const;

/** An instant as Calendar v3 writes a time, in the event's own zone. */
function googleTime(iso: string, zone: string | null): calendar_v3.Schema$EventDateTime {
  return { dateTime: new Date(iso).toISOString(), ...(zone ? { timeZone: zone } : {}) };
}

/** The fields of a change as Calendar v3 writes them (times in the event's own zone). */
function patchOf(change: EventChange, zone: string | null): GoogleEvent {
  const time = (iso: string) => googleTime(iso, zone);
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
    const held = await this.heldComponent(uid, '');
    if (!held) {
      throw new MemexError(
        'not_found',
        `no Google event with UID ${JSON.stringify(uid)}: only events synced from a Google calendar can be changed at Google (calendar files and invitations stay as they are)`,
      );
    }
    return held;
  }

  /** What the memex holds of a Google event: the series or single event (`rid` ''), or a changed instance of a series. */
  private async heldComponent(uid: string, rid: string): Promise<Held | undefined> {
    // What the memex holds must include every write logged so far (a create just before a move).
    await this.host.projector?.waitFor(await this.bus.lastSeq(), 60_000);
    const rows = await this.db
      .selectFrom('google_events as g')
      .innerJoin('components as c', (join) => join.onRef('c.uid', '=', 'g.uid'))
      .select(['g.account', 'g.calendar_id', 'g.google_id', 'g.etag', 'c.item_id', 'c.rid', 'c.data'])
      .where('g.uid', '=', uid)
      .where('c.rid', '=', rid)
      .execute();
    const row = rows.find((r) => r.item_id === googleSource(r.account, r.calendar_id, r.google_id));
    if (!row) return undefined;
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

  /** The series, a single event, one instance (`target`), or an instance and all after it (the series split). */
  async update(
    uid: string,
    change: EventChange,
    target?: InstanceTarget,
  ): Promise<{ seq: number; merged: boolean; uid: string }> {
    const series = await this.held(uid);
    if (target?.following) return this.split(series, target.recurrenceId, change);
    const held = target ? await this.heldInstance(series, target.recurrenceId) : series;
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
    return { seq: await this.record(held.account, held.calendarId, result, held.data.timeZone), merged, uid };
  }

  /** An event, one instance of a series (`target`: Google keeps it, cancelled), or an instance and all after it (the series ends before it). */
  async delete(uid: string, target?: InstanceTarget): Promise<{ seq: number; merged: boolean }> {
    const series = await this.held(uid);
    if (target?.following) return this.split(series, target.recurrenceId, null);
    const held = target ? await this.heldInstance(series, target.recurrenceId) : series;
    const api = this.api(held.account);
    const { merged } = await this.withEtag(
      held,
      async (etag) =>
        api.events.delete({ calendarId: held.calendarId, eventId: held.googleId }, { headers: { 'If-Match': etag } }),
      // Deleting what someone changed meanwhile would throw their change away unseen.
      (current) => this.refuseConflicts(held, ALL_FIELDS, current),
    );
    if (target) {
      // A deleted instance is a cancelled exception of its series: record it as Google now has it.
      const cancelled = (await withRetry(() => api.events.get({ calendarId: held.calendarId, eventId: held.googleId })))
        .data;
      return { seq: await this.record(held.account, held.calendarId, cancelled, held.data.timeZone), merged };
    }
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

  /**
   * An instance of a series as the memex knows it: a changed instance it holds (with its etag),
   * or else the instance where the series' rule puts it, written with the series' etag — if
   * Google changed the instance or the series since, the 412 re-reads the instance and merges or
   * refuses field by field as for any event.
   */
  private async heldInstance(series: Held, recurrenceId: string): Promise<Held> {
    const rid = new Date(recurrenceId).toISOString();
    const changed = await this.heldComponent(series.data.uid, rid);
    if (changed && changed.data.status !== 'cancelled') return changed;
    const event = await this.instanceAtGoogle(series, recurrenceId);
    const length = Date.parse(series.data.end) - Date.parse(series.data.start);
    return {
      ...series,
      googleId: event.id!,
      data: {
        ...series.data,
        recurrenceId: rid,
        recurrence: null,
        source: null,
        start: rid,
        end: new Date(Date.parse(rid) + length).toISOString(),
      },
    };
  }

  /** The instance of a series that originally starts at `recurrenceId`, as Google has it now (changed or as its rule places it). */
  private async instanceAtGoogle(series: Held, recurrenceId: string): Promise<GoogleEvent> {
    const summary = JSON.stringify(series.data.summary);
    if (!series.data.recurrence) {
      throw new MemexError('invalid_params', `${summary} is not a recurring series: leave recurrence_id out`);
    }
    const api = this.api(series.account);
    const { data } = await withRetry(() =>
      api.events.instances({
        calendarId: series.calendarId,
        eventId: series.googleId,
        originalStart: new Date(recurrenceId).toISOString(),
        maxResults: 1,
      }),
    );
    const event = data.items?.[0];
    if (!event?.id || event.status === 'cancelled') {
      throw new MemexError(
        'not_found',
        `${summary} has no instance that starts at ${recurrenceId} (recurrence_id is an instance's original start, as memex.calendar.list gives it)`,
      );
    }
    return event;
  }

  /**
   * "This and following" as Google's own clients do it (Calendar v3 has no call for it): the
   * series' RRULE gets an UNTIL just before the instance (with the series' etag), then a new
   * series with the change starts at the instance and runs the rest of the rule. `change` null
   * deletes from the instance on (only the first step). If creating the new series fails the
   * old rule is put back, so no instance is lost.
   */
  private async split(
    held: Held,
    recurrenceId: string,
    change: EventChange | null,
  ): Promise<{ seq: number; merged: boolean; uid: string }> {
    const instance = await this.instanceAtGoogle(held, recurrenceId);
    const api = this.api(held.account);
    const { calendarId } = held;
    const zone = held.data.timeZone;
    const series = (await withRetry(() => api.events.get({ calendarId, eventId: held.googleId }))).data;
    const merged = series.etag !== held.etag;
    if (merged) {
      // The series' times and rule decide where it splits: they must be what the memex read.
      this.refuseConflicts(held, ['start', 'end', ...(change ? fieldsOf(change) : [])], series);
      const rules = (lines: string[] | null | undefined) => JSON.stringify([...(lines ?? [])].sort());
      const heldLines = held.data.recurrence
        ? [...held.data.recurrence.rules, ...held.data.recurrence.rdates, ...held.data.recurrence.exdates]
        : [];
      if (rules(series.recurrence) !== rules(heldLines)) {
        throw new MemexError(
          'conflict',
          `the recurrence of ${JSON.stringify(held.data.summary)} changed at Google since the memex read it; nothing was changed: sync and try again`,
        );
      }
    }
    const allDay = Boolean(series.start?.date);
    if (allDay && (change?.start || change?.end)) {
      throw new MemexError(
        'invalid_params',
        'moving an all-day series from one instance on is not supported: change its summary or location, or move the whole series',
      );
    }
    let lines: { before: string[]; after: string[] };
    try {
      const splitDay = instance.originalStartTime?.date ?? null;
      lines = splitSeries(held.data.source!, series.recurrence ?? [], new Date(recurrenceId), splitDay);
    } catch (error) {
      if (error instanceof CalendarFormatError) throw new MemexError('invalid_params', error.reason);
      throw error;
    }
    let truncated: GoogleEvent;
    try {
      truncated = (
        await withRetry(() =>
          api.events.patch(
            { calendarId, eventId: held.googleId, requestBody: { recurrence: lines.before } },
            { headers: { 'If-Match': series.etag ?? '' } },
          ),
        )
      ).data;
    } catch (error) {
      if (httpStatus(error) !== 412) throw error;
      throw new MemexError(
        'conflict',
        `${JSON.stringify(held.data.summary)} changed at Google just now; nothing was changed: sync and try again`,
      );
    }
    if (!change)
      return { seq: await this.record(held.account, calendarId, truncated, zone), merged, uid: held.data.uid };

    const seriesLength = Date.parse(held.data.end) - Date.parse(held.data.start);
    const start = change.start ?? recurrenceId;
    const end = change.end ?? new Date(Date.parse(start) + seriesLength).toISOString();
    const days = (date: string, n: number) =>
      new Date(Date.parse(`${date}T00:00:00Z`) + n * 86_400_000).toISOString().slice(0, 10);
    const requestBody: GoogleEvent = {
      summary: change.summary ?? series.summary,
      location: change.location ?? series.location,
      description: series.description,
      transparency: series.transparency,
      attendees: series.attendees,
      start: allDay ? { date: instance.originalStartTime!.date } : googleTime(start, zone),
      end: allDay
        ? { date: days(instance.originalStartTime!.date!, Math.round(seriesLength / 86_400_000)) }
        : googleTime(end, zone),
      recurrence: lines.after,
    };
    let created: GoogleEvent;
    try {
      created = (await withRetry(() => api.events.insert({ calendarId, requestBody }))).data;
    } catch (error) {
      await withRetry(() =>
        api.events.patch(
          { calendarId, eventId: held.googleId, requestBody: { recurrence: series.recurrence } },
          { headers: { 'If-Match': truncated.etag ?? '' } },
        ),
      );
      throw error;
    }
    await this.record(held.account, calendarId, truncated, zone);
    const seq = await this.record(held.account, calendarId, created, zone);
    return { seq, merged, uid: created.iCalUID ?? `${created.id}@google.com` };
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
