import { setTimeout as sleep } from 'node:timers/promises';
import {
  type Actor,
  ItemIngested,
  isInboxFolder,
  MailFlagsChanged,
  MailSpamMarked,
  MemexError,
} from '@memex/contracts';
import { newId, type DraftOf, type EventPublisher } from '@memex/bus';
import type { BlobStore } from '@memex/blobs';
import {
  changeTo,
  decideOutcome,
  gmailState,
  RejectedItem,
  type EmailItem,
  type MailMeta,
} from '../domain/handlers/index.js';
import { sha256Hex } from '../domain/handlers/text.js';
import {
  contentKeyHash,
  sourceKeyHash,
  type Claim,
  type IdentityLog,
  type ItemIngestedEvent,
  type Known,
  type StoredItem,
} from './identities.js';
import type { PreparedItem } from './prepare.js';
import { itemRecords, type ItemRecord } from './records.js';

/**
 * How long a claim may stand without its item before another request completes the item
 * itself: the claimant writes its events milliseconds after claiming unless it crashed.
 */
export const CLAIM_GRACE_MS = 10_000;

/** The log's message limit is 1 MB; an event must leave room for its envelope and headers. */
const EVENT_BYTES_MAX = 1_000_000;
/** What the envelope adds to a draft (ids, times, headers), generously. */
const ENVELOPE_BYTES = 2_000;

/** Resolving one identity goes through at most this many owners before giving up (only crash races loop). */
const MAX_HOPS = 6;

export interface ItemKeys {
  /** Hash of source + external_id, when the item has an external_id. */
  source: string | null;
  /** Hash of the handler's identity. */
  content: string;
  /** Hashes of the item's other identities (a paper's DOI beside its arXiv id). */
  aliases: string[];
}

export function keysOf(prepared: PreparedItem): ItemKeys {
  return {
    source: prepared.externalId === null ? null : sourceKeyHash(prepared.source, prepared.externalId),
    content: contentKeyHash(prepared.parsed.identity),
    aliases: (prepared.parsed.aliases ?? []).map(contentKeyHash),
  };
}

export type StoreOutcome =
  { status: 'created' | 'updated'; id: string; seq: number } | { status: 'duplicate'; id: string; seq?: undefined };

/** An item ready to publish: its records (children first) and their validated events. */
export interface Plan {
  id: string;
  records: ItemRecord[];
  drafts: DraftOf<typeof ItemIngested>[];
}

/**
 * Stores prepared items under the identity rules of seed §4.5, race-free and crash-safe:
 *
 * 1. A known source + external_id is that item (a duplicate; a document with new content is an
 *    update); else a known identity (Message-ID, content hash) from any source is a duplicate.
 * 2. A new item claims its identity, then its source key, on the log (first claim wins), then
 *    publishes its attachments and, last, itself. Blobs are written before any of it.
 * 3. A claim whose item never came (its claimant crashed between claim and events) is adopted
 *    after a grace period: the next request with that identity completes the item under the
 *    claimed id, with the same derived child ids; each `item.ingested` is published with
 *    expected-last-subject-sequence 0, so completing twice writes nothing twice.
 */
export class ItemStore {
  constructor(
    private readonly identities: IdentityLog,
    private readonly publisher: EventPublisher,
    private readonly blobs: BlobStore,
    private readonly graceMs = CLAIM_GRACE_MS,
  ) {}

  /**
   * Plans for the items the read model does not know, with their blobs written in one go (one
   * flush to disk for the batch); null for known ones, the rejection for unstorable ones. `store`
   * takes them.
   */
  async planNew(
    items: PreparedItem[],
    keys: ItemKeys[],
    known: Known,
    actor: Actor,
  ): Promise<Array<Plan | RejectedItem | null>> {
    const plans = items.map((item, i) => {
      if (isKnown(keys[i]!, known)) return null;
      try {
        return this.plan(item, newId(), 1, actor);
      } catch (error) {
        if (error instanceof RejectedItem) return error;
        throw error;
      }
    });
    await this.writeBlobs(plans.filter((plan): plan is Plan => plan !== null && !(plan instanceof RejectedItem)));
    return plans;
  }

  async store(
    item: PreparedItem,
    keys: ItemKeys,
    known: Known,
    actor: Actor,
    planned: Plan | RejectedItem | null = null,
  ): Promise<StoreOutcome> {
    if (planned instanceof RejectedItem) throw planned;
    const bySource = keys.source ? known.claims.get(keys.source) : undefined;
    if (bySource) return this.resolve(item, keys, bySource, 'source', known, actor, 0);
    const byContent = known.claims.get(keys.content);
    if (byContent) return this.resolve(item, keys, byContent, 'content', known, actor, 0);
    // Known by another of its identities (the journal's copy of an arXiv paper that named its DOI).
    for (const alias of keys.aliases) {
      const owner = await this.identities.lastClaim(alias);
      if (owner) return this.resolve(item, keys, owner, 'content', known, actor, 0);
    }
    const plan = planned ?? (await this.written(this.plan(item, newId(), 1, actor)));
    const claim = await this.identities.claim(keys.content, 'content', plan.id);
    if (claim.itemId !== plan.id) return this.resolve(item, keys, claim, 'content', known, actor, 1);
    return this.complete(item, keys, plan, known, actor, 1);
  }

