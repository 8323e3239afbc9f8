import { Inject, Injectable, Logger, type BeforeApplicationShutdown } from '@nestjs/common';
import type { Kysely } from 'kysely';
import { OWNER_SCOPE, PhotoEventsFound } from '@memex/contracts';
import { EventPublisher } from '@memex/bus';
import { DATABASE, ServiceHost, type HealthProblems } from '@memex/runtime';
import { photoEventThings } from '../domain/events.js';
import type { MediaDatabase } from '../projection/schema.js';
import { loadMoments } from '../queries/moments.js';
import { MEDIA_PIPELINE } from './analyze.js';

/** How long after the last analysed photo the events are clustered again (a folder import is one burst, one event). */
export function photoEventsSettleMsFromEnv(): number {
  const ms = Number(process.env['MEMEX_PHOTO_EVENTS_SETTLE_MS'] ?? 10_000);
  return Number.isFinite(ms) && ms >= 0 ? ms : 10_000;
}

/**
 * Tells the graph the photo events and trips (photo_events.found) once photos stop arriving for
 * a while: clustered over every photo in the read model, published only when they changed since
 * this process last said them. A telling that fails is tried again (every four settling times)
 * and said in the service's health until one succeeds: the graph would otherwise keep old events
 * until the next photo arrives.
 */
@Injectable()
export class PhotoEventsPublisher implements BeforeApplicationShutdown, HealthProblems {
  private readonly logger = new Logger('media:events');
  private readonly settleMs = photoEventsSettleMsFromEnv();
  private timer: NodeJS.Timeout | undefined;
  private seq = 0;
  private said: string | null = null;
  private running: Promise<void> = Promise.resolve();
  private failure: { reason: string; since: Date } | undefined;
  private stopped = false;

  constructor(
    @Inject(DATABASE) private readonly db: Kysely<MediaDatabase>,
    private readonly publisher: EventPublisher,
    private readonly host: ServiceHost,
  ) {}

  /** A photo's analysis was published at `seq`: cluster again once the read model has it and no other arrives for a while. */
  schedule(seq: number, afterMs = this.settleMs): void {
    this.seq = Math.max(this.seq, seq);
    clearTimeout(this.timer);
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.running = this.running.then(() =>
        this.publish().then(
          () => (this.failure = undefined),
          (error: unknown) => {
            const reason = error instanceof Error ? error.message : String(error);
            this.failure = { reason, since: this.failure?.since ?? new Date() };
            this.logger.warn(`photo events not published: ${reason} (tried again)`);
            this.schedule(this.seq, this.settleMs * 4);
          },
        ),
      );
    }, afterMs);
  }

  async healthProblems(): Promise<string[]> {
    const failure = this.failure;
    return failure
      ? [`photo events and trips not told to the graph since ${failure.since.toISOString()}: ${failure.reason}`]
      : [];
  }

  private async publish(): Promise<void> {
    await this.host.projector!.waitFor(this.seq, 60_000);
    const data = photoEventThings(await loadMoments(this.db, OWNER_SCOPE));
    const digest = JSON.stringify(data);
    if (digest === this.said) return;
    await this.publisher.publish(PhotoEventsFound, {
      subject: 'photo_events:all',
      actor: { kind: 'pipeline', id: MEDIA_PIPELINE },
      data,
    });
    this.said = digest;
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }
}
