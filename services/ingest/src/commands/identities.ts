import { createHash } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import { ItemIngested, MemexError, type EventEnvelope, type EventOf } from '@memex/contracts';
import { decodeJson, EVENTS_STREAM, eventSubject, type Bus, type DraftOf, type EventPublisher } from '@memex/bus';
import type { IngestDatabase } from '../projection/schema.js';
import { IdentityClaims, type Claim } from './claims.js';
import type { ItemSource } from './prepare.js';

export type { Claim } from './claims.js';

/** What one batch knows so far: items by the hashes of their keys, and their stored state. */
export interface Known {
  claims: Map<string, Claim>;
  items: Map<string, StoredItem>;
}

/** The current state of a stored item, from its last `item.ingested`. */
export interface StoredItem {
  identity: string;
  revision: number;
  /** Log sequence of that event (for expected-last-subject-sequence on an update). */
  seq: number;
  /** Where its bytes live (in-place files), or null. */
  location: string | null;
  /** The sender's batch that last wrote it (see `PreparedItem.batch`), or null. */
  batch: string | null;
}

export type ItemIngestedEvent = EventOf<typeof ItemIngested>;

function hashKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

/** The identity of an item by where it came from: source + external_id. */
export function sourceKeyHash(source: ItemSource, externalId: string): string {
  return hashKey(`source\0${source.kind}\0${source.id}\0${externalId}`);
}

/** The identity of an item by what it is: the handler's identity (Message-ID, content hash). */
export function contentKeyHash(identity: string): string {
  return hashKey(`content\0${identity}`);
}

function isConflict(error: unknown): boolean {
  return error instanceof MemexError && error.code === 'conflict';
}

/**
 * Items' identities (DESIGN.md §3: uniqueness decided by the owner with a real constraint): each
 * identity's first claim (`IdentityClaims`, published with expected-last-subject-sequence 0)
 * names its item, so of two concurrent batches (or replicas) exactly one wins and the other reads
 * the winner. The read model answers the common case (an item already stored) without a round
 * trip to NATS; an item's state comes from its last `item.ingested` on the log.
 */
export class IdentityLog {
  constructor(
    private readonly bus: Bus,
    private readonly publisher: EventPublisher,
    private readonly db: Kysely<IngestDatabase>,
    private readonly claims = new IdentityClaims(bus),
  ) {}

  /**
   * What the read model knows about these items: stored items by their two keys (a stored item
   * is complete: its row comes from its last event). Keys it does not know go to the log.
   */
  async known(items: Array<{ source: ItemSource; externalId: string | null; identity: string }>): Promise<Known> {
    const claims = new Map<string, Claim>();
    const stored = new Map<string, StoredItem>();
    if (items.length === 0) return { claims, items: stored };
    const bySource = items
      .filter((item) => item.externalId !== null)
      .map((item) => sql`(${item.source.kind}, ${item.source.id}, ${item.externalId})`);
    const rows = await this.db
      .selectFrom('items')
      .select([
        'id',
        'identity',
        'revision',
        'seq',
        'source_kind',
        'source_id',
        'external_id',
        'added_at',
        'location',
        'batch',
      ])
      .where('parent_id', 'is', null)
      .where((eb) =>
        eb.or([
          eb('identity', 'in', [...new Set(items.map((item) => item.identity))]),
          ...(bySource.length > 0
            ? [sql<boolean>`(source_kind, source_id, external_id) in (${sql.join(bySource)})`]
            : []),
        ]),
      )
      .execute();
    for (const row of rows) {
      if (row.identity === null) continue;
      const claim = { itemId: row.id, claimedAt: row.added_at.getTime() };
      claims.set(contentKeyHash(row.identity), claim);
      if (row.external_id !== null)
        claims.set(sourceKeyHash({ kind: row.source_kind, id: row.source_id }, row.external_id), claim);
      const { identity, revision, seq, location, batch } = row;
      stored.set(row.id, { identity, revision, seq, location, batch });
    }
    return { claims, items: stored };
  }

