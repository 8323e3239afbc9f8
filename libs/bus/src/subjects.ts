import { createHash } from 'node:crypto';

export const EVENTS_STREAM = 'MEMEX_EVENTS';
export const JOBS_STREAM = 'MEMEX_JOBS';
export const EVENT_SUBJECT_ROOT = 'memex.evt';
export const JOB_SUBJECT_ROOT = 'memex.job';

const SAFE_TOKEN = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * The NATS token of an aggregate (`item:01J…` → `01J…`). Ids that are not safe subject tokens
 * (keys with dots or `@`, e.g. `person:ann@example.com`) are replaced by a stable hash.
 */
export function aggregateToken(aggregate: string): string {
  const id = aggregate.slice(aggregate.indexOf(':') + 1);
  if (SAFE_TOKEN.test(id)) return id;
  return 'h' + createHash('sha256').update(aggregate).digest('base64url').slice(0, 32);
}

/** `memex.evt.<noun>.<verb>.<aggregate token>`: all events of one aggregate share their last token. */
export function eventSubject(type: string, aggregate: string): string {
  return `${EVENT_SUBJECT_ROOT}.${type}.${aggregateToken(aggregate)}`;
}

/** Every event about one aggregate, whatever its type. */
export function aggregateFilter(aggregate: string): string {
  return `${EVENT_SUBJECT_ROOT}.*.*.${aggregateToken(aggregate)}`;
}

/** Every event of a type (`note.put`), or of a noun (`note.*`). */
export function typeFilter(type: string): string {
  return `${EVENT_SUBJECT_ROOT}.${type}.>`;
}
