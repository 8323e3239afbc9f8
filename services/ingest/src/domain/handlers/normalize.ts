import type { ParsedItem } from './handler.js';

/**
 * Dates before this are placeholders, not facts: PDFs dated `D:00000101`, mail dated the Unix
 * epoch by a broken client (`Thu, 01 Jan 1970 00:00:00`), years written with two digits wrong.
 */
const EARLIEST = Date.UTC(1970, 0, 2);
/** Clocks drift and zones confuse: a day ahead is still plausible; a year like 3609 is not. */
const AHEAD_MS = 24 * 3600 * 1000;

/** Whether an ISO date can be when something happened: after 1970-01-01 and not (much) in the future. */
export function isPlausibleDate(iso: string | null | undefined, now = Date.now()): iso is string {
  if (!iso) return false;
  const time = Date.parse(iso);
  return !Number.isNaN(time) && time >= EARLIEST && time <= now + AHEAD_MS;
}

/** The date if plausible, else null. */
export function plausibleDate(iso: string | null | undefined, now = Date.now()): string | null {
  return isPlausibleDate(iso, now) ? iso : null;
}

/**
 * Every string of a value with NUL characters removed, and how many there were. Postgres text and
 * jsonb cannot hold U+0000, so an item carrying one (a PDF's text layer, a Markdown file, a mail
 * body) would be accepted and then fail in every projector. Buffers (an attachment's bytes) stay.
 */
function withoutNul<T>(value: T, removed: { count: number }): T {
  if (typeof value === 'string') {
    if (!value.includes('\0')) return value;
    const clean = value.replaceAll('\0', '');
    removed.count += value.length - clean.length;
    return clean as T;
  }
  if (value === null || typeof value !== 'object' || Buffer.isBuffer(value) || value instanceof Date) return value;
  if (Array.isArray(value)) return value.map((v) => withoutNul(v, removed)) as T;
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) out[withoutNul(key, removed)] = withoutNul(v, removed);
  return out as T;
}

/**
 * What every handler's result goes through before it becomes an event: text the read models can
 * store (no NUL) and a date that is either plausible or unknown, each change said in a warning.
 * Children too, one by one.
 */
export function normaliseParsed(item: ParsedItem, now = Date.now()): ParsedItem {
  const { children, contentBytes, ...rest } = item;
  const removed = { count: 0 };
  const clean = withoutNul(rest, removed);
  const warnings = [...clean.warnings];
  if (removed.count > 0) warnings.push('NUL characters (U+0000) removed: nothing downstream can store them');
  let occurredAt = clean.occurredAt;
  if (occurredAt !== null && !isPlausibleDate(occurredAt, now)) {
    warnings.push(`the date ${occurredAt} is implausible; the item is undated`);
    occurredAt = null;
  }
  return {
    ...clean,
    occurredAt,
    warnings,
    ...(contentBytes ? { contentBytes } : {}),
    ...(children ? { children: children.map((child) => normaliseParsed(child, now)) } : {}),
  } as ParsedItem;
}
