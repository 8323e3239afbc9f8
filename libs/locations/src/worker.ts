import { InvalidLocation, LocationUnreachable, parseLocation, type LocationStat, type SchemeReader } from './index.js';

/**
 * `worker:<name>:/abs/path` — a file on a worker (`memex worker --name <name>`), read over NATS
 * request/reply. The worker answers on `memex.worker.<name>.stat` and `memex.worker.<name>.read`
 * (only for files under its folders) and announces itself on `memex.worker.<name>.heartbeat`.
 * A read is cut into chunks that fit a NATS message; bytes travel raw, an error as a header.
 */

/** Worker names: what a NATS subject token and a source id can both carry. */
export const WORKER_NAME_PATTERN = /^[a-z0-9][a-z0-9_-]{0,47}$/;

/** The bytes one read request asks for: under NATS's default 1 MB message limit, with room for headers. */
export const WORKER_CHUNK_BYTES = 512 * 1024;

/** The header a worker's reply carries instead of content when the file cannot be read (the why). */
export const WORKER_ERROR_HEADER = 'Memex-Unreachable';

export const workerSubject = (name: string, what: 'stat' | 'read' | 'derive' | 'extract' | 'heartbeat' | 'rescan') =>
  `memex.worker.${name}.${what}`;

/** The location prefix that covers every file of a worker. */
export const workerPrefix = (name: string) => `worker:${name}:/`;

/** What a worker announces on its heartbeat subject, every `interval_ms`. */
export interface WorkerHeartbeat {
  name: string;
  folders: string[];
  interval_ms: number;
  started_at: string;
  /** Whether it derives media's pictures of its files itself (`memex.worker.<name>.derive`). */
  derives?: boolean;
  /** Whether it extracts its files' text and metadata itself for ingest (`memex.worker.<name>.extract`). */
  extracts?: boolean;
  /**
   * Its files that are items in the memex, the distinct items they are, and the files that could
   * not become items (a reader's rejection, recorded once), as its record says.
   */
  counts?: { files: number; items: number; failed?: number };
  /** Jobs the memex asked of it that are not done yet (running or waiting for a slot), by kind. */
  jobs?: { extract: number; derive: number };
  /** Its failed files with why, at most WORKER_FAILURES_HEARD of them. */
  failures?: WorkerFailure[];
}

/** A file of a worker's that could not become an item, and why. */
export interface WorkerFailure {
  path: string;
  reason: string;
  modified_at: string;
}

/** The failed files a heartbeat lists at most (its count says how many there are). */
export const WORKER_FAILURES_HEARD = 100;

/**
 * What `memex.worker.<name>.rescan` answers once the worker has scanned its folders again — the
 * files it failed before read again too: `{ files, created, updated, moved, removed, failed }`,
 * summed over its folders, or `{ error }`.
 */
export type WorkerRescanReply =
  | { files: number; created: number; updated: number; moved: number; removed: number; failed: number }
  | { error: string };

export interface WorkerStatRequest {
  path: string;
}
export interface WorkerReadRequest {
  path: string;
  offset: number;
  length: number;
}
export type WorkerStatReply = { size: number; modified_at: string } | { unreachable: string };

/** What the scheme needs of a NATS connection (a `NatsConnection` is one). */
export interface NatsRequester {
  request(
    subject: string,
    payload: Uint8Array,
    options: { timeout: number },
  ): Promise<{ data: Uint8Array; headers?: { get(key: string): string } | undefined }>;
}

/** `<name>:/abs/path` → the worker's name and the path on it. */
export function parseWorkerRest(rest: string): { name: string; path: string } {
  const colon = rest.indexOf(':');
  const name = rest.slice(0, colon);
  const filePath = rest.slice(colon + 1);
  if (colon < 0 || !WORKER_NAME_PATTERN.test(name) || !filePath.startsWith('/') || filePath.includes('\0'))
    throw new InvalidLocation(`worker:${rest}`, 'must be worker:<name>:/abs/path (a name of a-z, 0-9, _ and -)');
  return { name, path: filePath };
}