  /**
   * Claims an identity for an item. Answers the owner: `itemId` itself when the claim won, else
   * the item that holds it.
   */
  async claim(hash: string, key: 'source' | 'content', itemId: string): Promise<Claim> {
    const claim = await this.claims.claim(hash, key, itemId);
    if (claim) return claim;
    const owner = await this.claims.owner(hash);
    // Only a deletion releasing the claim between our two calls leaves nothing: claim again.
    return owner ?? this.claim(hash, key, itemId);
  }

  async lastClaim(hash: string): Promise<Claim | null> {
    return this.claims.owner(hash);
  }

  /** Starts copying the claims a version before this one kept on the log (see `IdentityClaims.startCopy`). */
  async startClaimsCopy(): Promise<void> {
    await this.claims.startCopy();
  }

  /** What is wrong with the claims, for the service's health. */
  problem(): string | undefined {
    return this.claims.problem();
  }

  /** An item's last `item.ingested`, straight from the log (the read model may lag), or null. */
  async lastIngested(itemId: string): Promise<{ seq: number; event: ItemIngestedEvent } | null> {
    const found = await this.last(eventSubject('item.ingested', `item:${itemId}`));
    return found ? { seq: found.seq, event: found.event as ItemIngestedEvent } : null;
  }

  /**
   * A stored message's flags and mail labels as the mail views show them (the read model), or
   * null; once the read model has applied `seq` (the message's last item.ingested), so a re-import
   * right after the first sees the message, not its absence.
   */
  async messageState(itemId: string, seq: number) {
    await this.readModelAt(seq);
    return (
      (await this.db
        .selectFrom('messages')
        .select(['read', 'starred', 'inbox', 'trashed', 'mail_labels', 'origin', 'spam'])
        .where('item_id', '=', itemId)
        .executeTakeFirst()) ?? null
    );
  }

  /** Waits (up to 60 s) until ingest's projector has applied `seq`: its checkpoint, read from Postgres. */
  private async readModelAt(seq: number): Promise<void> {
    const deadline = Date.now() + 60_000;
    for (;;) {
      const row = await sql<{ seq: number }>`select seq from projector_checkpoint where projector = 'ingest'`.execute(
        this.db,
      );
      if ((row.rows[0]?.seq ?? 0) >= seq) return;
      if (Date.now() > deadline)
        throw new MemexError('timeout', `the ingest read model has not applied ${seq} after 60 s`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  /** The stored state of an item from the log, or null when it has no `item.ingested` yet. */
  async stored(itemId: string): Promise<StoredItem | null> {
    const last = await this.lastIngested(itemId);
    if (!last) return null;
    const { identity, revision, location } = last.event.data;
    return { identity, revision, seq: last.seq, location: location ?? null, batch: last.event.correlation_id ?? null };
  }

  /**
   * Publishes an item's next revision only if its last `item.ingested` is still the one at
   * `afterSeq` (expected-last-subject-sequence): two concurrent updates cannot both win.
   * Returns the sequence, or null when another update came first.
   */
  async publishRevision(draft: DraftOf<typeof ItemIngested>, afterSeq: number): Promise<number | null> {
    try {
      return (await this.publisher.publish(ItemIngested, { ...draft, expectLastSeq: afterSeq })).seq;
    } catch (error) {
      if (isConflict(error)) return null;
      throw error;
    }
  }

  private async last(subject: string): Promise<{ seq: number; event: EventEnvelope } | null> {
    const message = await this.bus.jsm.streams
      .getMessage(EVENTS_STREAM, { last_by_subj: subject })
      .catch((error: Error) => {
        if (/no message found|not found/i.test(error.message)) return null;
        throw error;
      });
    return message ? { seq: message.seq, event: decodeJson<EventEnvelope>(message.data) } : null;
  }
}
