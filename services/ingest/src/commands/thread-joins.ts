import { Inject, Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import { sql, type Kysely } from 'kysely';
import { type Actor, ThreadJoined } from '@memex/contracts';
import { draftOf, EventPublisher } from '@memex/bus';
import type { MemexConfig } from '@memex/config';
import { CONFIG, DATABASE, ServiceHost } from '@memex/runtime';
import type { IngestDatabase } from '../projection/schema.js';

/**
 * Tells the log when new messages joined mail threads (`thread.joined`), for read models that
 * keep each message's own thread key (item.ingested's meta.threadKey: what one message alone
 * says). Ingest's threads are a connected component its projector builds (projection/threads.ts),
 * so once the projector has applied the new messages, a thread whose messages carry several
 * keys is one thread under the key of the message that founded it (the oldest thread wins).
 * Decided from the read model at the time, like a Takeout's labels: a replay reads these events
 * from the log and so builds what the live read models built.
 */
@Injectable()
export class ThreadJoins implements OnApplicationShutdown {
  private readonly logger = new Logger('memex:ingest');
  /** New messages whose joins are not published yet, with the sequence they were stored at and who sent them. */
  private readonly waiting = new Map<string, { seq: number; actor: Actor }>();
  /**
   * Of those, the ones a try already missed. Not a health problem: during a large import ingest's
   * read model is often more than the wait behind, and the joins follow once it is there.
   */
  private readonly late = new Set<string>();
  private retry?: NodeJS.Timeout;

  constructor(
    @Inject(DATABASE) private readonly db: Kysely<IngestDatabase>,
    @Inject(CONFIG) private readonly config: MemexConfig,
    private readonly publisher: EventPublisher,
    private readonly host: ServiceHost,
  ) {}

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
    clearTimeout(this.retry);
  }

  private async publishJoins(taken: Map<string, { seq: number; actor: Actor }>): Promise<void> {
    const ids = [...taken.keys()];
    const rows = await sql<{ thread_key: string; key: string; id: string; labels: string[]; founder: boolean }>`
      with threads as (select distinct thread_key from messages where item_id = any(${ids}::text[]))
      select m.thread_key, i.meta->>'threadKey' as key, m.item_id as id, m.labels,
             (m.message_id = m.thread_key or i.identity = m.thread_key) as founder
      from messages m join items i on i.id = m.item_id
      where m.thread_key in (select thread_key from threads) and i.meta->>'threadKey' is not null
      order by m.thread_key, founder desc, i.added_at, i.id`.execute(this.db);
    const byThread = Map.groupBy(rows.rows, (row) => row.thread_key);
    const drafts = [];
    for (const messages of byThread.values()) {
      const key = messages[0]!.key;
      const merged = [...new Set(messages.map((m) => m.key))].filter((k) => k !== key);
      const cause = messages.find((m) => taken.has(m.id));
      if (merged.length === 0 || !cause) continue;
      drafts.push(
        draftOf(ThreadJoined, {
          subject: `item:${cause.id}`,
          actor: taken.get(cause.id)!.actor,
          labels: cause.labels,
          kind: 'email',
          data: { key, merged, id: cause.id },
        }),
      );
    }
    if (drafts.length > 0) await this.publisher.publishAll(drafts);
  }
}
