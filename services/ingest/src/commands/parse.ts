import { TaskFailed, TaskPool } from '@memex/workers';
import { baseType, decodeItemData, RejectedItem, type HandlerRegistry, type ParsedItem } from '../domain/handlers/index.js';

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

/** A thread's heap; an item that needs more is rejected instead of exhausting the service. */
const WORKER_HEAP_MB = 1024;
/** Items one thread reads at once: reading awaits (inflating, the PDF reader's own thread). */
const ITEMS_PER_THREAD = 8;

/** Structured clones turn Buffers into plain Uint8Arrays; the handlers' consumers expect Buffers. */
function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

function revive(item: ParsedItem): ParsedItem {
  if (item.contentBytes) item.contentBytes = asBuffer(item.contentBytes);
  item.children?.forEach(revive);
  return item;
}

function readerPool(threads?: number): TaskPool<ParseRequest, Answer> {
  return new TaskPool({
    name: 'the item reader',
    script: new URL('./parse-worker.js', import.meta.url),
    ...(threads ? { threads, tasksPerThread: 1 } : { tasksPerThread: ITEMS_PER_THREAD }),
    heapMb: WORKER_HEAP_MB,
  });
}

/**
 * Parsing (base64, MIME, charsets, HTML, documents) in worker threads: the service's own thread
 * keeps serving requests, publishing and projecting while items are read, and the parsing uses
 * the other cores. When a thread dies (out of memory on a pathological item), the items it held
 * are read again one at a time in a thread of their own, so only the culprit is rejected.
 */
export class ParsePool implements ItemReader {
  private readonly shared = readerPool();
  private readonly alone = readerPool(1);

  async read(request: ParseRequest): Promise<ReadItem> {
    const read = settle(await this.shared.run(request).catch((error: unknown) => this.again(request, error)));
    return { ...read, bytes: asBuffer(read.bytes), parsed: revive(read.parsed) };
  }

  private async again(request: ParseRequest, error: unknown): Promise<Answer> {
    if (!(error instanceof TaskFailed)) throw error;
    try {
      return await this.alone.run(request);
    } catch (again) {
      if (again instanceof TaskFailed) throw new RejectedItem(again.message, { unexpected: true, cause: again });
      throw again;
    }
  }

  async close(): Promise<void> {
    await Promise.all([this.shared.close(), this.alone.close()]);
  }
}
