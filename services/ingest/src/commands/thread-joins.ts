import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { sql, type Kysely } from 'kysely';
import { type Actor, ThreadJoined } from '@memex/contracts';
import { type Bus, draftOf, EventPublisher } from '@memex/bus';
import type { MemexConfig } from '@memex/config';
import { BUS, CONFIG, DATABASE, ServiceHost } from '@memex/runtime';
import type { IngestDatabase } from '../projection/schema.js';

/**
 * Tells the log when new messages joined mail threads (`thread.joined`), for read models that
 * keep each message's own thread key (item.ingested's meta.threadKey: what one message alone
 * says). Ingest's threads are a connected component its projector builds (projection/threads.ts),
 * so once the projector has applied the new messages, a thread whose messages carry several
 * keys is one thread under the key of the message that founded it (the oldest thread wins).
 * Decided from the read model at the time, like a Takeout's labels: a replay reads these events
 * from the log and so builds what the live read models built.
 *
 * Each join is said once: the projector keeps what thread.joined said (`thread_joined`), and a
 * thread's key is published only when it is not yet where the thread now is (a reply in a
 * joined thread says nothing). Nothing pending is lost in a crash: at start, once the read model
 * has the log as it was, every thread with a key not yet joined is published (`publishPending`).
 */
@Injectable()
export class ThreadJoins implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('memex:ingest');
  /** New messages whose joins are not published yet, with the sequence they were stored at and who sent them. */
  private readonly waiting = new Map<string, { seq: number; actor: Actor }>();
  /**
   * Of those, the ones a try already missed. Not a health problem: during a large import ingest's
   * read model is often more than the wait behind, and the joins follow once it is there.
   */
  private readonly late = new Set<string>();
  private retry?: NodeJS.Timeout;
  /** Joins this process published (thread key and merged keys) that the read model may not hold yet. */
  private readonly said = new Set<string>();
  private stopped = false;

  constructor(
    @Inject(DATABASE) private readonly db: Kysely<IngestDatabase>,
    @Inject(CONFIG) private readonly config: MemexConfig,
    private readonly publisher: EventPublisher,
    private readonly host: ServiceHost,
    @Inject(BUS) private readonly bus: Bus,
  ) {}

  /** Joins a crash left unsaid, published in the background once the read model has caught up. */
  onApplicationBootstrap(): void {
    void this.publishPending().catch((error: unknown) =>
      this.logger.warn(`pending thread joins not published: ${(error as Error).message}`),
    );
  }

  /**
   * Every thread whose messages carry a key not yet joined into the thread's, once the read model
   * has applied the log as it was at the call (what a crash between a message and its join left).
   */
  async publishPending(): Promise<void> {
    const upTo = await this.bus.lastSeq();
    while (!this.stopped) {
      try {
        await this.host.projector!.waitFor(upTo, this.config.minSeqTimeoutMs);
        break;
      } catch {
        // A long catch-up (a replay, a large import's backlog): keep waiting.
      }
    }
    if (this.stopped) return;
    const drafts = this.joinDrafts(await this.threadRows(null), new Map());
    if (drafts.length > 0) {
      this.logger.log(`publishing ${drafts.length} thread joins left pending`);
      await this.publisher.publishAll(drafts);
    }
  }

  /**
   * After the messages `ids` (new, naming other ids) are in the log up to `seq`: one event per
   * thread they are in that has several keys. When ingest's read model is not there in time, they
   * wait and are tried again with the next request or within 30 s.
   */
  async publishFor(ids: string[], seq: number, actor: Actor): Promise<void> {
    for (const id of ids) this.waiting.set(id, { seq, actor });
    if (this.waiting.size === 0) return;
    const taken = new Map(this.waiting);
    const upTo = Math.max(...[...taken.values()].map((w) => w.seq));
    try {
      await this.host.projector!.waitFor(upTo, this.config.minSeqTimeoutMs);
    } catch (error) {
      for (const id of taken.keys()) this.late.add(id);
      this.logger.warn(`thread joins of ${taken.size} new messages wait: ${(error as Error).message}`);
      this.retry ??= setTimeout(() => {
        this.retry = undefined;
        void this.publishFor([], 0, actor).catch((e: unknown) => this.logger.warn(String(e)));
      }, 30_000);
      return;
    }
    await this.publishJoins(taken);
    for (const id of taken.keys()) {
      this.waiting.delete(id);
      this.late.delete(id);
    }
  }

  /** How many new messages' joins a try already missed and still wait (for tests and the log). */
  get lateCount(): number {
    return this.late.size;
  }

  onApplicationShutdown(): void {
    this.stopped = true;
    clearTimeout(this.retry);
  }

  private async publishJoins(taken: Map<string, { seq: number; actor: Actor }>): Promise<void> {
    const drafts = this.joinDrafts(await this.threadRows([...taken.keys()]), taken);
    if (drafts.length > 0) await this.publisher.publishAll(drafts);
  }

  /**
   * The messages of the threads the items `ids` are in (all threads with several keys for null),
   * founder first, then as they came, each with its own key and the key thread.joined put it under.
   */
  private async threadRows(ids: string[] | null) {
    const threads =
      ids === null
        ? sql`select m.thread_key from messages m join items i on i.id = m.item_id where i.meta->>'threadKey' is not null
            group by m.thread_key having count(distinct i.meta->>'threadKey') > 1`
        : sql`select distinct thread_key from messages where item_id = any(${ids}::text[])`;
    const rows = await sql<{ thread_key: string; key: string; joined: string | null; id: string; labels: string[] }>`
      select m.thread_key, i.meta->>'threadKey' as key, j.key as joined, m.item_id as id, m.labels,
             (m.message_id = m.thread_key or i.identity = m.thread_key) as founder
      from messages m join items i on i.id = m.item_id left join thread_joined j on j.merged = i.meta->>'threadKey'
      where m.thread_key in (${threads}) and i.meta->>'threadKey' is not null
      order by m.thread_key, founder desc, i.added_at, i.id`.execute(this.db);
    return rows.rows;
  }

  /**
   * A thread.joined per thread with keys not yet joined into its key (the founder's), caused by
   * the first of `taken` in it — or, for a join left pending, its latest message, by ingest.
   */
  private joinDrafts(rows: Awaited<ReturnType<ThreadJoins['threadRows']>>, taken: Map<string, { actor: Actor }>) {
    const drafts = [];
    for (const messages of Map.groupBy(rows, (row) => row.thread_key).values()) {
      const key = messages[0]!.key;
      const merged = [...new Set(messages.filter((m) => m.key !== key && m.joined !== key).map((m) => m.key))];
      const cause = taken.size > 0 ? messages.find((m) => taken.has(m.id)) : messages.at(-1);
      const said = `${key} ${merged.join(' ')}`;
      if (merged.length === 0 || !cause || this.said.has(said)) continue;
      this.said.add(said);
      drafts.push(
        draftOf(ThreadJoined, {
          subject: `item:${cause.id}`,
          actor: taken.get(cause.id)?.actor ?? { kind: 'system', id: 'ingest' },
          labels: cause.labels,
          kind: 'email',
          data: { key, merged, id: cause.id },
        }),
      );
    }
    return drafts;
  }
}
