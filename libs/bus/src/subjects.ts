import { createHash } from 'node:crypto';

export const EVENTS_STREAM = 'MEMEX_EVENTS';
export const JOBS_STREAM = 'MEMEX_JOBS';
/** The media service's work queue: its durable consumer of item.ingested on MEMEX_EVENTS (photos and videos). */
export const MEDIA_QUEUE_CONSUMER = 'media_photos';
export const EVENT_SUBJECT_ROOT = 'memex.evt';
export const JOB_SUBJECT_ROOT = 'memex.job';
/** Identity claims (ingest's unique index over items' identities): `memex.claim.<sha256 hex>`. */
export const CLAIMS_STREAM = 'MEMEX_CLAIMS';
export const CLAIM_SUBJECT_ROOT = 'memex.claim';

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

/** The event type an event's subject names (`memex.evt.item.ingested.01J…` → `item.ingested`). */
export function typeOfSubject(subject: string): string {
  return subject.slice(EVENT_SUBJECT_ROOT.length + 1, subject.lastIndexOf('.'));
}

/** Every event about one aggregate, whatever its type. */
export function aggregateFilter(aggregate: string): string {
  return `${EVENT_SUBJECT_ROOT}.*.*.${aggregateToken(aggregate)}`;
}

/** Every event of a type (`note.put`), or of a noun (`note.*`). */
export function typeFilter(type: string): string {
  return `${EVENT_SUBJECT_ROOT}.${type}.>`;
}

/**
 * The consumer filters that deliver exactly these event types: one per type where the server
 * takes several (NATS 2.10+), else the one narrowest filter covering them all (NATS 2.9 takes
 * one per consumer; the reader then skips the types it did not ask for).
 */
export function typeFilters(types: readonly string[], severalAllowed: boolean): string[] {
  if (types.length === 0) return [`${EVENT_SUBJECT_ROOT}.>`];
  if (types.length === 1 || severalAllowed) return types.map(typeFilter);
  const nouns = new Set(types.map((type) => type.slice(0, type.indexOf('.'))));
  return nouns.size === 1 ? [typeFilter(`${[...nouns][0]}.*`)] : [`${EVENT_SUBJECT_ROOT}.>`];
}
