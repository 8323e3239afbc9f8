import { googleError, type FakeGoogleServer, type FakeRequest, type FakeResponse } from '@memex/google/testing';
import type { calendar_v3 } from '@memex/google';
import { expandSeries } from '@memex/icalendar';
import { fromGoogleEvent } from '../domain/google-event.js';

type FakeEvent = calendar_v3.Schema$Event & { id: string; changedAt: number };

interface FakeCalendarData {
  id: string;
  summary: string;
  timeZone: string;
  events: Map<string, FakeEvent>;
}

/**
 * Google Calendar v3 as the tests need it, on a FakeGoogleServer (real HTTP, real REST JSON):
 * calendarList.list, and events.list with pages, sync tokens (a change counter), deleted events
 * as `status: cancelled`, and 410 for a token older than `expireTokens` allows.
 */
export class FakeCalendar {
  private readonly calendars = new Map<string, FakeCalendarData>();
  private changes = 0;
  /** Bumped by expireTokens: tokens of an older generation answer 410. */
  private generation = 1;
  /** How long each events.list page takes (a crash test needs a sync that lasts). */
  pageDelayMs = 0;
  /** Tokens handed out: the test can see an incremental sync used one. */
  readonly syncTokensSeen: string[] = [];

  constructor(server: FakeGoogleServer) {
    server.route('GET', /^\/calendar\/v3\/users\/me\/calendarList$/, () => this.calendarList());
    server.route('GET', /^\/calendar\/v3\/calendars\/([^/]+)\/events\/([^/]+)$/, (req) => this.getEvent(req));
    server.route('GET', /^\/calendar\/v3\/calendars\/([^/]+)\/events\/([^/]+)\/instances$/, (req) =>
      this.instances(req),
    );
    server.route('PATCH', /^\/calendar\/v3\/calendars\/([^/]+)\/events\/([^/]+)$/, (req) => this.patchEvent(req));
    server.route('DELETE', /^\/calendar\/v3\/calendars\/([^/]+)\/events\/([^/]+)$/, (req) => this.deleteEvent(req));
    server.route('POST', /^\/calendar\/v3\/calendars\/([^/]+)\/events$/, (req) => this.insertEvent(req));
    server.route('GET', /^\/calendar\/v3\/calendars\/([^/]+)\/events$/, async (req) => {
      if (this.pageDelayMs > 0) await new Promise((resolve) => setTimeout(resolve, this.pageDelayMs));
      return this.eventsList(req);
    });
  }

  /** A change made at Google by someone else (another client), as put() but keeping the fields not given. */
  edit(calendarId: string, id: string, change: calendar_v3.Schema$Event): void {
    const current = this.calendar(calendarId).events.get(id);
    if (!current) throw new Error(`no fake event ${id}`);
    const { changedAt: _, etag: __, ...rest } = current;
    this.put(calendarId, { ...rest, ...change, id });
  }

  event(calendarId: string, id: string): FakeEvent | undefined {
    return this.calendar(calendarId).events.get(id);
  }

  addCalendar(id: string, summary: string, timeZone: string): void {
    this.calendars.set(id, { id, summary, timeZone, events: new Map() });
  }

  /** Creates or changes an event (a new etag, seen by the next incremental sync). */
  put(calendarId: string, event: calendar_v3.Schema$Event & { id: string }): void {
    const calendar = this.calendar(calendarId);
    const changedAt = ++this.changes;
    calendar.events.set(event.id, {
      iCalUID: `${event.recurringEventId ?? event.id}@google.com`,
      status: 'confirmed',
      ...event,
      etag: `"${changedAt}"`,
      updated: new Date().toISOString(),
      changedAt,
    });
  }

  /** Deletes an event at Google: it stays as `status: cancelled` for the incremental syncs. */
  remove(calendarId: string, id: string): void {
    const calendar = this.calendar(calendarId);
    const changedAt = ++this.changes;
    calendar.events.set(id, { id, status: 'cancelled', etag: `"${changedAt}"`, changedAt });
  }

  /** Every sync token handed out so far stops working: the next incremental sync gets 410. */
  expireTokens(): void {
    this.generation++;
  }

  private calendar(id: string): FakeCalendarData {
    const calendar = this.calendars.get(id);
    if (!calendar) throw new Error(`no fake calendar ${id}`);
    return calendar;
  }

  private found(req: FakeRequest): { calendar: FakeCalendarData; event: FakeEvent } | FakeResponse {
    const calendar = this.calendars.get(req.params[0]!);
    const id = req.params[1]!;
    const event = calendar && (calendar.events.get(id) ?? this.ruleInstance(calendar, id));
    if (!calendar || !event || (event.status === 'cancelled' && !event.recurringEventId))
      return googleError(404, 'Not Found', 'notFound');
    return { calendar, event };
  }

  /**
   * An instance of a series that no exception changed yet, as Google names it (`<series>_<UTC
   * start>`): only if the series' rule places one there (read by ical.js), with the series'
   * fields and etag. Writing to it makes it an exception, as at Google.
   */
  private ruleInstance(calendar: FakeCalendarData, id: string): FakeEvent | undefined {
    const [, seriesId, stamp] = /^(.+)_(\d{8}T\d{6}Z)$/.exec(id) ?? [];
    const series = seriesId ? calendar.events.get(seriesId) : undefined;
    if (!series?.recurrence || series.status === 'cancelled') return undefined;
    const at = new Date(stamp!.replace(/^(\d{4})(\d\d)(\d\d)T(\d\d)(\d\d)(\d\d)Z$/, '$1-$2-$3T$4:$5:$6Z'));
    const { source } = fromGoogleEvent(series, calendar.timeZone);
    const occurrence = expandSeries(source!, at, new Date(at.getTime() + 1000)).occurrences.find(
      (o) => Date.parse(o.recurrenceId) === at.getTime(),
    );
    if (!occurrence) return undefined;
    const zone = series.start?.timeZone ?? calendar.timeZone;
    const { recurrence: _, ...fields } = series;
    return {
      ...fields,
      id,
      recurringEventId: series.id,
      originalStartTime: { dateTime: at.toISOString(), timeZone: zone },
      start: { dateTime: occurrence.start, timeZone: zone },
      end: { dateTime: occurrence.end, timeZone: zone },
    };
  }

