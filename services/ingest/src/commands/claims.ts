import { Logger } from '@nestjs/common';
import { IdentityClaimed, MemexError, type EventOf } from '@memex/contracts';
import {
  CLAIM_SUBJECT_ROOT,
  CLAIMS_STREAM,
  decodeJson,
  encodeJson,
  isNotFound,
  lastEventOf,
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
  /**
   * Whether the claims a version before kept on the log are all on the stream (or there were
   * none). Until then a claim is looked for on the log too.
   */
  private copied = false;
  /** Why the copy failed, until a start copies them. */
  private copyFailure: string | undefined;

  constructor(private readonly bus: Bus) {}

  /**
   * Starts copying the claims a version before this one kept on the log into the stream, once per
   * memex (a mark says it is done). Not waited for: in a large archive it takes minutes, and claims
   * are read from both places meanwhile.
   */
  async startCopy(): Promise<void> {
    if (await this.lastRecord(COPIED_MARK)) {
      this.copied = true;
      return;
    }
    void this.copyFromLog().then(
      () => {
        this.copied = true;
      },
      (error: unknown) => {
        this.copyFailure = `identity claims kept on the log by an earlier version were not copied (${String(error)}): they are read from the log, more slowly; the next start copies them`;
        this.logger.error(this.copyFailure);
      },
    );
  }

  /** What is wrong, for the service's health. */
  problem(): string | undefined {
    return this.copyFailure;
  }

  /**
   * Claims `hash` for `itemId` if nobody has: answers the claim, or null when another item holds it.
   */
  async claim(hash: string, key: ClaimRecord['key'], itemId: string): Promise<Claim | null> {
    const onLog = this.copied ? null : await this.ownerOnLog(hash);
    if (onLog) return onLog.itemId === itemId ? onLog : null;
    const at = new Date();
    return (await this.write(hash, { item_id: itemId, key, claimed_at: at.toISOString() }))
      ? { itemId, claimedAt: at.getTime() }
      : null;
  }

  /** The claim on `hash`, or null when none. */
  async owner(hash: string): Promise<Claim | null> {
    const record = await this.lastRecord(claimSubject(hash));
    if (record) return { itemId: record.item_id, claimedAt: Date.parse(record.claimed_at) };
    return this.copied ? null : this.ownerOnLog(hash);
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
      if (await this.write(hash, { item_id: data.item_id, key: data.key, claimed_at: recorded_at })) copied++;
    }
    if (copied > 0) this.logger.log(`copied ${copied} identity claims from the log into ${CLAIMS_STREAM}`);
    await this.bus.js.publish(COPIED_MARK, encodeJson({ claimed_at: new Date().toISOString() }));
  }

  /** Writes a claim unless `hash` has one; answers whether it did. */
  private async write(hash: string, record: ClaimRecord): Promise<boolean> {
    // Its own message id, so a publish retried after a timeout counts once; not the item's, which
    // would answer a claim made again after a release (within the dedupe window) as made already.
    const options = { msgID: newId(), expect: { lastSubjectSequence: 0 }, timeout: 10_000 };
    const publish = () => this.bus.js.publish(claimSubject(hash), encodeJson(record), options);
    try {
      await publish().catch((error: unknown) => {
        if (/timeout/i.test(String(error))) return publish();
        throw error;
      });
      return true;
    } catch (error) {
      if (/wrong last sequence/i.test(String(error))) return false;
      throw new MemexError('unavailable', `could not claim an identity for item ${record.item_id}: ${String(error)}`);
    }
  }

  /** The claim an earlier version kept on the log for `hash`, or null. */
  private async ownerOnLog(hash: string): Promise<Claim | null> {
    const found = await lastEventOf(this.bus, IdentityClaimed, `identity:${hash}`);
    return found ? { itemId: found.event.data.item_id, claimedAt: Date.parse(found.event.recorded_at) } : null;
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
