import { INGEST_REQUEST_LIMIT_BYTES, MemexError, type Actor, type Scope } from '@memex/contracts';
import type { Static } from '@sinclair/typebox';
import type { IngestItem } from '@memex/contracts';
import {
  extractOnWorker,
  InvalidLocation,
  LocationUnreachable,
  parseLocation,
  TooLarge,
  type Locations,
  type NatsManyRequester,
} from '@memex/locations';
import {
  baseType,
  formatBytes,
  RejectedItem,
  type HandlerRegistry,
  type IngestHandler,
  type ParsedItem,
} from '../domain/handlers/index.js';
import type { ItemReader } from './parse.js';
import { decodeReading } from './worker-reading.js';

export type IngestItemParams = Static<typeof IngestItem>;

/** Namespaces of the memex's own sources and connectors: a client can never write into them (seed §4.5). */
const RESERVED_KINDS = new Set([
  'import',
  'memex',
  'notes',
  'gmail',
  'imap',
  'google',
  'calendar',
  'contacts',
  'people',
  'mirrored',
  'connector',
  'head',
  'session',
]);
const SOURCE_KIND = /^[a-z][a-z0-9_-]{0,63}$/;
const SOURCE_ID = /^[A-Za-z0-9][A-Za-z0-9._@+-]{0,199}$/;
const LABEL = /^[^\s,\0]{1,200}$/;
const EXTERNAL_ID_MAX = 2000;

/**
 * Connector namespaces a connector service (not a client: the gateway never names a caller
 * `connector`) ingests into, as `<kind>:<account>`; its items are `mirrored`.
 */
const CONNECTOR_KINDS = new Set(['gmail', 'imap', 'contacts']);

/** Where an item comes from once accepted: `import:<kind>` (the client's id kept), or a connector's own namespace. */
export interface ItemSource {
  kind: string;
  id: string;
}

/** An item that passed every check and its handler: ready for identity and storage. */
export interface PreparedItem {
  index: number;
  handler: IngestHandler;
  /** The request's type without parameters. */
  contentType: string;
  /**
   * The original's bytes; for a file its worker extracted (docs/sources.md "Workers") only their
   * sha256 and size: the memex never had the bytes.
   */
  original: Buffer | { sha256: string; size: number };
  /** Where the bytes live when the memex keeps no copy of them (in-place files); null for blobs. */
  location: string | null;
  parsed: ParsedItem;
  source: ItemSource;
  externalId: string | null;
  labels: string[];
  /** The sender's id of the batch it came in, the same each time that batch is sent again; or null. */
  batch: string | null;
}

/** The server-side source of an imported item; a reason when the client's source is not allowed. */
export function importSource(source: IngestItemParams['source'], caller?: Actor): ItemSource {
  const kind = source.kind;
  if (caller?.kind === 'connector' && CONNECTOR_KINDS.has(kind) && source.id) return { kind, id: source.id };
  if (kind.startsWith('import')) {
    throw new RejectedItem(
      `source.kind ${JSON.stringify(kind)}: give the bare kind (e.g. "mbox"); the server names the source import:<kind>[:<id>]`,
    );
  }
  if (!SOURCE_KIND.test(kind)) {
    throw new RejectedItem(
      `source.kind ${JSON.stringify(kind)} must be lowercase letters, digits, - or _ (e.g. "mbox", "maildir", "folder")`,
    );
  }
  if (RESERVED_KINDS.has(kind)) {
    throw new RejectedItem(
      `source.kind ${JSON.stringify(kind)} is reserved for the memex and its connectors; imported items are import:<kind>[:<id>], so name the kind after the archive (e.g. "mbox", "takeout")`,
    );
  }
  const id = source.id ?? '';
  if (id !== '' && !SOURCE_ID.test(id)) {
    throw new RejectedItem(
      `source.id ${JSON.stringify(id)} must be up to 200 letters, digits, . _ @ + or - (no spaces)`,
    );
  }
  return { kind: `import:${kind}`, id };
}

/** The scope labels an item gets: the owner's choice, or within an agent's own labels (its default). */
export function itemLabels(requested: string[] | undefined, scope: Scope): string[] {
  if (scope.kind === 'agent') {
    const outside = (requested ?? []).filter((label) => !scope.labels.includes(label));
    if (outside.length > 0)
      throw new RejectedItem(
        `label ${JSON.stringify(outside[0])} is outside the caller's scope (${scope.labels.join(', ') || 'no labels'})`,
      );
  }
  const labels = requested ?? (scope.kind === 'agent' ? scope.labels : []);
  const bad = labels.find((label) => !LABEL.test(label));
  if (bad !== undefined)
    throw new RejectedItem(`label ${JSON.stringify(bad)} must be 1 to 200 characters without spaces, commas or NUL`);
  return [...new Set(labels)].sort();
}

/**
 * The item's labels with those its content gives (a photo's `keyword:` labels): all of them for
 * the owner; for an agent only those within its scope, as it could not ask for the others.
 */
export function withContentLabels(labels: string[], parsed: ParsedItem, scope: Scope): string[] {
  const given = (parsed.labels ?? []).filter(
    (label) => LABEL.test(label) && (scope.kind === 'owner' || scope.labels.includes(label)),
  );
  return given.length === 0 ? labels : [...new Set([...labels, ...given])].sort();
}

