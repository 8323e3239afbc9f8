import { Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import type { HealthProblems } from '@memex/runtime';
import { GoogleCalendarSync } from './google-calendar-sync.js';
import { GoogleContactsSync } from './google-contacts-sync.js';

/**
 * Polls Google every MEMEX_CALENDAR_POLL_MS (default 2 minutes; 0: only on memex.calendar.sync /
 * memex.contacts.sync), and says in the service's health which accounts' syncs fail.
 */
@Injectable()
export class SyncScheduler implements OnApplicationBootstrap, OnApplicationShutdown, HealthProblems {
  private readonly logger = new Logger('calendar-sync');
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly calendars: GoogleCalendarSync,
    private readonly contacts: GoogleContactsSync,
  ) {}

  onApplicationBootstrap(): void {
    const every = Number(process.env.MEMEX_CALENDAR_POLL_MS ?? 120_000);
    if (every > 0) this.timer = setInterval(() => void this.poll(), every);
  }

  /**
   * Each account whose calendar or contacts sync failed last, until one succeeds — but a refused
   * grant, which mail-sync (the account's owner) already says.
   */
  async healthProblems(): Promise<string[]> {
    const problems: string[] = [];
    for (const [what, runs] of [
      ['calendar', this.calendars.runs],
      ['contacts', this.contacts.runs],
    ] as const) {
      for (const [account, { reason, since }] of runs.failures)
        if (!reason.includes('needs_reauth'))
          problems.push(`the ${what} sync of ${account} fails since ${since.toISOString()}: ${reason}`);
    }
    return problems;
  }

  onApplicationShutdown(): void {
    clearInterval(this.timer);
  }

  private async poll(): Promise<void> {
    await this.calendars
      .syncAll()
      .catch((error: unknown) => this.logger.warn(`calendar sync failed: ${String(error)}`));
    await this.contacts.syncAll().catch((error: unknown) => this.logger.warn(`contacts sync failed: ${String(error)}`));
  }
}
