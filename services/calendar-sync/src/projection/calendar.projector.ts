import { Injectable } from '@nestjs/common';
import { sql, type Transaction } from 'kysely';
import {
  AccountConnected,
  AccountRemoved,
  CalendarEventSynced,
  CalendarSyncProgressed,
  ContactCandidateDismissed,
  ContactSynced,
  ContactsSyncProgressed,
  ItemDeleted,
  ItemIngested,
  calendarOf,
  type EventOf,
} from '@memex/contracts';
import type { CalendarEvent } from '@memex/icalendar';
import { On, OnBatch, Projector, type LoggedOf } from '@memex/runtime';
import { eventRow, foldComponents, type Component } from '../domain/fold.js';
import { expansionHorizon, placeInstances } from '../domain/instances.js';
import { spanOf } from '../domain/span.js';
import { calendarMigrations } from './migrations.js';
import type { CalendarDatabase } from './schema.js';

type Trx = Transaction<CalendarDatabase>;

const FOREVER_AGO = new Date(-8.64e15);

/** The source id of a Google event in `components` (it is no memex item). */
export function googleSource(account: string, calendarId: string, googleId: string): string {
  return `google:${account}/${calendarId}/${googleId}`;
}
const FOREVER_AHEAD = new Date(8.64e15);

/**
 * Builds the calendar from the items that carry one (calendar files, invitations and their
 * answers in mail; later Google Calendar): every VEVENT is kept as its item said it, and each UID
 * touched is folded again and its instances placed anew, so applying an event twice, or replaying
 * the log, leaves the same rows.
 */
@Injectable()
@Projector({ name: 'calendar', migrations: calendarMigrations })
export class CalendarProjector {
  /**
   * An import is thousands of items, few of them calendars: an item that carries no calendar and
   * spoke of none before changes nothing, so one statement finds those that did, and only they
   * and the calendars are applied, one by one in order.
   */
  @OnBatch(ItemIngested)
  async itemsIngested(trx: Trx, run: LoggedOf<typeof ItemIngested>[]): Promise<void> {
    const calendars = run.filter(({ event }) => calendarOf(event.data)).map(({ event }) => event.data.id);
    const plain = run.filter(({ event }) => !calendarOf(event.data)).map(({ event }) => event.data.id);
    const spoke = new Set([
      ...calendars,
      ...(plain.length === 0
        ? []
        : await trx
            .selectFrom('components')
            .select('item_id')
            .distinct()
            .where(sql<boolean>`item_id = any(${plain}::text[])`)
            .execute()
      ).map((row) => row.item_id),
    ]);
    for (const { seq, event } of run) if (spoke.has(event.data.id)) await this.itemIngested(trx, event, seq);
  }

  private async itemIngested(trx: Trx, event: EventOf<typeof ItemIngested>, seq: number): Promise<void> {
    const calendar = calendarOf(event.data);
    const before = await this.forget(trx, event.data.id);
    if (!calendar) {
      if (before.length > 0) await this.refresh(trx, before);
      return;
    }
    const method = calendar.method ?? '';
    const rows = calendar.events.map((data, position) => ({
      item_id: event.data.id,
      position,
      uid: data.uid,
      rid: data.recurrenceId ?? '',
      method,
      sequence: data.sequence,
      data: JSON.stringify(data) as unknown as CalendarEvent,
      labels: event.labels,
      kind: event.kind ?? event.data.kind,
      spam: event.spam ?? false,
      recorded_at: new Date(event.recorded_at),
      seq,
    }));
    for (let i = 0; i < rows.length; i += 1000)
      await trx
        .insertInto('components')
        .values(rows.slice(i, i + 1000))
        .execute();
    await this.refresh(trx, [...new Set([...before, ...rows.map((r) => r.uid)])]);
  }

