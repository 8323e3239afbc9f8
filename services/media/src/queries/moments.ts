import { sql, type Kysely, type SqlBool } from 'kysely';
import { isMotionClip } from './live-photos.js';
import type { Scope } from '@memex/contracts';
import { visibleTo } from '@memex/db';
import type { Moment } from '../domain/events.js';
import type { MediaDatabase } from '../projection/schema.js';

/** The dated photos and videos within a scope (and a time range) as event clustering reads them. */
export async function loadMoments(
  db: Kysely<MediaDatabase>,
  scope: Scope,
  range: { from?: string | undefined; to?: string | undefined } = {},
): Promise<Moment[]> {
  let query = db
    .selectFrom('items')
    .select([
      'item_id',
      'occurred_at',
      'latitude',
      'longitude',
      'place_key',
      sql<string | null>`place->>'name'`.as('place_name'),
      sql<string | null>`meta->>'takenAt'`.as('taken_at'),
    ])
    .where('occurred_at', 'is not', null)
    .where(visibleTo(scope))
    // A Live Photo is one moment: its still.
    .where(sql<SqlBool>`not ${isMotionClip()}`);
  if (range.from) query = query.where('occurred_at', '>=', new Date(range.from));
  if (range.to) query = query.where('occurred_at', '<', new Date(range.to));
  return (await query.execute()).map((r) => ({
    itemId: r.item_id,
    at: r.occurred_at!.getTime(),
    // The wall-clock day where it was taken, when the camera said; else the UTC day.
    localDay: (r.taken_at ?? r.occurred_at!.toISOString()).slice(0, 10),
    latitude: r.latitude,
    longitude: r.longitude,
    placeKey: r.place_key,
    placeName: r.place_name,
  }));
}
