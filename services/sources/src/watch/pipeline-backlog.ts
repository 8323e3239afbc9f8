import { Inject, Injectable, Logger } from '@nestjs/common';
import { sql, type Kysely } from 'kysely';
import { DeliverPolicy } from '@nats-io/jetstream';
import { ItemIngested, typeOfFileName } from '@memex/contracts';
import {
  decodeJson,
  EVENTS_STREAM,
  IDLE,
  isFailedJobSubject,
  isNotFound,
  JOBS_STREAM,
  MEDIA_QUEUE_CONSUMER,
  orIdle,
  typeFilter,
  type Bus,
} from '@memex/bus';
import { BUS, DATABASE } from '@memex/runtime';
import type { SourcesDatabase } from '../projection/schema.js';

/** How long a count is served before the queues are read again. */
const FRESH_MS = 5_000;
/** Sequences of a queue one count reads at most (a longer queue is counted up to here). */
const MAX_JOBS = 100_000;
/** Jobs read from the stream at once. */
const PARALLEL = 32;
/** A read of media's queue that gets nothing for this long has read all there is. */
const IDLE_MS = 2_000;

/** Waiting work per item id. */
type PerItem = Map<string, number>;

/**
 * The pipelines' backlog of each source (`memex sources`, seed: status for people): the work
 * waiting for the source's files (a worker's: its items') — the jobs on MEMEX_JOBS (tiers 0–2, any priority) that name one
 * of its items, and its photos and videos media has not finished (media's own queue, the
 * `media_photos` consumer of item.ingested). Both are read, not consumed, at most every FRESH_MS
 * and over their first MAX_JOBS sequences.
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

  /** Work waiting per source id (sources with none are absent). */
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
    const [jobs, media] = await Promise.all([this.jobsPerItem(), this.mediaPerItem()]);
    const perSource = new Map<string, number>();
    const ids = [...new Set([...jobs.keys(), ...media.keys()])];
    for (let i = 0; i < ids.length; i += 5_000) {
      const some = ids.slice(i, i + 5_000);
      const rows = await this.db
        .selectFrom('files')
        .select(['source_id', 'item_id', 'path'])
        .where('item_id', 'in', some)
        // A worker's items are its source's (`worker.<name>`), the location its path.
        .unionAll(
          this.db
            .selectFrom('worker_items')
            .select([sql<string>`'worker.' || worker`.as('source_id'), 'item_id', sql<string>`location`.as('path')])
            .where('item_id', 'in', some),
        )
        .execute();
      // Identical copies are one item: its work counts once per source.
      const counted = new Set<string>();
      for (const { source_id, item_id, path } of rows) {
        const id = item_id!;
        const key = `${source_id}\n${id}`;
        // Media's queue holds every item; only photos and videos are media's work.
        const own = (jobs.get(id) ?? 0) + (isMedia(path) ? (media.get(id) ?? 0) : 0);
        if (counted.has(key) || own === 0) continue;
        counted.add(key);
        perSource.set(source_id, (perSource.get(source_id) ?? 0) + own);
      }
    }
    return perSource;
  }

  /** The waiting jobs that name an item, counted per item. */
  private async jobsPerItem(): Promise<PerItem> {
    const perItem: PerItem = new Map();
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
        // A job set aside after its retries is no longer waiting (`memex jobs failed` shows it).
        if (!stored || isFailedJobSubject(stored.subject)) continue;
        const itemId = (decodeJson(stored.data) as { item_id?: unknown }).item_id;
        if (typeof itemId === 'string') perItem.set(itemId, (perItem.get(itemId) ?? 0) + 1);
      }
    };
    await Promise.all(Array.from({ length: PARALLEL }, reader));
    return perItem;
  }

  /**
   * The items media's queue has not acknowledged: item.ingested events after the consumer's ack
   * floor, read by subject (`memex.evt.item.ingested.<id>`, headers only: no event is decoded).
   * An item media finished out of order within its read-ahead (at most its 256 unacknowledged)
   * still counts until the floor passes it.
   */
  private async mediaPerItem(): Promise<PerItem> {
    const perItem: PerItem = new Map();
    let info;
    try {
      info = await this.bus.jsm.consumers.info(EVENTS_STREAM, MEDIA_QUEUE_CONSUMER);
    } catch (error) {
      if (isNotFound(error)) return perItem; // media has not run yet
      throw error;
    }
    if (info.num_pending + info.num_ack_pending === 0) return perItem;
    const consumer = await this.bus.js.consumers.get(EVENTS_STREAM, {
      filter_subjects: typeFilter(ItemIngested.type),
      deliver_policy: DeliverPolicy.StartSequence,
      opt_start_seq: info.ack_floor.stream_seq + 1,
      headers_only: true,
    });
    const messages = await consumer.consume({ max_messages: 1_000 });
    try {
      const iterator = messages[Symbol.asyncIterator]();
      for (let read = 0; read < MAX_JOBS; read++) {
        // Nothing more within IDLE_MS: the rest was erased since (a deletion), or there is none.
        const next = await orIdle(iterator.next(), IDLE_MS);
        if (next === IDLE || next.done) break;
        const id = next.value.subject.slice(next.value.subject.lastIndexOf('.') + 1);
        perItem.set(id, (perItem.get(id) ?? 0) + 1);
        if (next.value.info.pending === 0) break;
      }
    } finally {
      messages.stop();
    }
    return perItem;
  }
}

/** Whether media works on a file: photos and videos (audio is ingest's transcript only). */
function isMedia(path: string): boolean {
  const type = typeOfFileName(path) ?? '';
  return type.startsWith('image/') || type.startsWith('video/');
}
