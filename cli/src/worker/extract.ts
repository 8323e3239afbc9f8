import { createHash } from 'node:crypto';
import type { Msg } from '@nats-io/transport-node';
import {
  WORKER_CHUNK_BYTES,
  WORKER_ERROR_HEADER,
  WORKER_REJECTED_HEADER,
  type WorkerExtractRequest,
} from '@memex/locations';
import { endStream, JobServer, readServed, serveJobs } from './jobs.js';

type Extraction = typeof import('@memex/ingest/extract');

/** What reading a file gave: ingest's encoded reading, why the handler refused it, or why the file cannot be read. */
export type Reading = { reading: Buffer; summary: string } | { rejected: string } | { unreadable: string };

/**
 * Reads the worker's own files with ingest's handlers on this machine's CPU (docs/sources.md
 * "Workers"): ingest asks on `memex.worker.<name>.extract` for a file it is given at a `worker:`
 * location, and stores what comes back — the text of a PDF, a Word file, Markdown or HTML, a
 * photo's EXIF and the text OCR reads in it, with the file's sha256 and size — so the original's
 * bytes never leave this machine (only `memex.items.content` reads them). At most `jobs` at once.
 *
 * The worker's own scan reads its files ahead (`readAhead`) before it sends them to ingest, and
 * ingest's request is answered with that reading: however long a reading takes (OCR of a large
 * scan on a small CPU), no request waits for it, so none times out and is sent again and again.
 */
export class ExtractServer extends JobServer {
  private extraction: Extraction | undefined;
  private reader: InstanceType<Extraction['ParsePool']> | undefined;
  /** Readings made ahead, by path, until ingest asks for them (or the scan forgets them). */
  private readonly ahead = new Map<string, Reading>();

  async start(): Promise<void> {
    // Loaded here, not at import: the handlers (PDF, OCR models) are only this command's.
    this.extraction = await import('@memex/ingest/extract');
    this.reader = new this.extraction.ParsePool();
    this.subscription = serveJobs(this.nc, this.name, 'extract', this.slots, (message) => this.answer(message));
  }

  override async stop(): Promise<void> {
    await super.stop();
    await this.reader?.close();
  }

  /**
   * Reads a file now (in a job slot), kept for ingest's request; what it gave. A reading that
   * fails unexpectedly is the file's failure too (recorded once, read again on a rescan).
   */
  async readAhead(request: WorkerExtractRequest): Promise<Reading> {
    const read = await this.slots
      .run(() => this.read(request))
      .catch((error: unknown): Reading => ({
        rejected: `reading it failed: ${error instanceof Error ? error.message : String(error)}`,
      }));
    this.ahead.set(request.path, read);
    return read;
  }

  /** Drops what was read ahead and not asked for (ingest found the item unchanged, or the request failed). */
  forget(paths: string[]): void {
    for (const path of paths) this.ahead.delete(path);
  }

  private async answer(message: Msg): Promise<void> {
    const request = message.json<WorkerExtractRequest>();
    const ahead = this.ahead.get(request.path);
    this.ahead.delete(request.path);
    const read = ahead ?? (await this.read(request));
    if ('unreadable' in read) return endStream(message, WORKER_ERROR_HEADER, read.unreadable);
    if ('rejected' in read) return endStream(message, WORKER_REJECTED_HEADER, read.rejected);
    for (let at = 0; at < read.reading.length; at += WORKER_CHUNK_BYTES)
      message.respond(read.reading.subarray(at, at + WORKER_CHUNK_BYTES));
    this.done++;
    this.log(`worker ${this.name}: extract of ${request.path}: ${read.summary}${ahead ? ' (read ahead)' : ''}`);
    endStream(message, null);
  }

  private async read(request: WorkerExtractRequest): Promise<Reading> {
    const { encodeReading, RejectedItem } = this.extraction!;
    const served = await readServed(this.files, request.path);
    if ('why' in served) return { unreadable: served.why };
    const { bytes } = served;
    const sha256 = createHash('sha256').update(bytes).digest('hex');
    try {
      const read = await this.reader!.read({ type: request.type, bytes, attributes: request.attributes });
      return {
        reading: encodeReading({ sha256, size: bytes.length, type: read.type, parsed: read.parsed }),
        summary: `${read.parsed.kind}, ${read.parsed.text.length} characters of text`,
      };
    } catch (error) {
      if (!(error instanceof RejectedItem)) throw error;
      this.log(`worker ${this.name}: extract of ${request.path}: rejected: ${error.reason}`);
      return { rejected: error.reason };
    }
  }
}
