import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { baseType, decodeItemData, RejectedItem, type HandlerRegistry, type ParsedItem } from '../handlers/index.js';

/** What a parser needs of an item: its type, its bytes as sent, its attributes. */
export interface ParseRequest {
  type: string;
  data?: string | undefined;
  text?: string | undefined;
  /** The bytes themselves, read from the item's location (in-place files). */
  bytes?: Uint8Array | undefined;
  attributes?: unknown;
}

/** An item read: its bytes, the type they were parsed as, and what its handler made of them. */
export interface ReadItem {
  bytes: Buffer;
  type: string;
  parsed: ParsedItem;
}

type Answer = ReadItem | { rejected: { reason: string; unexpected: boolean } };

/** The item's bytes from `data` (base64), `text` (UTF-8) or its location, with the type to parse them as. */
function itemBytes(request: ParseRequest): { bytes: Buffer; type: string } {
  const given = [request.data, request.text, request.bytes].filter((one) => one !== undefined).length;
  if (given !== 1) throw new RejectedItem('give exactly one of data (base64), text or location');
  if (request.bytes !== undefined) return { bytes: asBuffer(request.bytes), type: request.type };
  if (request.data !== undefined) return { bytes: decodeItemData(request.data), type: request.type };
  // Text travels as UTF-8 whatever charset the type named.
  const type = baseType(request.type).startsWith('text/') ? `${baseType(request.type)}; charset=utf-8` : request.type;
  return { bytes: Buffer.from(request.text!, 'utf8'), type };
}

/** Decodes and parses one item (in whichever thread runs it); a rejection is an answer, not a throw. */
export async function readItem(registry: HandlerRegistry, request: ParseRequest): Promise<Answer> {
  try {
    const { bytes, type } = itemBytes(request);
    return { bytes, type, parsed: await registry.parse({ type, bytes, attributes: request.attributes }) };
  } catch (error) {
    if (error instanceof RejectedItem) return { rejected: { reason: error.reason, unexpected: error.unexpected } };
    const why = error instanceof Error ? error.message : String(error);
    return { rejected: { reason: `could not read this ${baseType(request.type)} item: ${why}`, unexpected: true } };
  }
}

function settle(answer: Answer): ReadItem {
  if ('rejected' in answer) throw new RejectedItem(answer.rejected.reason, { unexpected: answer.rejected.unexpected });
  return answer;
}

/** Reads items: in worker threads (ParsePool) in the service, in this thread in tests. */
export interface ItemReader {
  read(request: ParseRequest): Promise<ReadItem>;
  close(): Promise<void>;
}

export function inlineReader(registry: HandlerRegistry): ItemReader {
  return { read: async (request) => settle(await readItem(registry, request)), close: async () => undefined };
}

/** A worker's heap; an item that needs more is rejected instead of exhausting the service. */
const WORKER_HEAP_MB = 1024;

interface Job {
  request: ParseRequest;
  resolve(item: ReadItem): void;
  reject(error: RejectedItem): void;
}

/** Structured clones turn Buffers into plain Uint8Arrays; the handlers' consumers expect Buffers. */
function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

function revive(item: ParsedItem): ParsedItem {
  if (item.contentBytes) item.contentBytes = asBuffer(item.contentBytes);
  item.children?.forEach(revive);
  return item;
}

/** A worker running jobs; `onDeath` gets the jobs it held when it died. */
function startWorker(onDeath: (why: string, jobs: Job[]) => void): { worker: Worker; jobs: Map<number, Job> } {
  const worker = new Worker(new URL('./parse-worker.js', import.meta.url), {
    resourceLimits: { maxOldGenerationSizeMb: WORKER_HEAP_MB },
  });
  const jobs = new Map<number, Job>();
  worker.on('message', ({ id, answer }: { id: number; answer: Answer }) => {
    const job = jobs.get(id);
    if (!job) return;
    jobs.delete(id);
    try {
      const read = settle(answer);
      job.resolve({ ...read, bytes: asBuffer(read.bytes), parsed: revive(read.parsed) });
    } catch (error) {
      job.reject(error as RejectedItem);
    }
  });
  let dead = false;
  const die = (why: string) => {
    if (dead) return;
    dead = true;
    const held = [...jobs.values()];
    jobs.clear();
    onDeath(why, held);
  };
  worker.on('error', (error: Error & { code?: string }) =>
    die(
      error.code === 'ERR_WORKER_OUT_OF_MEMORY'
        ? `reading this item needs more than ${WORKER_HEAP_MB} MB of memory`
        : `the item reader failed: ${error.name}: ${error.message}`,
    ),
  );
  worker.on('exit', () => die('the item reader stopped while reading this item'));
  worker.unref();
  return { worker, jobs };
}

/**
 * Parsing (base64, MIME, charsets, HTML, documents) in worker threads: the service's own thread
 * keeps serving requests, publishing and projecting while items are read, and the parsing uses
 * the other cores. When a worker dies (out of memory on a pathological item), the items it held
 * are read again one per fresh worker, so only the culprit is rejected.
 */
export class ParsePool implements ItemReader {
  private readonly workers: Array<{ worker: Worker; jobs: Map<number, Job> } | null>;
  private nextId = 1;

  constructor(private readonly size = Math.max(1, Math.min(4, availableParallelism() - 1))) {
    this.workers = Array.from({ length: size }, () => null);
  }

  read(request: ParseRequest): Promise<ReadItem> {
    return new Promise((resolve, reject) => {
      const job = { request, resolve, reject };
      const slot = this.leastBusy();
      let entry = this.workers[slot];
      if (!entry) {
        const started = startWorker((_why, held) => {
          if (this.workers[slot] === started) this.workers[slot] = null;
          held.forEach((one) => this.alone(one));
        });
        entry = this.workers[slot] = started;
      }
      this.post(entry, job);
    });
  }

  private post(entry: { worker: Worker; jobs: Map<number, Job> }, job: Job): void {
    const id = this.nextId++;
    entry.jobs.set(id, job);
    entry.worker.postMessage({ id, request: job.request });
  }

  /** An item held by a worker that died, read again in a worker of its own. */
  private alone(job: Job): void {
    const entry = startWorker((why, held) =>
      held.forEach((one) => one.reject(new RejectedItem(why, { unexpected: true }))),
    );
    const finish = () => void entry.worker.terminate();
    this.post(entry, {
      request: job.request,
      resolve: (item) => (finish(), job.resolve(item)),
      reject: (error) => (finish(), job.reject(error)),
    });
  }

  private leastBusy(): number {
    let best = 0;
    for (let i = 1; i < this.size; i++)
      if ((this.workers[i]?.jobs.size ?? 0) < (this.workers[best]?.jobs.size ?? 0)) best = i;
    return best;
  }

  async close(): Promise<void> {
    const running = this.workers.filter((entry) => entry !== null);
    this.workers.fill(null);
    await Promise.all(running.map((entry) => entry.worker.terminate()));
  }
}