  /** The item an identity already names: a duplicate, an update, or an interrupted item to complete. */
  private async resolve(
    item: PreparedItem,
    keys: ItemKeys,
    owner: Claim,
    via: 'source' | 'content',
    known: Known,
    actor: Actor,
    hops: number,
  ): Promise<StoreOutcome> {
    if (hops > MAX_HOPS) {
      throw new MemexError(
        'unavailable',
        `the identity of item ${item.index} is being changed concurrently; send the batch again`,
      );
    }
    const stored = known.items.get(owner.itemId) ?? (await this.settled(owner));
    if (!stored) return this.adopt(item, keys, owner.itemId, known, actor, hops + 1);
    // The batch sent again (the answer to an earlier send was lost): what that send did, once; a
    // copy further on in the batch is a duplicate of it, as it was in the earlier send.
    if (item.batch !== null && stored.batch === item.batch) {
      known.items.set(owner.itemId, { ...stored, batch: null });
      return { status: stored.revision > 1 ? 'updated' : 'created', id: owner.itemId, seq: stored.seq };
    }
    // The handlers' rule: a document with new content under its source + external_id is updated.
    const outcome = decideOutcome(
      item.handler,
      item.parsed.identity,
      via === 'source'
        ? { bySourceId: { id: owner.itemId, identity: stored.identity }, byIdentity: null }
        : { bySourceId: null, byIdentity: { id: owner.itemId } },
    );
    // The same content under its source and external_id may still be an update: a file read in
    // place that moved (a new location), or one sent with other labels (a photo in another album
    // of a newer Takeout, a Keep note relabelled): `update` tells.
    if (outcome.result === 'updated' || (via === 'source' && item.handler.updatable))
      return this.update(item, keys, owner.itemId, actor);
    if (item.parsed.kind === 'email') {
      const last = via === 'content' ? await this.identities.lastIngested(owner.itemId) : null;
      if (last && sharesIdOnly(item.parsed.meta, last.event)) return this.storeBeside(item, owner.itemId, known, actor);
      if (item.parsed.meta.gmail) {
        const seq = await this.relabel(item.parsed.meta.gmail.labels, owner.itemId, actor);
        if (seq !== null) return { status: 'updated', id: owner.itemId, seq };
      } else if (last) await this.labelCopy(item.parsed.meta, last.event, actor);
    }
    return { status: 'duplicate', id: owner.itemId };
  }

  /**
   * A message of a newer Google Takeout: its labels there (read, starred, inbox, trash, user
   * labels) replace what the memex has, as a re-run of the export is meant to, and one moved to
   * Spam since is marked spam (never unmarked: what was hidden from agents stays hidden). A
   * message Gmail mirrors (mail-sync) is left alone: Gmail itself is its truth, and a change here
   * would be written back to it. The sequence of the last change, or null when there was none.
   */
  private async relabel(labels: string[], id: string, actor: Actor): Promise<number | null> {
    const last = await this.identities.lastIngested(id);
    if (!last) return null;
    const current = await this.identities.messageState(id, last.seq);
    if (!current || current.origin === 'mirrored') return null;
    const about = { subject: `item:${id}`, actor, labels: last.event.labels, kind: last.event.kind ?? 'email' };
    let seq: number | null = null;
    const change = changeTo(current, labels);
    if (change)
      ({ seq } = await this.publisher.publish(MailFlagsChanged, {
        ...about,
        spam: current.spam,
        data: { id, ...change },
      }));
    if (gmailState(labels).spam && !current.spam)
      ({ seq } = await this.publisher.publish(MailSpamMarked, {
        ...about,
        spam: true,
        data: { id, reason: 'Gmail label Spam in a newer Takeout (X-Gmail-Labels)' },
      }));
    return seq;
  }

