import fs from 'node:fs/promises';
import { headers, type Msg, type NatsConnection, type Subscription } from '@nats-io/transport-node';
import { WORKER_ERROR_HEADER, WORKER_FAILED_HEADER, workerSubject } from '@memex/locations';
import { whyUnreadable, type FileServer } from './serve.js';
import { JobSlots } from './slots.js';

/**
 * Work the memex asks of a worker on its own files (derive: media's pictures; extract: ingest's
 * reading): requests on `memex.worker.<name>.<what>` in the worker's queue group, at most `jobs`
 * at once. Each answer is a stream ended by an empty message (`endStream`); a job that throws is
 * answered as failed (WORKER_FAILED_HEADER), which the asking service retries.
 */
export function serveJobs(
  nc: NatsConnection,
  name: string,
  what: 'derive' | 'extract',
  slots: JobSlots,
  job: (message: Msg) => Promise<void>,
): Subscription {
  return nc.subscribe(workerSubject(name, what), {
    queue: `memex-worker-${name}`,
    callback: (error, message) => {
      if (error) return;
      void slots.run(() =>
        job(message).catch((failure: unknown) =>
          endStream(message, WORKER_FAILED_HEADER, failure instanceof Error ? failure.message : String(failure)),
        ),
      );
    },
  });
}

/** The message that ends a job's stream, with what went wrong (a header) if anything did. */
export function endStream(message: Msg, header: string | null, value = ''): void {
  const h = headers();
  if (header) h.set(header, value.replace(/[\r\n]+/g, ' ').slice(0, 2000));
  message.respond(new Uint8Array(), { headers: h });
}

/** The bytes of the file a job names, or null once the stream is ended with why it cannot be read. */
export async function readRequested(files: FileServer, message: Msg, requested: unknown): Promise<Buffer | null> {
  const read = await readServed(files, requested);
  if ('why' in read) {
    endStream(message, WORKER_ERROR_HEADER, read.why);
    return null;
  }
  return read.bytes;
}

/** The bytes of a file under the worker's folders, or why they cannot be read. */
export async function readServed(files: FileServer, requested: unknown): Promise<{ bytes: Buffer } | { why: string }> {
  const found = await files.confined(requested);
  if ('why' in found) return found;
  try {
    return { bytes: await fs.readFile(found.file) };
  } catch (error) {
    return { why: whyUnreadable(error) };
  }
}

/** A kind of job the worker serves (DeriveServer, ExtractServer): its subscription, its slots, its count, its log. */
export abstract class JobServer {
  protected subscription: Subscription | undefined;
  /** Jobs done since start (said in the log). */
  done = 0;
  protected readonly slots: JobSlots;

  constructor(
    protected readonly nc: NatsConnection,
    protected readonly name: string,
    protected readonly files: FileServer,
    jobs: number,
    protected readonly log: (line: string) => void,
  ) {
    this.slots = new JobSlots(jobs);
  }

  /** Its jobs not done yet, running or waiting (the heartbeat's `jobs`). */
  get pending(): number {
    return this.slots.pending;
  }

  abstract start(): Promise<void>;

  async stop(): Promise<void> {
    this.subscription?.unsubscribe();
  }
}