  /** events.instances with originalStart (the one way the memex asks it): that instance, changed or as the rule has it. */
  private instances(req: FakeRequest): FakeResponse {
    const calendar = this.calendars.get(req.params[0]!);
    const series = calendar?.events.get(req.params[1]!);
    if (!calendar || !series || series.status === 'cancelled') return googleError(404, 'Not Found', 'notFound');
    const originalStart = req.url.searchParams.get('originalStart');
    if (!originalStart)
      return googleError(400, 'the fake answers events.instances only with originalStart', 'badRequest');
    const stamp = new Date(originalStart)
      .toISOString()
      .replace(/[-:]/g, '')
      .replace(/\.\d{3}/, '');
    const id = `${series.id}_${stamp}`;
    const instance = calendar.events.get(id) ?? this.ruleInstance(calendar, id);
    const shown = instance && (instance.status !== 'cancelled' || req.url.searchParams.get('showDeleted') === 'true');
    return { status: 200, body: { kind: 'calendar#events', items: shown ? [this.public(instance)] : [] } };
  }

  /** If-Match as Google checks it: a stale etag answers 412 and changes nothing. */
  private stale(req: FakeRequest, event: FakeEvent): FakeResponse | null {
    const ifMatch = req.headers['if-match'];
    return ifMatch && ifMatch !== event.etag ? googleError(412, 'Precondition Failed', 'conditionNotMet') : null;
  }

  private public({ changedAt: _, ...event }: FakeEvent): calendar_v3.Schema$Event {
    return { kind: 'calendar#event', ...event };
  }

  private getEvent(req: FakeRequest): FakeResponse {
    const found = this.found(req);
    return 'status' in found ? found : { status: 200, body: this.public(found.event) };
  }

  private patchEvent(req: FakeRequest): FakeResponse {
    const found = this.found(req);
    if ('status' in found) return found;
    const stale = this.stale(req, found.event);
    if (stale) return stale;
    const { changedAt: _, etag: __, ...current } = found.event;
    this.put(found.calendar.id, { ...current, ...(req.body as calendar_v3.Schema$Event), id: found.event.id });
    return { status: 200, body: this.public(found.calendar.events.get(found.event.id)!) };
  }

  private deleteEvent(req: FakeRequest): FakeResponse {
    const found = this.found(req);
    if ('status' in found) return found;
    const stale = this.stale(req, found.event);
    if (stale) return stale;
    const { changedAt: _, etag: __, ...current } = found.event;
    // An instance of a series stays, cancelled, so the series leaves it out.
    if (current.recurringEventId) this.put(found.calendar.id, { ...current, status: 'cancelled' });
    else this.remove(found.calendar.id, found.event.id);
    return { status: 204 };
  }

  private insertEvent(req: FakeRequest): FakeResponse {
    const calendar = this.calendars.get(req.params[0]!);
    if (!calendar) return googleError(404, 'Not Found', 'notFound');
    const id = `new${this.changes + 1}`;
    this.put(calendar.id, { ...(req.body as calendar_v3.Schema$Event), id });
    return { status: 200, body: this.public(calendar.events.get(id)!) };
  }

  private calendarList(): FakeResponse {
    return {
      status: 200,
      body: {
        kind: 'calendar#calendarList',
        items: [...this.calendars.values()].map((c) => ({
          kind: 'calendar#calendarListEntry',
          id: c.id,
          summary: c.summary,
          timeZone: c.timeZone,
          accessRole: 'owner',
        })),
      },
    };
  }

  private eventsList(req: FakeRequest): FakeResponse {
    const calendar = this.calendars.get(req.params[0]!);
    if (!calendar) return googleError(404, 'Not Found', 'notFound');
    const q = req.url.searchParams;
    const syncToken = q.get('syncToken');
    let since = 0;
    if (syncToken) {
      this.syncTokensSeen.push(syncToken);
      const [, generation, seq] = /^st-(\d+)-(\d+)$/.exec(syncToken) ?? [];
      since = Number(seq);
      if (Number(generation) !== this.generation || !Number.isInteger(since)) {
        return googleError(410, 'Sync token is no longer valid, a full sync is required.', 'fullSyncRequired');
      }
    }
    const showDeleted = q.get('showDeleted') === 'true' || syncToken !== null;
    const all = [...calendar.events.values()]
      .filter((e) => e.changedAt > since && (showDeleted || e.status !== 'cancelled' || e.recurringEventId))
      .sort((a, b) => a.changedAt - b.changedAt);
    const offset = Number(q.get('pageToken') ?? 0);
    const size = Number(q.get('maxResults') ?? 250);
    const page = all.slice(offset, offset + size);
    const more = offset + size < all.length;
    return {
      status: 200,
      body: {
        kind: 'calendar#events',
        summary: calendar.summary,
        timeZone: calendar.timeZone,
        items: page.map(({ changedAt: _, ...event }) => ({ kind: 'calendar#event', ...event })),
        ...(more
          ? { nextPageToken: String(offset + size) }
          : { nextSyncToken: `st-${this.generation}-${this.changes}` }),
      },
    };
  }
}
