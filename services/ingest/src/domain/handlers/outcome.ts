import type { IngestHandler } from './handler.js';

/** What the owner already holds for an item, looked up by its two keys. */
export interface KnownItems {
  /** The item stored under the same source + external_id, with its identity. */
  bySourceId: { id: string; identity: string } | null;
  /** An item with the same identity (Message-ID, content hash), from any source. */
  byIdentity: { id: string } | null;
}

export type IngestOutcome =
  { result: 'created' } | { result: 'updated'; id: string } | { result: 'duplicate'; id: string };

/**
 * The result of ingesting a parsed item (seed §4.5):
 * - same source + external_id, same identity: a retry, `duplicate`;
 * - same source + external_id, new identity: `updated` when the handler's items change (documents),
 *   else `duplicate` (a message never changes);
 * - otherwise the same identity from anywhere (the same Message-ID imported from two archives,
 *   the same file uploaded twice): `duplicate` of that item;
 * - otherwise `created`.
 */
export function decideOutcome(
  handler: Pick<IngestHandler, 'updatable'>,
  identity: string,
  known: KnownItems,
): IngestOutcome {
  const { bySourceId, byIdentity } = known;
  if (bySourceId) {
    if (bySourceId.identity !== identity && handler.updatable) return { result: 'updated', id: bySourceId.id };
    return { result: 'duplicate', id: bySourceId.id };
  }
  if (byIdentity) return { result: 'duplicate', id: byIdentity.id };
  return { result: 'created' };
}
