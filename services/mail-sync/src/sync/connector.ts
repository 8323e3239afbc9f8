import {
  Ingest,
  ItemsDelete,
  MemexError,
  OWNER_SCOPE,
  rpcSubject,
  type Actor,
  type IngestResult,
  type ParamsOf,
  type ResultOf,
} from '@memex/contracts';
import type { Static } from '@sinclair/typebox';
import { callRpc, type Bus } from '@memex/bus';

/** What mail-sync does with the memex as a connector, the same for Gmail and IMAP accounts. */

/** Item data per memex.ingest request (its limit is 40 MB). */
const INGEST_BYTES = 24 * 1024 * 1024;

export async function mapLimit<T, R>(items: T[], limit: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        results[i] = await work(items[i]!);
      }
    }),
  );
  return results;
}

/** Consecutive runs of items of at most INGEST_BYTES of data each. */
export function byBytes<T>(items: T[], bytesOf: (item: T) => number): T[][] {
  const batches: T[][] = [];
  let batch: T[] = [];
  let bytes = 0;
  for (const item of items) {
    if (batch.length > 0 && bytes + bytesOf(item) > INGEST_BYTES) {
      batches.push(batch);
      batch = [];
      bytes = 0;
    }
    batch.push(item);
    bytes += bytesOf(item);
  }
  if (batch.length > 0) batches.push(batch);
  return batches;
}

/**
 * Raw messages through the same memex.ingest the importers use, as the connector: the items are
 * mirrored under `<kind>:<account>`; mail the memex already holds comes back as that item.
 */
export async function ingestMessages(
  bus: Bus,
  timeoutMs: number,
  caller: Actor,
  source: { kind: 'gmail' | 'imap'; id: string },
  batch: Array<{ raw: Buffer; externalId: string }>,
): Promise<Static<typeof IngestResult>[]> {
  const params: ParamsOf<typeof Ingest> = {
    items: batch.map((m) => ({
      type: 'message/rfc822',
      data: m.raw.toString('base64'),
      source,
      external_id: m.externalId,
    })),
  };
  const answer = await callRpc<ResultOf<typeof Ingest>>(
    bus,
    rpcSubject(Ingest),
    { method: Ingest.name, params, scope: OWNER_SCOPE, caller },
    timeoutMs,
  );
  return answer.results;
}

/** Deleted on the server for good: deleted here too (memex.items.delete erases it and what derives from it). */
export async function deleteItems(bus: Bus, timeoutMs: number, caller: Actor, itemIds: string[]): Promise<void> {
  for (const id of itemIds) {
    try {
      await callRpc(
        bus,
        rpcSubject(ItemsDelete),
        { method: ItemsDelete.name, params: { id }, scope: OWNER_SCOPE, caller },
        timeoutMs,
      );
    } catch (error) {
      if (!(error instanceof MemexError && error.code === 'not_found')) throw error;
    }
  }
}
