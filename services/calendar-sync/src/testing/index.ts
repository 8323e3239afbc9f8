/** Test and benchmark helpers (`@memex/calendar-sync/testing`): never imported by the service itself. */
export * from './generate.js';
export * from './harness.js';
export * from './google.js';
export * from './fake-calendar.js';
export * from './fake-people.js';