/** How much item data a request carries, without decoding it. */
export function requestDataBytes(items: IngestItemParams[]): number {
  let total = 0;
  for (const item of items) {
    if (item.data !== undefined) total += Math.floor((item.data.length * 3) / 4);
    if (item.text !== undefined) total += Buffer.byteLength(item.text, 'utf8');
    // A location carries no bytes in the request: the memex reads them itself.
  }
  return total;
}

export function checkRequestSize(items: IngestItemParams[]): void {
  const total = requestDataBytes(items);
  if (total > INGEST_REQUEST_LIMIT_BYTES) {
    throw new MemexError(
      'too_large',
      `the request carries ${formatBytes(total)} of item data; memex.ingest takes at most ${formatBytes(INGEST_REQUEST_LIMIT_BYTES)} per request: send fewer items per batch`,
    );
  }
}

/** What prepares items: the item reader and its handlers, the locations, and the workers on the bus. */
export interface ItemReaders {
  reader: ItemReader;
  registry: HandlerRegistry;
  locations: Locations;
  /** Asks a `worker:` file's worker to extract it; null: ingest reads the bytes through the worker. */
  workers: NatsManyRequester | null;
}

/**
 * Every per-item check, the cheap ones here first (source, labels, external_id, a handler for the
 * type), then the reader's (base64, the limit on the decoded size before parsing, attributes, the
 * handler's parse) — or, for a file on a worker, the worker's own reading of it.
 */
export async function prepareItem(
  { reader, registry, locations, workers }: ItemReaders,
  item: IngestItemParams,
  index: number,
  scope: Scope,
  caller?: Actor,
  batch: string | null = null,
): Promise<PreparedItem> {
  const source = importSource(item.source, caller);
  const labels = itemLabels(item.labels, scope);
  const externalId = item.external_id ?? null;
  if (externalId !== null && (externalId.length === 0 || externalId.length > EXTERNAL_ID_MAX)) {
    throw new RejectedItem(`external_id must be 1 to ${EXTERNAL_ID_MAX} characters`);
  }
  // Postgres text cannot hold U+0000: left in, the identity lookup of the whole batch would fail.
  if (externalId?.includes('\0')) throw new RejectedItem('external_id contains a NUL character (U+0000)');
  const handler = registry.forType(item.type);
  const location = item.location ?? null;
  const common = { index, handler, location, source, externalId, labels, batch };
  if (location !== null && scope.kind !== 'owner')
    throw new RejectedItem('location: only the owner may ingest files in place');
  const onWorker = location === null || !workers ? null : await extractedOnWorker(workers, handler, location, item);
  if (onWorker) {
    const { sha256, size, type, parsed } = onWorker;
    const withContent = withContentLabels(labels, parsed, scope);
    return { ...common, labels: withContent, contentType: baseType(type), original: { sha256, size }, parsed };
  }
  const located = location === null ? undefined : await readLocation(locations, location, handler.limitBytes);
  const { bytes, type, parsed } = await reader.read({
    type: item.type,
    data: item.data,
    text: item.text,
    bytes: located,
    attributes: item.attributes,
  });
  return {
    ...common,
    labels: withContentLabels(labels, parsed, scope),
    contentType: baseType(type),
    original: bytes,
    parsed,
  };
}

/**
 * A `worker:` file read by its worker, with ingest's handlers on the worker's CPU; null when the
 * location is elsewhere or its worker does not extract (ingest then reads the bytes through it).
 */
async function extractedOnWorker(
  workers: NatsManyRequester,
  handler: IngestHandler,
  location: string,
  item: IngestItemParams,
) {
  if (item.data !== undefined || item.text !== undefined)
    throw new RejectedItem('give exactly one of data (base64), text or location');
  let scheme: string;
  try {
    scheme = parseLocation(location).scheme;
  } catch (error) {
    if (error instanceof InvalidLocation) throw new RejectedItem(error.message);
    throw error;
  }
  if (scheme !== 'worker') return null;
  try {
    const extracted = await extractOnWorker(workers, location, { type: item.type, attributes: item.attributes });
    if (extracted === null) return null;
    if ('rejected' in extracted) throw new RejectedItem(extracted.rejected);
    return decodeReading(extracted.reading, handler, location);
  } catch (error) {
    if (error instanceof InvalidLocation) throw new RejectedItem(error.message);
    if (error instanceof LocationUnreachable) throw new RejectedItem(`could not read ${location}: ${error.why}`);
    if (error instanceof RejectedItem) throw error;
    // The worker failed or took too long: the request is worth sending again, the item is not refused.
    throw new MemexError('unavailable', error instanceof Error ? error.message : String(error));
  }
}

/**
 * The bytes of an in-place file, for extraction only. Reading the memex host's files is the
 * owner's privilege (checked before): an agent could otherwise ingest any file the service can read.
 */
async function readLocation(locations: Locations, location: string, limitBytes: number): Promise<Buffer> {
  try {
    return await locations.readAll(location, limitBytes);
  } catch (error) {
    if (error instanceof InvalidLocation) throw new RejectedItem(error.message);
    if (error instanceof LocationUnreachable) throw new RejectedItem(`could not read ${location}: ${error.why}`);
    if (error instanceof TooLarge)
      throw new RejectedItem(
        `${location} is ${formatBytes(error.size)}; this handler takes at most ${formatBytes(error.limitBytes)}`,
      );
    throw error;
  }
}