/** Reads `worker:` locations through the workers on the bus. */
export function workerScheme(nc: NatsRequester, timeoutMs = 30_000): SchemeReader {
  const encode = (value: unknown) => new TextEncoder().encode(JSON.stringify(value));

  async function ask(rest: string, what: 'stat' | 'read', request: WorkerStatRequest | WorkerReadRequest) {
    const { name } = parseWorkerRest(rest);
    try {
      return await nc.request(workerSubject(name, what), encode(request), { timeout: timeoutMs });
    } catch (error) {
      // No responders, a timeout, a closed connection: the worker is away (or the bus is).
      throw new LocationUnreachable(
        `worker:${rest}`,
        `worker "${name}" does not answer (${error instanceof Error ? error.message : String(error)}): it is stopped, or cannot reach NATS`,
      );
    }
  }

  return {
    async stat(rest): Promise<LocationStat> {
      const { path } = parseWorkerRest(rest);
      const reply = JSON.parse(new TextDecoder().decode((await ask(rest, 'stat', { path })).data)) as WorkerStatReply;
      if ('unreachable' in reply) throw new LocationUnreachable(`worker:${rest}`, reply.unreachable);
      return { size: reply.size, modifiedAt: new Date(reply.modified_at) };
    },
    async read(rest, offset, length): Promise<Buffer> {
      const { path } = parseWorkerRest(rest);
      const chunks: Buffer[] = [];
      let at = offset;
      while (at < offset + length) {
        const want = Math.min(WORKER_CHUNK_BYTES, offset + length - at);
        const reply = await ask(rest, 'read', { path, offset: at, length: want });
        const why = reply.headers?.get(WORKER_ERROR_HEADER);
        if (why) throw new LocationUnreachable(`worker:${rest}`, why);
        chunks.push(Buffer.from(reply.data));
        at += reply.data.length;
        if (reply.data.length < want) break; // the end of the file
      }
      return Buffer.concat(chunks);
    },
  };
}

/**
 * Pictures a worker makes of one of its files on its own CPU, for the media service (which owns
 * the events and stores the pictures): a photo's renditions (`format` as ingest read it) or a
 * video's keyframes. The original's bytes never cross the network; only the WebP pictures do.
 */
export type WorkerDeriveRequest =
  { task: 'renditions'; path: string; format: string } | { task: 'keyframes'; path: string };

/** One picture a worker made: a rendition's name or a keyframe's second, its size, its WebP bytes. */
export interface DerivedPicture {
  name?: string;
  at?: number;
  width: number;
  height: number;
  webp: Buffer;
}

export interface WorkerDerived {
  pictures: DerivedPicture[];
  /** Why the file gave no pictures (not decodable), as the worker's decoder said it; null when it did. */
  problem: string | null;
}

/**
 * A derive reply is a stream: one message per picture (its description in this header, the WebP
 * as the body), then an empty message that ends it — carrying the decoder's problem, the
 * unreachable reason (WORKER_ERROR_HEADER) or a failure, if any.
 */
export const WORKER_PICTURE_HEADER = 'Memex-Picture';
export const WORKER_PROBLEM_HEADER = 'Memex-Problem';
export const WORKER_FAILED_HEADER = 'Memex-Failed';

/** What deriving needs of a NATS connection (a `NatsConnection` is one). */
export interface NatsManyRequester {
  requestMany(
    subject: string,
    payload: Uint8Array,
    options: { maxWait: number; strategy: 'sentinel' },
  ): Promise<AsyncIterable<Reply>>;
}

type Reply = { data: Uint8Array; headers?: { get(key: string): string } | undefined };

/**
 * One streamed request to the worker holding `location` (derive, extract): each message with a
 * body goes to `take`; the empty message that ends the stream is returned, after its unreachable
 * reason or failure is thrown. Null when no worker answers on the subject.
 */
