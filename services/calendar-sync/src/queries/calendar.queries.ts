import { Inject, Injectable } from '@nestjs/common';
import { sql, type Kysely, type Selectable } from 'kysely';
import { CalendarFreebusy, CalendarList, MemexError, type ParamsOf, type ResultOf, type Scope } from '@memex/contracts';
import type { CalendarEvent } from '@memex/icalendar';
import { visibleTo } from '@memex/db';
import { DATABASE, RpcMethod, type CallContext } from '@memex/runtime';
import type { FoldedEvent } from '../domain/fold.js';
import { placeInstances } from '../domain/instances.js';
import type { CalendarDatabase, EventsTable } from '../projection/schema.js';

type EventRow = Selectable<EventsTable>;
type Instance = ResultOf<typeof CalendarList>['instances'][number];
const DEFAULT_LIMIT = 2_000;
/** The longest range one call may ask for: enough for a year's agenda. */
const MAX_RANGE_DAYS = 400;

function range(params: { from: string; to: string }): { from: Date; to: Date } {
  const from = new Date(params.from);
  const to = new Date(params.to);
  if (!(to > from)) throw new MemexError('invalid_params', `to (${params.to}) must be after from (${params.from})`);
  if (to.getTime() - from.getTime() > MAX_RANGE_DAYS * 86_400_000) {
    throw new MemexError('invalid_params', `the range is longer than ${MAX_RANGE_DAYS} days: ask for it in parts`);
  }
  return { from, to };
}

/** The day an instant falls on in a zone (all-day instances of a series), or in UTC when the zone is not one Intl knows. */
function dayIn(instant: Date, zone: string | null): string {
  try {
    return new Intl.DateTimeFormat('en-CA', {
      timeZone: zone ?? 'UTC',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
    }).format(instant);
  } catch {
    return instant.toISOString().slice(0, 10);
  }
}

/** An events row as the expansion reads it (the fields placeInstances uses). */
function foldedFromRow(row: EventRow): FoldedEvent {
  const data = {
    status: row.status,
    start: row.start.toISOString(),
    end: row.end.toISOString(),
    transparent: row.transparent,
    source: row.source,
  } as CalendarEvent;
  return { rid: row.rid, data, items: row.items, labels: row.labels, kind: row.kind, spam: row.spam };
}

function instanceOf(event: EventRow, rid: string, start: Date, end: Date): Instance {
  const allDayDates = event.all_day && rid !== '' && event.rid === '';
  return {
    uid: event.uid,
    recurrence_id: rid === '' ? null : rid,
    summary: event.summary,
    location: event.location,
    start: start.toISOString(),
    end: end.toISOString(),
    all_day: event.all_day,
    start_date: allDayDates ? dayIn(start, event.time_zone) : event.start_date,
    end_date: allDayDates ? dayIn(end, event.time_zone) : event.end_date,
    time_zone: event.time_zone,
    status: event.status === 'tentative' ? 'tentative' : 'confirmed',
    recurring: rid !== '',
    modified: event.rid !== '',
    transparent: event.transparent,
    organizer: event.organizer,
    attendees: event.attendees,
    items: event.items,
  };
}

/** memex.calendar.list and memex.calendar.freebusy, over every calendar, within the caller's scope. */
@Injectable()
export class CalendarQueries {
  constructor(@Inject(DATABASE) private readonly db: Kysely<CalendarDatabase>) {}

  @RpcMethod(CalendarList)
  async list(params: ParamsOf<typeof CalendarList>, call: CallContext): Promise<ResultOf<typeof CalendarList>> {
    const { from, to } = range(params);
    const limit = params.limit ?? DEFAULT_LIMIT;
    const found = await this.overlapping(from, to, call.scope, limit + 1);
    const instances = found.sort((a, b) => a.start.localeCompare(b.start) || a.uid.localeCompare(b.uid));
    return { instances: instances.slice(0, limit), truncated: instances.length > limit };
  }

  @RpcMethod(CalendarFreebusy)
  async freebusy(
    params: ParamsOf<typeof CalendarFreebusy>,
    call: CallContext,
  ): Promise<ResultOf<typeof CalendarFreebusy>> {
    const { from, to } = range(params);
    const busy = (await this.overlapping(from, to, call.scope, Number.MAX_SAFE_INTEGER, true))
      .map((i) => ({
        start: Math.max(Date.parse(i.start), from.getTime()),
        end: Math.min(Date.parse(i.end), to.getTime()),
      }))
      .filter((i) => i.end > i.start)
      .sort((a, b) => a.start - b.start);
    const merged: Array<{ start: number; end: number }> = [];
    for (const interval of busy) {
      const last = merged.at(-1);
      if (last && interval.start <= last.end) last.end = Math.max(last.end, interval.end);
      else merged.push({ ...interval });
    }
    return {
      busy: merged.map((i) => ({ start: new Date(i.start).toISOString(), end: new Date(i.end).toISOString() })),
    };
  }

  /**
   * The instances overlapping [from, to): those the projector placed, plus, for series whose
   * placed instances stop before `to`, the rest expanded now (with their changed instances).
   */
  private async overlapping(from: Date, to: Date, scope: Scope, limit: number, busyOnly = false): Promise<Instance[]> {
    const visible = visibleTo(scope, { kind: 'e.kind', labels: 'e.labels', spam: 'e.spam' });
    let placed = this.db
      .selectFrom('instances as i')
      .innerJoin('events as e', (join) => join.onRef('e.uid', '=', 'i.uid').onRef('e.rid', '=', 'i.event_rid'))
      .selectAll('e')
      .select(['i.rid as instance_rid', 'i.start as instance_start', 'i.end as instance_end'])
      .where(
        sql<boolean>`i.span && tstzrange(${from.toISOString()}::timestamptz, ${to.toISOString()}::timestamptz, '[)')`,
      )
      .where(visible)
      .orderBy('i.start')
      .limit(limit);
    if (busyOnly) placed = placed.where('i.busy', '=', true);
    const rows = await placed.execute();
    const out = rows.map((r) => instanceOf(r, r.instance_rid, r.instance_start, r.instance_end));
    const open = await this.db
      .selectFrom('events as e')
      .selectAll('e')
      .where('e.expanded_until', '<', to)
      .where('e.start', '<', to)
      .where(visible)
      .execute();
    for (const series of open) {
      if (busyOnly && series.transparent) continue;
      const changed = await this.db
        .selectFrom('events')
        .selectAll()
        .where('uid', '=', series.uid)
        .where('rid', '<>', '')
        .execute();
      const byRid = new Map([series, ...changed].map((row) => [row.rid, row]));
      const since = series.expanded_until! > from ? series.expanded_until! : from;
      const { instances } = placeInstances([series, ...changed].map(foldedFromRow), since, to);
      for (const i of instances) {
        // Changed instances were placed by the projector already: only the rules' occurrences are new here.
        if (i.eventRid !== '' || i.start < series.expanded_until!) continue;
        out.push(instanceOf(byRid.get(i.eventRid)!, i.rid, i.start, i.end));
      }
    }
    return out;
  }
}
