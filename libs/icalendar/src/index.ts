/** iCalendar and vCard reading on ical.js: events with instants and zones, series expansion, contact cards. */
export * from './calendar.js';
export { expandSeries, type Expansion, type Occurrence } from './expand.js';
export { splitSeries, type SeriesSplit } from './split.js';
export * from './vcard.js';
export { isContactsCsv, readContactsCsv } from './contacts-csv.js';