  /**
   * A Google event is one component, under a source id of its own (`google:<account>/<calendar>/<id>`).
   * A sync logs them by the page: a run is applied at once (the last word on each event wins, as
   * one by one), and each UID it touched is folded again once.
   */
  @OnBatch(CalendarEventSynced)
  async eventsSynced(trx: Trx, run: LoggedOf<typeof CalendarEventSynced>[]): Promise<void> {
    const last = new Map<string, LoggedOf<typeof CalendarEventSynced>>();
    for (const logged of run) {
      const { account, calendar_id, google_id } = logged.event.data;
      last.set(googleSource(account, calendar_id, google_id), logged);
    }
    const sources = [...last.keys()];
    const before = await trx.deleteFrom('components').where('item_id', 'in', sources).returning('uid').execute();
    const kept = [...last.entries()].filter(([, { event }]) => !event.data.deleted && event.data.event);
    const gone = [...last.values()]
      .filter(({ event }) => event.data.deleted || !event.data.event)
      .map(({ event }) => event.data);
    for (const d of gone) {
      await trx
        .deleteFrom('google_events')
        .where('account', '=', d.account)
        .where('calendar_id', '=', d.calendar_id)
        .where('google_id', '=', d.google_id)
        .execute();
    }
    const rows = kept.map(([source, { event, seq }]) => {
      const data = event.data.event as unknown as CalendarEvent;
      return {
        component: {
          item_id: source,
          position: 0,
          uid: data.uid,
          rid: data.recurrenceId ?? '',
          method: '',
          sequence: data.sequence,
          data: JSON.stringify(data) as unknown as CalendarEvent,
          labels: [] as string[],
          kind: 'event',
          spam: false,
          recorded_at: new Date(event.recorded_at),
          seq,
        },
        held: {
          account: event.data.account,
          calendar_id: event.data.calendar_id,
          google_id: event.data.google_id,
          etag: event.data.etag,
          uid: data.uid,
        },
      };
    });
    for (let i = 0; i < rows.length; i += 1000) {
      const chunk = rows.slice(i, i + 1000);
      await trx
        .insertInto('components')
        .values(chunk.map((r) => r.component))
        .execute();
      await trx
        .insertInto('google_events')
        .values(chunk.map((r) => r.held))
        .onConflict((oc) =>
          oc
            .columns(['account', 'calendar_id', 'google_id'])
            .doUpdateSet((eb) => ({ etag: eb.ref('excluded.etag'), uid: eb.ref('excluded.uid') })),
        )
        .execute();
    }
    const uids = [...new Set([...before.map((r) => r.uid), ...rows.map((r) => r.held.uid)])];
    if (uids.length > 0) await this.refresh(trx, uids);
  }

  @On(CalendarSyncProgressed)
  async syncProgressed(trx: Trx, event: EventOf<typeof CalendarSyncProgressed>): Promise<void> {
    const { account, calendar_id, summary, sync_token } = event.data;
    const row = { summary, sync_token, synced_at: new Date(event.occurred_at) };
    await trx
      .insertInto('google_calendars')
      .values({ account, calendar_id, ...row })
      .onConflict((oc) => oc.columns(['account', 'calendar_id']).doUpdateSet(row))
      .execute();
  }

  @On(ContactSynced)
  async contactSynced(trx: Trx, event: EventOf<typeof ContactSynced>): Promise<void> {
    const { account, resource_name, etag, item_id } = event.data;
    if (item_id === null) {
      await trx
        .deleteFrom('google_contacts')
        .where('account', '=', account)
        .where('resource_name', '=', resource_name)
        .execute();
      return;
    }
    const row = {
      etag,
      item_id,
      fields: event.data.fields ? (JSON.stringify(event.data.fields) as never) : null,
      emails: event.data.emails ?? null,
    };
    await trx
      .insertInto('google_contacts')
      .values({ account, resource_name, ...row })
      .onConflict((oc) => oc.columns(['account', 'resource_name']).doUpdateSet(row))
      .execute();
  }

  @On(ContactsSyncProgressed)
  async contactsProgressed(trx: Trx, event: EventOf<typeof ContactsSyncProgressed>): Promise<void> {
    const { account, sync_token } = event.data;
    const row = { sync_token, synced_at: new Date(event.occurred_at) };
    await trx
      .insertInto('google_contact_accounts')
      .values({ account, ...row })
      .onConflict((oc) => oc.column('account').doUpdateSet(row))
      .execute();
  }

