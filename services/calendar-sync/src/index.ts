export { CalendarSyncModule } from './calendar-sync.module.js';
export { calendarMigrations } from './projection/migrations.js';
