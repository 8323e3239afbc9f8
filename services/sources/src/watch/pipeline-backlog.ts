import { Inject, Injectable, Logger } from '@nestjs/common';
import type { Kysely } from 'kysely';
import { decodeJson, isNotFound, JOBS_STREAM, type Bus } from '@memex/bus';
import { BUS, DATABASE } from '@memex/runtime';
import type { SourcesDatabase } from '../projection/schema.js';

/** How long a count is served before the queue is read again. */
const FRESH_MS = 5_000;
/** Sequences of the queue one count reads at most (a longer queue is counted up to here). */
const MAX_JOBS = 100_000;
/** Jobs read from the stream at once. */
const PARALLEL = 32;

/**
 * The pipelines' backlog of each source (`memex sources`, seed: status for people): the jobs
 * waiting on MEMEX_JOBS (tiers 0–2, any priority) whose item is one of the source's files. The
 * work queue is read, not consumed (JetStream's get by sequence: a work-queue stream takes no
 * second consumer), at most every FRESH_MS and its first MAX_JOBS sequences.
 */
@Injectable()
export class PipelineBacklog {
  private readonly logger = new Logger('memex:sources');
  private counted: { at: number; perSource: Map<string, number> } | null = null;
  private counting: Promise<Map<string, number>> | null = null;

  constructor(
    @Inject(BUS) private readonly bus: Bus,
    @Inject(DATABASE) private readonly db: Kysely<SourcesDatabase>,
  ) {}

  /** Jobs waiting per source id (sources with none are absent). */
  async perSource(): Promise<Map<string, number>> {
    if (this.counted && Date.now() - this.counted.at < FRESH_MS) return this.counted.perSource;
    this.counting ??= this.count()
      .then((perSource) => {
        this.counted = { at: Date.now(), perSource };
        return perSource;
      })
      .catch((error: unknown) => {
        // A count that fails leaves the list answering (with the last count, or none), said in the log.
        this.logger.warn(`pipeline backlog not counted: ${error instanceof Error ? error.message : String(error)}`);
        return this.counted?.perSource ?? new Map<string, number>();
      })
      .finally(() => (this.counting = null));
    return this.counting;
  }

  private async count(): Promise<Map<string, number>> {
    const perItem = await this.jobsPerItem();
    const perSource = new Map<string, number>();
    const ids = [...perItem.keys()];
    for (let i = 0; i < ids.length; i += 5_000) {
      const rows = await this.db
        .selectFrom('files')
        .select(['source_id', 'item_id'])
        .distinct()
        .where('item_id', 'in', ids.slice(i, i + 5_000))
        .execute();
      for (const { source_id, item_id } of rows)
        perSource.set(source_id, (perSource.get(source_id) ?? 0) + perItem.get(item_id!)!);
    }
    return perSource;
  }

  /** The waiting jobs that name an item, counted per item. */
  private async jobsPerItem(): Promise<Map<string, number>> {
    const perItem = new Map<string, number>();
    let state;
    try {
      state = (await this.bus.jsm.streams.info(JOBS_STREAM)).state;
    } catch (error) {
      if (isNotFound(error)) return perItem; // no pipelines have run yet
      throw error;
    }
    if (state.messages === 0) return perItem; // an empty stream's first_seq is past its last (or 0)
    const last = Math.min(state.last_seq, state.first_seq + MAX_JOBS - 1);
    let next = Math.max(1, state.first_seq);
    const reader = async () => {
      for (let seq = next++; seq <= last; seq = next++) {
        const stored = await this.bus.jsm.streams.getMessage(JOBS_STREAM, { seq }).catch((error: unknown) => {
          if (isNotFound(error)) return null; // done meanwhile: a work queue deletes what is acknowledged
          throw error;
        });
        const itemId = stored ? (decodeJson(stored.data) as { item_id?: unknown }).item_id : undefined;
        if (typeof itemId === 'string') perItem.set(itemId, (perItem.get(itemId) ?? 0) + 1);
      }
    };
    await Promise.all(Array.from({ length: PARALLEL }, reader));
    return perItem;
  }
}
