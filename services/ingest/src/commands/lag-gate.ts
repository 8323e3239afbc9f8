import type { Kysely } from 'kysely';
import { MemexError } from '@memex/contracts';
import type { Bus } from '@memex/bus';
import { liveProjectors, projectorLags } from '@memex/runtime';

/**
 * How long one reading of the projectors' lag serves the requests that arrive after it: a second
 * while the slowest lag could pass the limit within two readings, else up to five. A reading costs
 * NATS a pass over the log for each projector with a subject filter (see `projectorLags`), which
 * grows with the log; an import far below the limit needs no reading every second.
 */
export const READ_EVERY_MS = { least: 1000, most: 5000 };

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
  private nextReadAt = 0;
  /** The slowest lag at the last reading, and when it was read. */
  private last: { at: number; slowest: number } | undefined;

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
    const now = Date.now();
    if (!this.reading || now >= this.nextReadAt) {
      this.nextReadAt = now + READ_EVERY_MS.least;
      this.reading = this.readLags().then((lags) => {
        this.planNextReading(now, Math.max(0, ...lags.values()));
        return lags;
      });
    }
    return this.reading;
  }

  private planNextReading(at: number, slowest: number): void {
    this.nextReadAt = at + readAgainIn(this.last, { at, slowest }, this.maxLag);
    this.last = { at, slowest };
  }

  private async readLags(): Promise<Map<string, number>> {
    // JetStream or Postgres unreadable is no reason to refuse: storing the items fails on its own if either is away.
    const live = await liveProjectors(this.db).catch(() => new Set<string>());
    return projectorLags(this.bus, live).catch(() => new Map<string, number>());
  }
}

/**
 * Milliseconds until the lags are read again: half the time the slowest lag takes to reach
 * `maxLag`, rising as it rose since the `last` reading, within `READ_EVERY_MS`.
 */
export function readAgainIn(
  last: { at: number; slowest: number } | undefined,
  now: { at: number; slowest: number },
  maxLag: number,
): number {
  const perMs = last ? (now.slowest - last.slowest) / Math.max(1, now.at - last.at) : Infinity;
  // Past the limit: every second, to let the import go on as soon as the lag is back under it.
  const untilLimit = now.slowest > maxLag ? 0 : perMs > 0 ? (maxLag - now.slowest) / perMs : Infinity;
  return Math.min(READ_EVERY_MS.most, Math.max(READ_EVERY_MS.least, untilLimit / 2));
}
