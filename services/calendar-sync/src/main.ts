import { runService } from '@memex/runtime';
import { CalendarSyncModule } from './calendar-sync.module.js';

await runService('calendar-sync', (config) => CalendarSyncModule.register(config));
