import { Inject, Injectable } from '@nestjs/common';
import { sql, type Kysely } from 'kysely';
import {
  IdentityClaimed,
  isEventOf,
  ItemDeleted,
  ItemIngested,
  ItemsDelete,
  MemexError,
  type ParamsOf,
  type ResultOf,
} from '@memex/contracts';
import {
  aggregateFilter,
  eraseEvents,
  EventPublisher,
  EVENTS_STREAM,
  isNotFound,
  lastEventOf,
  type Bus,
} from '@memex/bus';
import { BlobStore } from '@memex/blobs';
import type { MemexConfig } from '@memex/config';
import { BUS, CONFIG, DATABASE, RpcMethod, ServiceHost, type CallContext } from '@memex/runtime';
import { IdentityClaims } from './claims.js';
import { contentKeyHash, sourceKeyHash } from './identities.js';
import type { IngestDatabase } from '../projection/schema.js';

/**
 * Deletion is real (DESIGN.md §3, seed §9): the item and its attachments lose their events (erased
 * from the log, so a replay cannot bring them back), their identity claims (so the same item can
 * come in again) and their blobs (unless another item names the same bytes); then `item.deleted`
 * tells every read model to drop them and what it derived from them.
 */
@Injectable()
export class DeletionService {
  private readonly claims: IdentityClaims;

  constructor(
    @Inject(BUS) private readonly bus: Bus,
    @Inject(DATABASE) private readonly db: Kysely<IngestDatabase>,
    @Inject(CONFIG) private readonly config: MemexConfig,
    private readonly publisher: EventPublisher,
    private readonly blobs: BlobStore,
    private readonly host: ServiceHost,
  ) {
    this.claims = new IdentityClaims(bus);
  }

  @RpcMethod(ItemsDelete)
  async delete(params: ParamsOf<typeof ItemsDelete>, call: CallContext): Promise<ResultOf<typeof ItemsDelete>> {
    // The read model must know every attachment of the item: let it catch up first.
    await this.host.projector!.caughtUp(this.config.minSeqTimeoutMs);
    const root = await this.db
      .selectFrom('items')
      .select(['id', 'parent_id'])
      .where('id', '=', params.id)
      .executeTakeFirst();
    if (!root) throw new MemexError('not_found', `no item ${params.id}`);
    if (root.parent_id) {
      throw new MemexError(
        'conflict',
        `item ${params.id} is an attachment of ${root.parent_id}, whose bytes contain it: delete ${root.parent_id}`,
      );
    }
    const items = await this.family(params.id);
    const ids = items.map((item) => item.id);

    // Erase first: if this stops half-way, the read model still lists the item and deleting again finishes the job.
    let erased = 0;
    const claims = new Set<string>();
    for (const id of ids) {
      erased += await eraseEvents(this.bus, aggregateFilter(`item:${id}`), {
        seen: (event) => {
          // Every identity the item had (each revision's), to release below.
          if (!isEventOf(ItemIngested, event)) return;
          const { data } = event;
          if (data.parent_id) return;
          claims.add(contentKeyHash(data.identity));
          for (const alias of data.aliases ?? []) claims.add(contentKeyHash(alias));
          if (data.external_id !== null) claims.add(sourceKeyHash(data.source, data.external_id));
        },
      });
    }
    // Only this item's claims: a content claim its update lost to another item stays that item's.
    erased += await this.claims.release(claims, ids);
    for (const hash of claims) erased += await this.eraseClaimOnLog(hash, ids);
    await this.deleteBlobs(items, ids);

    // Attachments before their message, so no consumer ever sees a child without its parent's fate.
    let seq = 0;
    for (const id of [...ids].reverse()) {
      ({ seq } = await this.publisher.publish(ItemDeleted, {
        subject: `item:${id}`,
        actor: call.caller,
        data: { id },
      }));
    }
    // Imports decide duplicates from the read model: answer once it has dropped the item, so the
    // same message sent right after this answer comes in again rather than as a duplicate.
    await this.host.projector!.waitFor(seq, this.config.minSeqTimeoutMs);
    return { deleted: ids, erased_events: erased, seq };
  }

  /** Erases the claim a version before this one kept on the log (see `IdentityClaims.copyFromLog`), if one of `ids` holds it. */
  private async eraseClaimOnLog(hash: string, ids: readonly string[]): Promise<number> {
    const claim = await lastEventOf(this.bus, IdentityClaimed, `identity:${hash}`);
    if (!claim || !ids.includes(claim.event.data.item_id)) return 0;
    await this.bus.jsm.streams.deleteMessage(EVENTS_STREAM, claim.seq, true).catch((error: unknown) => {
      if (!isNotFound(error)) throw error;
    });
    return 1;
  }

  /** The item and everything that came out of it, parents before children. */
  private async family(
    id: string,
  ): Promise<Array<{ id: string; content_sha256: string | null; text_sha256: string | null }>> {
    const result = await sql<{ id: string; content_sha256: string | null; text_sha256: string | null }>`
      with recursive family(id, depth) as (
        select id, 0 from items where id = ${id}
        union all
        select i.id, f.depth + 1 from items i join family f on i.parent_id = f.id
      )
      select i.id, i.content_sha256, i.text_sha256 from family f join items i using (id) order by f.depth, i.id`.execute(
      this.db,
    );
    return result.rows;
  }

  /** Blobs of these items that no other item names. */
  private async deleteBlobs(
    items: Array<{ content_sha256: string | null; text_sha256: string | null }>,
    ids: string[],
  ): Promise<void> {
    const hashes = [
      ...new Set(
        items.flatMap((item) => [item.content_sha256, item.text_sha256]).filter((h): h is string => h !== null),
      ),
    ];
    if (hashes.length === 0) return;
    const shared = await this.db
      .selectFrom('items')
      .select(['content_sha256', 'text_sha256'])
      .where('id', 'not in', ids)
      .where((eb) => eb.or([eb('content_sha256', 'in', hashes), eb('text_sha256', 'in', hashes)]))
      .execute();
    const kept = new Set(shared.flatMap((row) => [row.content_sha256, row.text_sha256]));
    for (const hash of hashes) if (!kept.has(hash)) await this.blobs.delete(hash);
  }
}
