import { Injectable } from '@nestjs/common';
import { CalendarSync, type ParamsOf, type ResultOf } from '@memex/contracts';
import { RpcMethod } from '@memex/runtime';
import { GoogleCalendarSync } from '../sync/google-calendar-sync.js';

/** memex.calendar.sync: a sync now rather than at the next poll. */
@Injectable()
export class SyncCommands {
  constructor(private readonly sync: GoogleCalendarSync) {}

  @RpcMethod(CalendarSync)
  async syncNow(params: ParamsOf<typeof CalendarSync>): Promise<ResultOf<typeof CalendarSync>> {
    const reports = await this.sync.syncAll(params.account);
    return {
      accounts: reports.map(({ account, calendars }) => ({ account, calendars })),
      seq: Math.max(0, ...reports.map((r) => r.seq)),
    };
  }
}
