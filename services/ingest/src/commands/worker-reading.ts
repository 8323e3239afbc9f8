import { RejectedItem, type IngestHandler, type ParsedItem } from '../domain/handlers/index.js';

/**
 * What a `memex worker` made of one of its files with ingest's own handlers (docs/sources.md
 * "Workers"): the reading ingest stores instead of reading the bytes itself. The original's
 * sha256 and size stand in for the bytes in `item.ingested`.
 */
export interface WorkerReading {
  sha256: string;
  size: number;
  /** The type the handler read it as (parameters kept, as the item reader returns it). */
  type: string;
  parsed: ParsedItem;
}

/** A child's own bytes (an attachment of a message file) travel as base64 inside the JSON. */
type Wire = Omit<ParsedItem, 'children' | 'contentBytes'> & { children?: Wire[]; contentBase64?: string };

function toWire({ children, contentBytes, ...item }: ParsedItem): Wire {
  return {
    ...item,
    ...(children ? { children: children.map(toWire) } : {}),
    ...(contentBytes ? { contentBase64: Buffer.from(contentBytes).toString('base64') } : {}),
  };
}

function fromWire({ children, contentBase64, ...item }: Wire): ParsedItem {
  return {
    ...item,
    ...(children ? { children: children.map(fromWire) } : {}),
    ...(contentBase64 !== undefined ? { contentBytes: Buffer.from(contentBase64, 'base64') } : {}),
  } as ParsedItem;
}

/** The worker's side: the reading as the bytes of its reply. */
export function encodeReading(reading: WorkerReading): Buffer {
  return Buffer.from(JSON.stringify({ ...reading, parsed: toWire(reading.parsed) }), 'utf8');
}

const SHA256 = /^[0-9a-f]{64}$/;

/**
 * Ingest's side: the reading a worker sent, checked as far as ingest relies on it (the events'
 * schemas check the meta when they are published). The worker runs ingest's own code with the
 * owner's credentials, so a reading is trusted as a parse is; a worker of another version that
 * sends something else is told so.
 */
export function decodeReading(bytes: Buffer, handler: IngestHandler, location: string): WorkerReading {
  const bad = (why: string) =>
    new RejectedItem(`the worker's reading of ${location} ${why} (is the worker the memex's version?)`, {
      unexpected: true,
    });
  let wire: Omit<WorkerReading, 'parsed'> & { parsed: Wire };
  try {
    wire = JSON.parse(bytes.toString('utf8')) as typeof wire;
  } catch {
    throw bad('is not JSON');
  }
  const { sha256, size, type, parsed } = wire ?? {};
  if (typeof sha256 !== 'string' || !SHA256.test(sha256)) throw bad('has no sha256 of the file');
  if (!Number.isSafeInteger(size) || size < 0) throw bad('has no size of the file');
  if (typeof type !== 'string') throw bad('names no type');
  if (typeof parsed !== 'object' || parsed === null || !handler.produces.includes(parsed.kind))
    throw bad(`is no ${handler.produces.join(' or ')}`);
  for (const key of ['identity', 'title', 'text'] as const)
    if (typeof parsed[key] !== 'string') throw bad(`has no ${key}`);
  if (!Array.isArray(parsed.warnings)) throw bad('has no warnings list');
  return { sha256, size, type, parsed: fromWire(parsed) };
}