  /**
   * A copy of a stored message found in another folder (the same mail in two archives, or in
   * INBOX and in an archive folder) gives the message that folder's label too, as a mail client
   * shows one message in several folders. A copy in a spam folder marks the message spam: someone
   * filed it as junk, wherever the first copy came from.
   */
  private async labelCopy(copy: MailMeta, stored: ItemIngestedEvent, actor: Actor): Promise<void> {
    if (stored.data.kind !== 'email') return;
    const labels = stored.data.meta.labels;
    const about = { subject: `item:${stored.data.id}`, actor, labels: stored.labels, kind: stored.kind ?? 'email' };
    // The inbox is a flag of the message, not a label; a copy there changes nothing.
    const added = copy.labels.filter((label) => !labels.includes(label) && !isInboxFolder(label));
    if (added.length > 0)
      await this.publisher.publish(MailFlagsChanged, {
        ...about,
        spam: stored.spam ?? false,
        data: { id: stored.data.id, labels_added: added },
      });
    if (copy.spam && !stored.spam)
      await this.publisher.publish(MailSpamMarked, {
        ...about,
        spam: true,
        data: { id: stored.data.id, reason: `a copy in ${copy.spamReason ?? 'a spam folder'}` },
      });
  }

  /**
   * Keeps a message that reuses another's Message-ID as an item of its own: its identity is the
   * id and a hash of what tells it apart, so its own copies from other archives are still its
   * duplicates; the shared id is noted on it.
   */
  private async storeBeside(item: PreparedItem, ownerId: string, known: Known, actor: Actor): Promise<StoreOutcome> {
    const parsed = item.parsed as EmailItem;
    const apart = sha256Hex(
      JSON.stringify([parsed.meta.date, parsed.meta.subject, parsed.meta.from.map((a) => a.address)]),
    ).slice(0, 16);
    const beside: PreparedItem = {
      ...item,
      parsed: {
        ...parsed,
        identity: `${parsed.identity}#${apart}`,
        meta: { ...parsed.meta, sharedMessageId: true },
        warnings: [
          ...parsed.warnings,
          `its Message-ID <${parsed.meta.messageId}> is also the id of a different message (item ${ownerId}): both are kept`,
        ],
      },
    };
    return this.store(beside, keysOf(beside), known, actor);
  }

  /** The claimed item once its events are in the log; null when its claimant is gone. */
  private async settled(owner: Claim): Promise<StoredItem | null> {
    for (;;) {
      const stored = await this.identities.stored(owner.itemId);
      if (stored) return stored;
      const left = owner.claimedAt + this.graceMs - Date.now();
      if (left <= 0) return null;
      await sleep(Math.min(left, 100));
    }
  }

  /** Completes an item whose claimant crashed, under the id it claimed, with this request's content. */
  private async adopt(
    item: PreparedItem,
    keys: ItemKeys,
    id: string,
    known: Known,
    actor: Actor,
    hops: number,
  ): Promise<StoreOutcome> {
    const plan = await this.written(this.plan(item, id, 1, actor));
    const claim = await this.identities.claim(keys.content, 'content', id);
    if (claim.itemId !== id) return this.resolve(item, keys, claim, 'content', known, actor, hops + 1);
    return this.complete(item, keys, plan, known, actor, hops);
  }

  private async complete(
    item: PreparedItem,
    keys: ItemKeys,
    plan: Plan,
    known: Known,
    actor: Actor,
    hops: number,
  ): Promise<StoreOutcome> {
    if (keys.source) {
      // Another item took this source + external_id meanwhile: this one is that item's duplicate or update.
      const claim = await this.identities.claim(keys.source, 'source', plan.id);
      if (claim.itemId !== plan.id) return this.resolve(item, keys, claim, 'source', known, actor, hops + 1);
    }
    // Its other identities name it too, unless another item has one already (the first claim wins).
    for (const alias of keys.aliases) await this.identities.claim(alias, 'content', plan.id);
    const parent = plan.drafts[plan.drafts.length - 1]!;
    // Attachments first, the item last: once the item is in the log, all of it is.
    await Promise.all(plan.drafts.slice(0, -1).map((draft) => this.publishFirst(draft)));
    const seq = await this.publishFirst(parent);
    // No batch: a copy of the item further on in this same send is a duplicate of it.
    const stored = { identity: item.parsed.identity, revision: 1, seq: seq ?? 0, location: item.location, batch: null };
    known.items.set(plan.id, stored);
    const claim = { itemId: plan.id, claimedAt: Date.now() };
    known.claims.set(keys.content, claim);
    if (keys.source) known.claims.set(keys.source, claim);
    return seq === null ? { status: 'duplicate', id: plan.id } : { status: 'created', id: plan.id, seq };
  }

