import { Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { GoogleCalendarSync } from './google-calendar-sync.js';
import { GoogleContactsSync } from './google-contacts-sync.js';

/** Polls Google every MEMEX_CALENDAR_POLL_MS (default 2 minutes; 0: only on memex.calendar.sync / memex.contacts.sync). */
@Injectable()
export class SyncScheduler implements OnApplicationBootstrap, OnApplicationShutdown {
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