  @On(ContactCandidateDismissed)
  async candidateDismissed(trx: Trx, event: EventOf<typeof ContactCandidateDismissed>): Promise<void> {
    await trx
      .insertInto('contact_candidates_dismissed')
      .values({ account: event.data.account, address: event.data.address })
      .onConflict((oc) => oc.columns(['account', 'address']).doNothing())
      .execute();
  }

  @On(AccountConnected)
  async accountConnected(trx: Trx, event: EventOf<typeof AccountConnected>): Promise<void> {
    const { account, scopes } = event.data;
    await trx
      .insertInto('google_accounts')
      .values({ account, scopes })
      .onConflict((oc) => oc.column('account').doUpdateSet({ scopes }))
      .execute();
  }

  /** The account's calendars stop syncing; what was synced stays, like its mail. */
  @On(AccountRemoved)
  async accountRemoved(trx: Trx, event: EventOf<typeof AccountRemoved>): Promise<void> {
    await trx.deleteFrom('google_accounts').where('account', '=', event.data.account).execute();
  }

  @On(ItemDeleted)
  async itemDeleted(trx: Trx, event: EventOf<typeof ItemDeleted>): Promise<void> {
    const uids = await this.forget(trx, event.data.id);
    if (uids.length > 0) await this.refresh(trx, uids);
  }

  /** Drops what an item said (it is replaced or gone); the UIDs it spoke of. */
  private async forget(trx: Trx, itemId: string): Promise<string[]> {
    const gone = await trx.deleteFrom('components').where('item_id', '=', itemId).returning('uid').execute();
    return [...new Set(gone.map((r) => r.uid))];
  }

  /** Folds each UID's components again and places its instances up to the expansion horizon. */
  private async refresh(trx: Trx, uids: string[]): Promise<void> {
    // A calendar file of to-dos alone names no event.
    if (uids.length === 0) return;
    const components = await trx
      .selectFrom('components')
      .select(['uid', 'item_id', 'rid', 'method', 'sequence', 'data', 'labels', 'kind', 'spam', 'seq', 'recorded_at'])
      .where('uid', 'in', uids)
      .orderBy('seq')
      .orderBy('position')
      .execute();
    await trx.deleteFrom('instances').where('uid', 'in', uids).execute();
    await trx.deleteFrom('events').where('uid', 'in', uids).execute();
    const byUid = new Map<string, Array<Component & { recorded_at: Date }>>();
    for (const c of components) byUid.set(c.uid, [...(byUid.get(c.uid) ?? []), c]);
    const eventRows = [];
    const instanceRows = [];
    for (const [uid, list] of byUid) {
      const folded = foldComponents(list);
      const master = folded.find((e) => e.rid === '');
      // Deterministic on replay: how far ahead depends on when the items were logged, not on the clock.
      const latest = list.reduce((at, c) => (c.recorded_at > at ? c.recorded_at : at), new Date(0));
      const horizon = master?.data.source ? expansionHorizon(new Date(master.data.start), latest) : FOREVER_AHEAD;
      const { instances, expandedUntil } = placeInstances(folded, FOREVER_AGO, horizon);
      for (const event of folded) eventRows.push(eventRow(uid, event, event.rid === '' ? expandedUntil : null));
      for (const i of instances) {
        instanceRows.push({
          uid,
          rid: i.rid,
          event_rid: i.eventRid,
          span: spanOf(i.start, i.end),
          start: i.start,
          end: i.end,
          busy: i.busy,
        });
      }
    }
    for (let i = 0; i < eventRows.length; i += 1000) {
      const chunk = eventRows.slice(i, i + 1000).map((r) => ({
        ...r,
        organizer: r.organizer ? JSON.stringify(r.organizer) : null,
        attendees: JSON.stringify(r.attendees),
      }));
      await trx
        .insertInto('events')
        .values(chunk as never)
        .execute();
    }
    for (let i = 0; i < instanceRows.length; i += 2000) {
      await trx
        .insertInto('instances')
        .values(instanceRows.slice(i, i + 2000).map((r) => ({ ...r, span: sql`${r.span}::tstzrange` as never })))
        .execute();
    }
  }
}
