import { createHash } from 'node:crypto';
import type { Msg } from '@nats-io/transport-node';
import { WORKER_CHUNK_BYTES, WORKER_REJECTED_HEADER, type WorkerExtractRequest } from '@memex/locations';
import { endStream, JobServer, readRequested, serveJobs } from './jobs.js';

type Extraction = typeof import('@memex/ingest/extract');

/**
 * Reads the worker's own files with ingest's handlers on this machine's CPU (docs/sources.md
 * "Workers"): ingest asks on `memex.worker.<name>.extract` for a file it is given at a `worker:`
 * location, and stores what comes back — the text of a PDF, a Word file, Markdown or HTML, a
 * photo's EXIF and the text OCR reads in it, with the file's sha256 and size — so the original's
 * bytes never leave this machine (only `memex.items.content` reads them). At most `jobs` at once.
 */
export class ExtractServer extends JobServer {
  private reader: InstanceType<Extraction['ParsePool']> | undefined;

  async start(): Promise<void> {
    // Loaded here, not at import: the handlers (PDF, OCR models) are only this command's.
    const extraction = await import('@memex/ingest/extract');
    const reader = (this.reader = new extraction.ParsePool());
    this.subscription = serveJobs(this.nc, this.name, 'extract', this.jobs, (message) =>
      this.answer(message, reader, extraction),
    );
  }

  override async stop(): Promise<void> {
    await super.stop();
    await this.reader?.close();
  }

  private async answer(
    message: Msg,
    reader: InstanceType<Extraction['ParsePool']>,
    { encodeReading, RejectedItem }: Extraction,
  ): Promise<void> {
    const request = message.json<WorkerExtractRequest>();
    const bytes = await readRequested(this.files, message, request.path);
    if (!bytes) return;
    const sha256 = createHash('sha256').update(bytes).digest('hex');
    let read;
    try {
      read = await reader.read({ type: request.type, bytes, attributes: request.attributes });
    } catch (error) {
      if (!(error instanceof RejectedItem)) throw error;
      this.log(`worker ${this.name}: extract of ${request.path}: rejected: ${error.reason}`);
      return endStream(message, WORKER_REJECTED_HEADER, error.reason);
    }
    const reading = encodeReading({ sha256, size: bytes.length, type: read.type, parsed: read.parsed });
    for (let at = 0; at < reading.length; at += WORKER_CHUNK_BYTES)
      message.respond(reading.subarray(at, at + WORKER_CHUNK_BYTES));
    this.done++;
    this.log(
      `worker ${this.name}: extract of ${request.path}: ${read.parsed.kind}, ${read.parsed.text.length} characters of text`,
    );
    endStream(message, null);
  }
}
