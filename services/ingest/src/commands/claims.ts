import { Logger } from '@nestjs/common';
import { IdentityClaimed, MemexError, type EventOf } from '@memex/contracts';
import {
  CLAIM_SUBJECT_ROOT,
  CLAIMS_STREAM,
  decodeJson,
  encodeJson,
  isNotFound,
  newId,
  readLog,
  typeFilter,
  type Bus,
} from '@memex/bus';

/** Written once the claims a version before kept on the log are copied to the claims stream (see `copyFromLog`). */
const COPIED_MARK = `${CLAIM_SUBJECT_ROOT}._copied_from_log`;

/** Who an identity belongs to, as its claim says. */
export interface Claim {
  itemId: string;
  /** When the claim was made (ms): a claim whose item never came is adopted after a grace period. */
  claimedAt: number;
}

interface ClaimRecord {
  item_id: string;
  key: 'source' | 'content';
  claimed_at: string;
}

function claimSubject(hash: string): string {
  return `${CLAIM_SUBJECT_ROOT}.${hash}`;
}

/**
 * The claims stream (`CLAIMS_STREAM_CONFIG`): claim an identity, read its owner, release it.
 * `hash` is the identity's sha256 (hex).
 */
export class IdentityClaims {
  private readonly logger = new Logger('memex:ingest');

  constructor(private readonly bus: Bus) {}

  /** Copies the claims a version before this one published on the log into the stream, once. */
  async ensureCopied(): Promise<void> {
    if (!(await this.lastRecord(COPIED_MARK))) await this.copyFromLog();
  }

  /**
   * Claims `hash` for `itemId` if nobody has: answers the claim, or null when another item holds it.
   */
  async claim(hash: string, key: ClaimRecord['key'], itemId: string, at = new Date()): Promise<Claim | null> {
    const record: ClaimRecord = { item_id: itemId, key, claimed_at: at.toISOString() };
    // Its own message id, so a publish retried after a timeout counts once; not the item's, which
    // would answer a claim made again after a release (within the dedupe window) as made already.
    const options = { msgID: newId(), expect: { lastSubjectSequence: 0 }, timeout: 10_000 };
    const publish = () => this.bus.js.publish(claimSubject(hash), encodeJson(record), options);
    try {
      await publish().catch((error: unknown) => {
        if (/timeout/i.test(String(error))) return publish();
        throw error;
      });
      return { itemId, claimedAt: at.getTime() };
    } catch (error) {
      if (/wrong last sequence/i.test(String(error))) return null;
      throw new MemexError('unavailable', `could not claim an identity for item ${itemId}: ${String(error)}`);
    }
  }

  /** The claim on `hash`, or null when none. */
  async owner(hash: string): Promise<Claim | null> {
    const record = await this.lastRecord(claimSubject(hash));
    return record && { itemId: record.item_id, claimedAt: Date.parse(record.claimed_at) };
  }

  /** Releases the claims on these hashes held by one of `itemIds`; answers how many. */
  async release(hashes: Iterable<string>, itemIds: readonly string[]): Promise<number> {
    let released = 0;
    for (const hash of hashes) {
      const found = await this.lastMessage(claimSubject(hash));
      if (!found || !itemIds.includes(decodeJson<ClaimRecord>(found.data).item_id)) continue;
      // Another deletion of the same item was first.
      await this.bus.jsm.streams.deleteMessage(CLAIMS_STREAM, found.seq, true).catch((error: unknown) => {
        if (!isNotFound(error)) throw error;
      });
      released++;
    }
    return released;
  }

  /**
   * Copies the `identity.claimed` events a version before this one published on the log into the
   * stream, as they were (the first of each identity), then marks it done. Interrupted, it runs
   * again at the next start: a claim copied already is refused as taken. The events stay on the
   * log (erasing them one by one would take minutes in a large archive); a deletion erases them
   * with their item.
   */
  private async copyFromLog(): Promise<void> {
    let copied = 0;
    for await (const { event } of readLog(this.bus, {
      filter: typeFilter(IdentityClaimed.type),
      untilCaughtUp: true,
    })) {
      const { subject, data, recorded_at } = event as EventOf<typeof IdentityClaimed>;
      const hash = subject.slice(subject.indexOf(':') + 1);
      if ((await this.claim(hash, data.key, data.item_id, new Date(recorded_at))) !== null) copied++;
    }
    if (copied > 0) this.logger.log(`copied ${copied} identity claims from the log into ${CLAIMS_STREAM}`);
    await this.bus.js.publish(COPIED_MARK, encodeJson({ claimed_at: new Date().toISOString() }));
  }

  private async lastRecord(subject: string): Promise<ClaimRecord | null> {
    const found = await this.lastMessage(subject);
    return found && decodeJson<ClaimRecord>(found.data);
  }

  private async lastMessage(subject: string) {
    return this.bus.jsm.streams.getMessage(CLAIMS_STREAM, { last_by_subj: subject }).catch((error: Error) => {
      if (/no message found|not found/i.test(error.message)) return null;
      throw error;
    });
  }
}
