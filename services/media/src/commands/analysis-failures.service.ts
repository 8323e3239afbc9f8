import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import type { Subscription } from '@nats-io/transport-node';
import { sql, type Kysely } from 'kysely';
import {
  isEventOf,
  ItemIngested,
  LocationReachable,
  MediaFailed,
  MediaRetry,
  type ParamsOf,
  type ResultOf,
} from '@memex/contracts';
import { decodeEvent, eventAt, typeFilter, type Bus } from '@memex/bus';
import { isWithin } from '@memex/locations';
import { BUS, DATABASE, RpcMethod, type HealthProblems } from '@memex/runtime';
import { PhotoJobs } from '../jobs/photo-jobs.js';
import type { MediaDatabase } from '../projection/schema.js';

/** The media processes share location.reachable: one of them retries what it brings back. */
const REACHABLE_QUEUE = 'media-reachable';

/**
 * Photos and videos the media pipeline gave up on (media.analysis_failed, kept in the read model
 * until an analysis clears them): listed, run again (by the owner, or on their own when the
 * sources service sees a folder they are read in place from reachable again), and named in the
 * service's health meanwhile, with the queue's own trouble.
 */
@Injectable()
export class AnalysisFailures implements HealthProblems, OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('media:failures');
  private reachable: Subscription | undefined;

  constructor(
    @Inject(DATABASE) private readonly db: Kysely<MediaDatabase>,
    @Inject(BUS) private readonly bus: Bus,
    private readonly jobs: PhotoJobs,
  ) {}

  /**
   * Listens, as it is published, for locations reachable again (a core subscription: one missed
   * while media is down leaves its items listed as failed, for `memex photos retry`).
   */
  onApplicationBootstrap(): void {
    this.reachable = this.bus.nc.subscribe(typeFilter(LocationReachable.type), {
      queue: REACHABLE_QUEUE,
      callback: (error, msg) => {
        if (error) return;
        // A throw here would reach the NATS client, not a caller: whatever fails is logged, and
        // the items stay listed as failed (health names them) for `memex photos retry`.
        let prefix: string | undefined;
        try {
          const event = decodeEvent(msg.data);
          if (isEventOf(LocationReachable, event)) prefix = event.data.prefix;
        } catch (undecodable) {
          this.logger.warn(`a location.reachable event does not decode: ${String(undecodable)}`);
        }
        if (prefix !== undefined)
          this.retryWithin(prefix).catch((failed: unknown) =>
            this.logger.warn(`could not run again what lies under ${prefix}: ${String(failed)}`),
          );
      },
    });
  }

  onApplicationShutdown(): void {
    this.reachable?.unsubscribe();
  }

  /** Runs again the items given up on that are read in place under `prefix`. */
  private async retryWithin(prefix: string): Promise<void> {
    const rows = await this.failedItems()
      .select(['item_id', 'analysis_failure'])
      .where(sql<boolean>`analysis_failure->>'location' is not null`)
      .execute();
    const within = rows.filter((row) => isWithin(row.analysis_failure!.location!, prefix));
    if (within.length === 0) return;
    const { retried } = await this.retry({ item_ids: within.map((row) => row.item_id) });
    this.logger.log(`${prefix} is reachable again: ${retried.length} photo(s) or video(s) given up on run again`);
  }

  @RpcMethod(MediaFailed)
  async failed(params: ParamsOf<typeof MediaFailed>): Promise<ResultOf<typeof MediaFailed>> {
    const [rows, total] = await Promise.all([this.oldest(params.limit ?? 100), this.count()]);
    return {
      total,
      items: rows.map((row) => ({
        item_id: row.item_id,
        kind: row.kind,
        title: row.title,
        reason: row.analysis_failure.reason,
        attempts: row.analysis_failure.attempts,
        failed_at: row.failed_at.toISOString(),
      })),
    };
  }

  @RpcMethod(MediaRetry)
  async retry(params: ParamsOf<typeof MediaRetry>): Promise<ResultOf<typeof MediaRetry>> {
    if (params.item_ids?.length === 0) return { retried: [], gone: [] };
    let query = this.failedItems().select(['item_id', 'analysis_failure']);
    if (params.item_ids) query = query.where('item_id', 'in', params.item_ids);
    const rows = await query.execute();
    const retried: Parameters<PhotoJobs['retry']>[0] = [];
    for (const row of rows) {
      const ingestSeq = row.analysis_failure!.ingest_seq;
      const event = await eventAt(this.bus, ingestSeq);
      // Erased meanwhile (the item deleted): nothing to analyse.
      if (event && isEventOf(ItemIngested, event)) retried.push({ event, ingestSeq });
    }
    await this.jobs.retry(retried);
    const ids = new Set(retried.map(({ event }) => event.data.id));
    const asked = params.item_ids ?? rows.map((row) => row.item_id);
    return { retried: [...ids], gone: asked.filter((id) => !ids.has(id)) };
  }

  /** Items given up on leave photos without thumbnails, tags or faces: the service is degraded until they are retried. */
  async healthProblems(): Promise<string[]> {
    const [[first], total] = await Promise.all([this.oldest(1), this.count()]);
    const given = first
      ? [
          `${total} photo(s) or video(s) the media pipeline gave up on after ${first.analysis_failure.attempts} attempts (first: ${first.item_id} "${first.title}": ${first.analysis_failure.reason}); \`memex photos failed\` lists them, \`memex photos retry\` runs them again`,
        ]
      : [];
    return [...this.jobs.problems(), ...given];
  }

  private failedItems() {
    return this.db.selectFrom('items').where('failed_at', 'is not', null);
  }

  private async oldest(limit: number) {
    const rows = await this.failedItems()
      .select(['item_id', 'kind', 'title', 'analysis_failure', 'failed_at'])
      .orderBy('failed_at')
      .limit(limit)
      .execute();
    return rows.map((row) => ({ ...row, analysis_failure: row.analysis_failure!, failed_at: row.failed_at! }));
  }

  private async count(): Promise<number> {
    const { n } = await this.failedItems()
      .select(sql<number>`count(*)::int`.as('n'))
      .executeTakeFirstOrThrow();
    return n;
  }
}
