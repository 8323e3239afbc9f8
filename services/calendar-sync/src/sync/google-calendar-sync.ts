import { Inject, Injectable } from '@nestjs/common';
import type { Kysely } from 'kysely';
import { AccountsToken, CalendarEventSynced, CalendarSyncProgressed, type Actor } from '@memex/contracts';
import { callMethod, draftOf, EventPublisher, type Bus } from '@memex/bus';
import {
  brokeredAuth,
  calendarApi,
  googleEndpoints,
  GOOGLE_SCOPES,
  httpStatus,
  withRetry,
  type calendar_v3,
} from '@memex/google';
import { BUS, DATABASE, ServiceHost } from '@memex/runtime';
import { fromGoogleEvent } from '../domain/google-event.js';
import type { CalendarDatabase } from '../projection/schema.js';
import { AccountRuns } from './account-runs.js';

/** Events published per batch: a page of events.list at most. */
const PAGE_SIZE = 250;

export interface CalendarSyncReport {
  account: string;
  calendars: Array<{ calendar_id: string; mode: 'first' | 'incremental' | 'resync'; changed: number }>;
  /** The log sequence of the last event this sync wrote (0 when none). */
  seq: number;
}

function actorOf(account: string): Actor {
  return { kind: 'connector', id: `google-calendar:${account}` };
}

/**
 * Google Calendar → memex (Calendar v3): every calendar of every account that granted the
 * calendar scope, first sync by listing, then `events.list` with the sync token; a 410 (token
 * expired) lists everything again and publishes only the events whose etag changed, and deletes
 * the ones Google no longer has. Changed and cancelled instances of a series come as their own
 * events (singleEvents=false), so series are expanded here, by ical.js, not by Google.
 * A crash in the middle loses nothing: the sync token is logged only at the end, so the calendar
 * is listed again, and what was already logged at the same etag is not published twice.
 */
@Injectable()
export class GoogleCalendarSync {
  /** Its runs, and the accounts whose last one failed. */
  readonly runs: AccountRuns<CalendarSyncReport>;

  constructor(
    @Inject(DATABASE) private readonly db: Kysely<CalendarDatabase>,
    @Inject(BUS) private readonly bus: Bus,
    private readonly publisher: EventPublisher,
    private readonly host: ServiceHost,
  ) {
    this.runs = new AccountRuns(db, host, GOOGLE_SCOPES.calendar, (account) => this.syncAccount(account));
  }

  /** Syncs every account with the calendar scope (or one); one run at a time. */
  syncAll(only?: string): Promise<CalendarSyncReport[]> {
    return this.runs.run(only);
  }

  private async syncAccount(account: string): Promise<CalendarSyncReport> {
    // The access token comes from mail-sync, which owns the account: this service never holds a refresh token.
    const auth = brokeredAuth(() => callMethod(this.bus, AccountsToken, { account, scope: 'calendar' }));
    const api = calendarApi(auth, googleEndpoints());
    const calendars: calendar_v3.Schema$CalendarListEntry[] = [];
    let pageToken: string | undefined;
    do {
      const page = await withRetry(() => api.calendarList.list({ pageToken, maxResults: 250 }));
      calendars.push(...(page.data.items ?? []));
      pageToken = page.data.nextPageToken ?? undefined;
    } while (pageToken);
    const report: CalendarSyncReport = { account, calendars: [], seq: 0 };
    for (const calendar of calendars) {
      if (!calendar.id) continue;
      const { seq, ...synced } = await this.syncCalendar(api, account, calendar);
      report.calendars.push(synced);
      report.seq = Math.max(report.seq, seq);
    }
    return report;
  }

