/** A Postgres tstzrange literal: [start, end), or [start, start] for an event that takes no time (an empty range would overlap nothing). */
export function spanOf(start: Date, end: Date): string {
  return end > start
    ? `[${start.toISOString()},${end.toISOString()})`
    : `[${start.toISOString()},${start.toISOString()}]`;
}