async function streamFromWorker(
  nc: NatsManyRequester,
  location: string,
  what: 'derive' | 'extract',
  request: Record<string, unknown>,
  doing: string,
  maxWaitMs: number,
  take: (reply: Reply) => void,
): Promise<Reply | null> {
  const { scheme, rest } = parseLocation(location);
  if (scheme !== 'worker') throw new InvalidLocation(location, 'is not on a worker');
  const { name, path } = parseWorkerRest(rest);
  const payload = new TextEncoder().encode(JSON.stringify({ ...request, path }));
  try {
    const replies = await nc.requestMany(workerSubject(name, what), payload, {
      maxWait: maxWaitMs,
      strategy: 'sentinel',
    });
    for await (const reply of replies) {
      if (reply.data.length > 0) {
        take(reply);
        continue;
      }
      const unreachable = reply.headers?.get(WORKER_ERROR_HEADER);
      if (unreachable) throw new LocationUnreachable(location, unreachable);
      const failed = reply.headers?.get(WORKER_FAILED_HEADER);
      if (failed) throw new Error(`worker "${name}" could not ${doing} ${path}: ${failed}`);
      return reply;
    }
  } catch (error) {
    if (isNoResponders(error)) return null;
    throw error;
  }
  throw new Error(`worker "${name}" did not ${doing} ${path} within ${maxWaitMs / 1000} s`);
}

/**
 * Asks the worker holding `location` to make pictures of it. Null when no worker answers on its
 * derive subject (one that does not derive, or is away): the caller reads the bytes instead.
 * `LocationUnreachable` when the worker cannot read the file; an Error (worth a retry) when it
 * failed otherwise or did not finish within `maxWaitMs`.
 */
export async function deriveOnWorker(
  nc: NatsManyRequester,
  location: string,
  request: { task: 'renditions'; format: string } | { task: 'keyframes' },
  maxWaitMs = 4 * 60_000,
): Promise<WorkerDerived | null> {
  const pictures: DerivedPicture[] = [];
  const end = await streamFromWorker(
    nc,
    location,
    'derive',
    request,
    `make the ${request.task} of`,
    maxWaitMs,
    (reply) => {
      const picture = JSON.parse(reply.headers?.get(WORKER_PICTURE_HEADER) || '{}') as Omit<DerivedPicture, 'webp'>;
      pictures.push({ ...picture, webp: Buffer.from(reply.data) });
    },
  );
  return end && { pictures, problem: end.headers?.get(WORKER_PROBLEM_HEADER) || null };
}

/**
 * Ingest asks the worker holding a file to read it with ingest's own handlers on the worker's CPU
 * (text of documents, a photo's EXIF and OCR): the file's bytes never cross the network, only
 * what the handlers made of them. `type` and `attributes` are the item's as memex.ingest got them.
 */
export interface WorkerExtractRequest {
  path: string;
  type: string;
  attributes?: unknown;
}

/**
 * An extract reply is a stream: the reading (opaque here: ingest's encoding, its
 * `commands/worker-reading.ts`) cut into messages of at most WORKER_CHUNK_BYTES, then an empty
 * message that ends it — carrying why the handler rejected the file (this header), why the file
 * cannot be read (WORKER_ERROR_HEADER) or a failure (WORKER_FAILED_HEADER), if any.
 */
export const WORKER_REJECTED_HEADER = 'Memex-Rejected';

export type WorkerExtracted = { reading: Buffer } | { rejected: string };

/**
 * Asks the worker holding `location` to extract it. Null when no worker answers on its extract
 * subject (one started with `--extract-jobs 0`, or away): the caller reads the bytes through the
 * worker instead. `LocationUnreachable` when the worker cannot read the file; an Error when it
 * failed otherwise or did not finish within `maxWaitMs`.
 */
export async function extractOnWorker(
  nc: NatsManyRequester,
  location: string,
  request: Omit<WorkerExtractRequest, 'path'>,
  maxWaitMs = 4 * 60_000,
): Promise<WorkerExtracted | null> {
  const chunks: Buffer[] = [];
  const end = await streamFromWorker(nc, location, 'extract', { ...request }, 'extract', maxWaitMs, (reply) =>
    chunks.push(Buffer.from(reply.data)),
  );
  if (!end) return null;
  const rejected = end.headers?.get(WORKER_REJECTED_HEADER);
  return rejected ? { rejected } : { reading: Buffer.concat(chunks) };
}

/** No process subscribes to the subject (nats.js's NoRespondersError, known by its class name: this library does not depend on nats.js). */
function isNoResponders(error: unknown): boolean {
  for (let e: unknown = error; e instanceof Error; e = e.cause)
    if (e.constructor.name === 'NoRespondersError') return true;
  return false;
}