  private async syncCalendar(
    api: calendar_v3.Calendar,
    account: string,
    calendar: calendar_v3.Schema$CalendarListEntry,
  ): Promise<CalendarSyncReport['calendars'][number] & { seq: number }> {
    const calendarId = calendar.id!;
    const state = await this.db
      .selectFrom('google_calendars')
      .select('sync_token')
      .where('account', '=', account)
      .where('calendar_id', '=', calendarId)
      .executeTakeFirst();
    let mode: 'first' | 'incremental' | 'resync' = state?.sync_token ? 'incremental' : 'first';
    let result: { changed: number; syncToken: string | null };
    try {
      result = await this.listEvents(api, account, calendar, state?.sync_token ?? null);
    } catch (error) {
      if (httpStatus(error) !== 410) throw error;
      // The token expired (or Google wants a full sync): list everything, publish only what differs.
      mode = 'resync';
      result = await this.listEvents(api, account, calendar, null);
    }
    const { seq } = await this.publisher.publish(CalendarSyncProgressed, {
      subject: `gcal:${account}/${calendarId}`,
      actor: actorOf(account),
      data: {
        account,
        calendar_id: calendarId,
        summary: calendar.summary ?? calendarId,
        sync_token: result.syncToken,
        mode,
        changed: result.changed,
      },
    });
    return { calendar_id: calendarId, mode, changed: result.changed, seq };
  }

  /**
   * One pass of events.list: incremental from `syncToken`, else everything. Only events whose
   * etag differs from the one held are published; a full pass also deletes what Google no longer lists.
   */
  private async listEvents(
    api: calendar_v3.Calendar,
    account: string,
    calendar: calendar_v3.Schema$CalendarListEntry,
    syncToken: string | null,
  ): Promise<{ changed: number; syncToken: string | null }> {
    const calendarId = calendar.id!;
    const held = new Map(
      (
        await this.db
          .selectFrom('google_events')
          .select(['google_id', 'etag', 'uid'])
          .where('account', '=', account)
          .where('calendar_id', '=', calendarId)
          .execute()
      ).map((row) => [row.google_id, row]),
    );
    const seen = new Set<string>();
    let changed = 0;
    let pageToken: string | undefined;
    let nextSyncToken: string | null = null;
    do {
      const page = await withRetry(() =>
        api.events.list({
          calendarId,
          syncToken: syncToken ?? undefined,
          pageToken,
          showDeleted: true,
          singleEvents: false,
          maxResults: PAGE_SIZE,
        }),
      );
      const items = page.data.items ?? [];
      const uids = new Map<string, string>();
      for (const item of items) if (item.id && item.iCalUID) uids.set(item.id, item.iCalUID);
      const drafts = [];
      for (const item of items) {
        if (!item.id) continue;
        seen.add(item.id);
        const known = held.get(item.id);
        const gone = item.status === 'cancelled' && !item.recurringEventId;
        if (gone ? !known : known?.etag === item.etag) continue;
        const masterUid = item.recurringEventId
          ? (uids.get(item.recurringEventId) ?? held.get(item.recurringEventId)?.uid)
          : undefined;
        drafts.push(
          draftOf(CalendarEventSynced, {
            subject: `gcal:${account}/${calendarId}/${item.id}`,
            actor: actorOf(account),
            data: {
              account,
              calendar_id: calendarId,
              google_id: item.id,
              etag: item.etag ?? '',
              deleted: gone,
              ...(gone
                ? {}
                : {
                    event: fromGoogleEvent(item, calendar.timeZone ?? null, masterUid) as unknown as Record<
                      string,
                      unknown
                    >,
                  }),
            },
          }),
        );
      }
      if (drafts.length > 0) await this.publisher.publishAll(drafts);
      changed += drafts.length;
      pageToken = page.data.nextPageToken ?? undefined;
      nextSyncToken = page.data.nextSyncToken ?? null;
    } while (pageToken);
    if (syncToken === null) {
      const drafts = [...held.keys()]
        .filter((id) => !seen.has(id))
        .map((id) =>
          draftOf(CalendarEventSynced, {
            subject: `gcal:${account}/${calendarId}/${id}`,
            actor: actorOf(account),
            data: { account, calendar_id: calendarId, google_id: id, etag: '', deleted: true },
          }),
        );
      if (drafts.length > 0) await this.publisher.publishAll(drafts);
      changed += drafts.length;
    }
    return { changed, syncToken: nextSyncToken };
  }
}
