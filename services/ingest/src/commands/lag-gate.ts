import type { Kysely } from 'kysely';
import { MemexError } from '@memex/contracts';
import type { Bus } from '@memex/bus';
import { liveProjectors, projectorLags } from '@memex/runtime';

/** How long one reading of the projectors' lag serves the requests that arrive after it. */
const READ_EVERY_MS = 1000;

/**
 * Backpressure by the read models: refuses new items as `unavailable` (HTTP 503 with Retry-After;
 * `memex import` waits and sends them again) while the slowest projector whose service is up is
 * more than `maxLag` events behind the log, so a client faster than the projectors apply does not
 * run the log ever further ahead of what can be read. A projector whose service is down (no
 * process of it running: /healthz says it does not answer) does not count: waiting would hold
 * imports until someone starts it, and its durable consumer keeps its place in the log, so it
 * catches up when it is back. 0 turns the check off (MEMEX_INGEST_MAX_LAG).
 */
export class LagGate<DB> {
  private reading: Promise<Map<string, number>> | undefined;
  private readAt = 0;

  constructor(
    private readonly bus: Bus,
    private readonly db: Kysely<DB>,
    private readonly maxLag: number,
  ) {}

  async check(): Promise<void> {
    if (this.maxLag === 0) return;
    let slowest: [string, number] = ['', 0];
    for (const entry of await this.lags()) if (entry[1] > slowest[1]) slowest = entry;
    const [projector, lag] = slowest;
    if (lag > this.maxLag) {
      throw new MemexError(
        'unavailable',
        `memex.ingest waits for the ${projector} read model, ${lag.toLocaleString('en')} events behind the log ` +
          `(at most ${this.maxLag.toLocaleString('en')}, MEMEX_INGEST_MAX_LAG): send this one again in a few seconds`,
      );
    }
  }

  /** The lags of the projectors whose service is up. */
  private lags(): Promise<Map<string, number>> {
    if (!this.reading || Date.now() - this.readAt >= READ_EVERY_MS) {
      this.readAt = Date.now();
      this.reading = this.readLags();
    }
    return this.reading;
  }

  private async readLags(): Promise<Map<string, number>> {
    // JetStream or Postgres unreadable is no reason to refuse: storing the items fails on its own if either is away.
    const [lags, live] = await Promise.all([
      projectorLags(this.bus).catch(() => new Map<string, number>()),
      liveProjectors(this.db).catch(() => new Set<string>()),
    ]);
    return new Map([...lags].filter(([projector]) => live.has(projector)));
  }
}