  /**
   * New content, a new location or new labels under a known source + external_id (documents,
   * photos): the next revision, optimistic on the log. None when all three are as they were.
   */
  private async update(item: PreparedItem, keys: ItemKeys, id: string, actor: Actor): Promise<StoreOutcome> {
    for (let attempt = 0; attempt < MAX_HOPS; attempt++) {
      const last = await this.identities.lastIngested(id);
      if (!last)
        throw new MemexError('conflict', `item ${id} was deleted while it was being updated; send the item again`);
      if (
        last.event.data.identity === item.parsed.identity &&
        (last.event.data.location ?? null) === item.location &&
        sameLabels(last.event.labels, item.labels)
      )
        return item.batch !== null && last.event.correlation_id === item.batch
          ? { status: 'updated', id, seq: last.seq } // this batch's earlier send (see `resolve`)
          : { status: 'duplicate', id };
      const plan = await this.written(this.plan(item, id, last.event.data.revision + 1, actor));
      if (plan.drafts.length !== 1)
        throw new Error(`handler ${item.handler.name} is updatable but produced attachments`);
      const seq = await this.identities.publishRevision(plan.drafts[0]!, last.seq);
      if (seq === null) continue;
      // The new content names this item unless another item already has it.
      await this.identities.claim(keys.content, 'content', id);
      return { status: 'updated', id, seq };
    }
    throw new MemexError('unavailable', `item ${id} is being updated concurrently; send the item again`);
  }

  /** Publishes an item's first `item.ingested`; null when it is already there (completed by another request). */
  private async publishFirst(draft: DraftOf<typeof ItemIngested>): Promise<number | null> {
    try {
      return (await this.publisher.publish(ItemIngested, draft)).seq;
    } catch (error) {
      if (error instanceof MemexError && error.code === 'conflict') return null;
      throw error;
    }
  }

  /** Records and events for the item under `id` (its blobs still to write). */
  private plan(item: PreparedItem, id: string, revision: number, actor: Actor): Plan {
    const records = itemRecords(item, id);
    const spam = item.parsed.kind === 'email' && item.parsed.meta.spam;
    const drafts = records.map((record) => {
      const draft: DraftOf<typeof ItemIngested> = {
        subject: `item:${record.id}`,
        actor,
        ...(item.batch !== null ? { correlation_id: item.batch } : {}),
        labels: item.labels,
        kind: record.typed.kind,
        spam,
        ...(record.occurredAt ? { occurred_at: record.occurredAt } : {}),
        expectFirst: revision === 1,
        data: {
          id: record.id,
          ...record.typed,
          revision,
          title: record.title,
          source: item.source,
          external_id: record.parentId ? null : item.externalId,
          identity: record.identity,
          ...(record.parentId === null && item.parsed.aliases?.length ? { aliases: item.parsed.aliases } : {}),
          origin: item.source.kind.startsWith('import') ? 'imported' : 'mirrored',
          content_type: record.contentType,
          content_sha256: record.contentSha256,
          size: record.size,
          ...(record.location !== null ? { location: record.location } : {}),
          text_sha256: record.textSha256,
          text_length: record.textLength,
          ...(record.parentId ? { parent_id: record.parentId } : {}),
        },
      };
      const size = Buffer.byteLength(JSON.stringify(draft)) + ENVELOPE_BYTES;
      if (size > EVENT_BYTES_MAX) {
        throw new RejectedItem(
          `the item's metadata is too large for the log (${Math.round(size / 1024)} KB; the limit is 1 MB)`,
        );
      }
      return draft;
    });
    return { id, records, drafts };
  }

  /** Blobs are written before any event names them; an in-place file's own bytes never are. */
  private async writeBlobs(plans: Plan[]): Promise<void> {
    const blobs = new Map<string, Buffer>();
    for (const record of plans.flatMap((plan) => plan.records)) {
      if (record.location === null) blobs.set(record.contentSha256, record.content);
      blobs.set(record.textSha256, record.text);
    }
    await this.blobs.putAll(blobs);
  }

  private async written(plan: Plan): Promise<Plan> {
    await this.writeBlobs([plan]);
    return plan;
  }
}

/**
 * Whether a message with a known Message-ID is another message that reuses it (bulk senders
 * write `<email@domain.com>` on every mailing): copies of one message share their Date header
 * (mailers and archives never rewrite it), while messages reusing an id have their own dates,
 * or, undated, their own sender and subject.
 */
function sharesIdOnly(mine: MailMeta, stored: ItemIngestedEvent): boolean {
  if (mine.messageId === null || stored.data.kind !== 'email') return false;
  const theirs = stored.data.meta;
  if (theirs.date !== mine.date) return true;
  return theirs.date === null && (theirs.subject !== mine.subject || theirs.from[0]?.address !== mine.from[0]?.address);
}

function isKnown(keys: ItemKeys, known: Known): boolean {
  return (keys.source !== null && known.claims.has(keys.source)) || known.claims.has(keys.content);
}

/** Whether two lists hold the same labels, in whatever order. */
function sameLabels(a: readonly string[], b: readonly string[]): boolean {
  const set = new Set(a);
  return new Set(b).size === set.size && b.every((label) => set.has(label));
}
