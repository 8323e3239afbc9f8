import { Inject, Injectable, Logger } from '@nestjs/common';
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
export class ThreadJoins {
  private readonly logger = new Logger('memex:ingest');

  constructor(
    @Inject(DATABASE) private readonly db: Kysely<IngestDatabase>,
    @Inject(CONFIG) private readonly config: MemexConfig,
    private readonly publisher: EventPublisher,
    private readonly host: ServiceHost,
  ) {}

  /** After the messages `ids` (new, naming other ids) are in the log up to `seq`: one event per thread they are in that has several keys. */
  async publishFor(ids: string[], seq: number, actor: Actor): Promise<void> {
    if (ids.length === 0) return;
    try {
      await this.host.projector!.waitFor(seq, this.config.minSeqTimeoutMs);
    } catch (error) {
      // The messages are stored; their threads stay apart in other read models until a later message joins them again.
      this.logger.warn(`thread joins of ${ids.length} new messages not published: ${(error as Error).message}`);
      return;
    }
    const rows = await sql<{ thread_key: string; key: string; id: string; labels: string[]; founder: boolean }>`
      with threads as (select distinct thread_key from messages where item_id = any(${ids}::text[]))
      select m.thread_key, i.meta->>'threadKey' as key, m.item_id as id, m.labels,
             (m.message_id = m.thread_key or i.identity = m.thread_key) as founder
      from messages m join items i on i.id = m.item_id
      where m.thread_key in (select thread_key from threads) and i.meta->>'threadKey' is not null
      order by m.thread_key, founder desc, i.added_at, i.id`.execute(this.db);
    const byThread = Map.groupBy(rows.rows, (row) => row.thread_key);
    const asked = new Set(ids);
    const drafts = [];
    for (const messages of byThread.values()) {
      const key = messages[0]!.key;
      const merged = [...new Set(messages.map((m) => m.key))].filter((k) => k !== key);
      const cause = messages.find((m) => asked.has(m.id));
      if (merged.length === 0 || !cause) continue;
      drafts.push(
        draftOf(ThreadJoined, {
          subject: `item:${cause.id}`,
          actor,
          labels: cause.labels,
          kind: 'email',
          data: { key, merged, id: cause.id },
        }),
      );
    }
    if (drafts.length > 0) await this.publisher.publishAll(drafts);
  }
}
