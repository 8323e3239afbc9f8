import { Module, type DynamicModule } from '@nestjs/common';
import type { MemexConfig } from '@memex/config';
import { MemexModule } from '@memex/runtime';
import { CalendarProjector } from './projection/calendar.projector.js';
import { CalendarCommands } from './commands/calendar.commands.js';
import { BriefQueries } from './queries/brief.queries.js';
import { CalendarQueries } from './queries/calendar.queries.js';
import { GoogleCalendarSync } from './sync/google-calendar-sync.js';
import { GoogleCalendarWrites } from './sync/google-calendar-writes.js';
import { GoogleContactsSync } from './sync/google-contacts-sync.js';
import { ContactCandidates } from './sync/contact-candidates.js';
import { GoogleContactsWrites } from './sync/google-contacts-writes.js';
import { SyncScheduler } from './sync/scheduler.js';

/** Calendars (seed §6.4): Google Calendar, calendar files and invitations in mail, placed in time; free/busy; meeting briefs. */
@Module({})
export class CalendarSyncModule {
  static register(config: MemexConfig): DynamicModule {
    return {
      module: CalendarSyncModule,
      imports: [MemexModule.forService({ service: 'calendar-sync', config, schema: 'calendar' })],
      providers: [
        CalendarProjector,
        CalendarQueries,
        BriefQueries,
        GoogleCalendarSync,
        GoogleCalendarWrites,
        GoogleContactsSync,
        GoogleContactsWrites,
        ContactCandidates,
        SyncScheduler,
        CalendarCommands,
      ],
    };
  }
}
