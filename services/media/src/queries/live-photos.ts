import { sql, type Kysely, type RawBuilder, type SqlBool } from 'kysely';
import type { Scope } from '@memex/contracts';
import { visibleTo } from '@memex/db';
import type { MediaDatabase } from '../projection/schema.js';

/*
 * A Live Photo is two files an iPhone takes at once: the still (HEIC or JPEG) and a second or
 * three of motion (a QuickTime clip). They share Apple's content identifier (the still's MakerNote,
 * the clip's QuickTime keys), which ingest reads into each item's `meta.contentIdentifier`. Both
 * stay items; the memex shows them as one: the still names its motion clip and the clip its still,
 * and a clip whose still is here is not a moment of its own.
 */

/** The content identifier of an `items` row (by its alias). */
const identifierOf = (alias: string) => sql.raw(`${alias}.meta->>'contentIdentifier'`);

/** Whether the `items` row is a Live Photo's motion clip whose still the memex holds (counted once, as its still). */
export function isMotionClip(alias = 'items'): RawBuilder<SqlBool> {
  return sql<SqlBool>`(${sql.raw(`${alias}.kind`)} = 'video' and ${identifierOf(alias)} is not null and exists (
    select 1 from items still where still.kind = 'photo' and ${identifierOf('still')} = ${identifierOf(alias)}))`;
}

/** The Live Photo an item is half of (the still and its motion clip, both within the scope), or null. */
export async function livePhotoOf(
  db: Kysely<MediaDatabase>,
  item: { item_id: string; kind: string; meta: Record<string, unknown> },
  scope: Scope,
): Promise<{ still: string; motion: string } | null> {
  const identifier = item.meta['contentIdentifier'];
  if (typeof identifier !== 'string' || (item.kind !== 'photo' && item.kind !== 'video')) return null;
  const other = await db
    .selectFrom('items')
    .select('item_id')
    .where(sql<SqlBool>`meta->>'contentIdentifier' = ${identifier}`)
    .where('kind', '=', item.kind === 'photo' ? 'video' : 'photo')
    .where(visibleTo(scope))
    // Two clips with one identifier (a copy re-encoded): the first, the same every time.
    .orderBy('item_id')
    .limit(1)
    .executeTakeFirst();
  if (!other) return null;
  return item.kind === 'photo'
    ? { still: item.item_id, motion: other.item_id }
    : { still: other.item_id, motion: item.item_id };
}
