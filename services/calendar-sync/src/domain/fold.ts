import type { CalendarEvent } from '@memex/icalendar';
import type { ComponentsTable, EventsTable } from '../projection/schema.js';

export type Component = Pick<
  ComponentsTable,
  'item_id' | 'rid' | 'method' | 'sequence' | 'data' | 'labels' | 'kind' | 'spam' | 'seq'
>;

/** An event as its components add up to, before it is placed in time. */
export interface FoldedEvent {
  rid: string;
  data: CalendarEvent;
  items: string[];
  labels: string[];
  kind: string;
  spam: boolean;
}

/** Higher SEQUENCE wins (RFC 5546); between equals, the one logged later. */
function byRevision(a: Component, b: Component): number {
  return a.sequence - b.sequence || a.seq - b.seq;
}

/**
 * What the items say about one UID, per instance (rid):
 * - the latest revision of the event (REQUEST, PUBLISH, or a plain file) is the event;
 * - a CANCEL of the same or a later revision cancels it (a CANCEL of the series cancels every instance);
 * - a REPLY changes only its attendees' answers, in the order the replies were logged.
 * Every item that spoke of it is kept, so an invitation and the calendar show the same event.
 */
export function foldComponents(components: Component[]): FoldedEvent[] {
  const byRid = new Map<string, Component[]>();
  for (const c of components) byRid.set(c.rid, [...(byRid.get(c.rid) ?? []), c]);
  const seriesCancelled = (byRid.get('') ?? []).some((c) => c.method === 'CANCEL');
  const out: FoldedEvent[] = [];
  for (const [rid, list] of byRid) {
    const revisions = list.filter((c) => c.method !== 'REPLY').sort(byRevision);
    let state: Component | null = null;
    let data: CalendarEvent | null = null;
    for (const c of revisions) {
      if (c.method === 'CANCEL') {
        data = { ...(data ?? c.data), status: 'cancelled' };
        state ??= c;
      } else {
        data = c.data;
        state = c;
      }
    }
    if (!state || !data) continue; // Only replies so far: nothing to show until the event arrives.
    if (seriesCancelled) data = { ...data, status: 'cancelled' };
    const attendees = [...data.attendees];
    for (const reply of list.filter((c) => c.method === 'REPLY').sort((a, b) => a.seq - b.seq)) {
      for (const answer of reply.data.attendees) {
        const at = attendees.findIndex((a) => a.address === answer.address);
        if (at >= 0) attendees[at] = { ...attendees[at]!, status: answer.status };
        else attendees.push(answer);
      }
    }
    out.push({
      rid,
      data: { ...data, attendees },
      items: [...new Set(list.map((c) => c.item_id))].sort(),
      labels: state.labels,
      kind: state.kind,
      spam: state.spam,
    });
  }
  return out;
}

export function eventRow(uid: string, event: FoldedEvent, expandedUntil: Date | null): EventsTable {
  const d = event.data;
  return {
    uid,
    rid: event.rid,
    status: d.status,
    summary: d.summary,
    location: d.location,
    all_day: d.allDay,
    start: new Date(d.start),
    end: new Date(d.end),
    start_date: d.startDate,
    end_date: d.endDate,
    time_zone: d.timeZone,
    transparent: d.transparent,
    organizer: d.organizer,
    attendees: d.attendees,
    source: d.source,
    expanded_until: expandedUntil,
    items: event.items,
    labels: event.labels,
    kind: event.kind,
    spam: event.spam,
  };
}
