import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Ingest, MemexError, type IngestItem, type IngestResult } from '@memex/contracts';
import type { MemexClient } from '@memex/client';
import type { Static } from '@sinclair/typebox';

export type Item = Static<typeof IngestItem>;
export type Result = Static<typeof IngestResult>;

/** One item on its way: what to send and how to name it in reports. */
export interface Pending {
  /** The item's external_id (or file) as the summary names it. */
  key: string;
  item: Item;
  /** Its size in bytes before base64, for batching. */
  bytes: number;
  /** Where the source stands once this item is done (an mbox: the offset after the message). */
  position?: number;
}

/** What an answered batch reports per item. */
export type Answered = Pick<Pending, 'key' | 'position'>;

export interface UploaderOptions {
  client: MemexClient;
  /** A batch closes at this many items… */
  batchItems: number;
  /** …or before it would carry more bytes than this. */
  batchBytes: number;
  /** Batches sent before the first is answered: the server parses one while the next travels. */
  inFlight: number;
  /** Times a batch is sent again when the memex is unreachable or slow, waiting longer each time. */
  retries: number;
  /** Called once per answered batch, in the order the batches were made (so progress can be saved). */
  onBatch(batch: Answered[], results: Result[]): void;
  /**
   * Whether the memex, having answered `unavailable`, is busy rather than away or stuck: its read
   * models are behind and catching up (see `ReadModelWatch`). A batch is sent again past `retries`
   * for as long as it is: backpressure during a large import can last minutes.
   */
  catchingUp?(): Promise<boolean>;
}

/**
 * Failures that sending the same batch again may cure. It goes again under its batch id, so an
 * item an earlier send stored (its answer lost to a timeout) is answered as that send stored it.
 */
function isTransient(error: unknown): boolean {
  if (error instanceof MemexError) return error.code === 'unavailable' || error.code === 'timeout';
  return error instanceof TypeError && /fetch failed/.test(error.message);
}

/**
 * Batches items into memex.ingest requests, keeps a few in flight, retries what may be retried,
 * and reports answered batches strictly in order: a batch is only reported once every batch
 * before it was, so "done up to here" is always true. After a failure nothing more is reported.
 */
export class Uploader {
  private batch: Pending[] = [];
  private bytes = 0;
  private readonly pending = new Set<Promise<void>>();
  private reported: Promise<void> = Promise.resolve();
  private failure: unknown;

  constructor(private readonly options: UploaderOptions) {}

  async add(item: Pending): Promise<void> {
    this.throwIfFailed();
    const full = this.batch.length >= this.options.batchItems || this.bytes + item.bytes > this.options.batchBytes;
    if (this.batch.length > 0 && full) await this.flush();
    this.batch.push(item);
    this.bytes += item.bytes;
  }

  /** An item refused before sending (too big for any request): reported in its place like an answer. */
  async reject(item: Answered, reason: string): Promise<void> {
    this.throwIfFailed();
    await this.flush();
    this.enqueue([item], Promise.resolve([{ status: 'rejected', reason }]));
  }

  async finish(): Promise<void> {
    await this.flush();
    await Promise.all(this.pending);
    await this.reported;
    this.throwIfFailed();
  }

  private async flush(): Promise<void> {
    if (this.batch.length === 0) return;
    while (this.pending.size >= this.options.inFlight) await Promise.race(this.pending);
    this.throwIfFailed();
    const batch = this.batch;
    this.batch = [];
    this.bytes = 0;
    this.enqueue(batch, this.send(batch));
  }

  private enqueue(batch: Answered[], answer: Promise<Result[]>): void {
    answer.catch(() => undefined); // observed below, in order
    const report = this.reported.then(async () => {
      if (this.failure !== undefined) return;
      try {
        this.options.onBatch(batch, await answer);
      } catch (error) {
        this.failure = error;
      }
    });
    this.reported = report;
    this.pending.add(report);
    void report.finally(() => this.pending.delete(report));
  }

  private async send(batch: Pending[]): Promise<Result[]> {
    const id = randomUUID();
    for (let attempt = 0; ; attempt++) {
      try {
        const { results } = await this.options.client.call(Ingest, { items: batch.map((p) => p.item), batch: id });
        return results;
      } catch (error) {
        if (!isTransient(error)) throw error;
        if (attempt >= this.options.retries && !(await this.options.catchingUp?.())) throw error;
        await sleep(Math.min(1000 * 2 ** attempt, 15_000));
      }
    }
  }

  private throwIfFailed(): void {
    if (this.failure !== undefined) throw this.failure;
  }
}
