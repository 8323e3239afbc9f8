import { sql } from 'kysely';
import type { EventOf, PeopleSeen } from '@memex/contracts';
import { linkId, normalizeKey, refString } from '../domain/keys.js';
import { ensureKeys, KeyCounts, nameKey, nameKeys, prune, type Trx, type Vis } from './entities.js';
import { dropLinks, writeLinks, type LinkRow } from './links.js';
import type { StoredItem } from './signatures.js';

/** Who makes the links faces.people_seen gives (the user's naming of the media service's face clusters). */
export const FACES_MAKER = 'faces@media';

/**
 * The named people whose faces are in a photo or video (media's faces.people_seen): each person
 * `appears_in` the item, the item as evidence, at its capture time, with the name the user gave
 * the face cluster. What the previous faces.people_seen said of the item is replaced (a face moved
 * out takes its person away); the item's deletion takes them back.
 */
export async function applyPeopleSeen(
  trx: Trx,
  { data }: EventOf<typeof PeopleSeen>,
  item: StoredItem | undefined,
): Promise<void> {
  if (!item) return;
  const itemId = data.item_id;
  const vis: Vis = { kind: item.kind, labels: item.labels, spam: item.spam };
  const earlier = (
    await sql<{ id: string }>`select id from links where dst_item = ${itemId} and made_by = ${FACES_MAKER}`.execute(trx)
  ).rows.map((r) => r.id);
  const touched = await dropLinks(trx, earlier);
  const names = new KeyCounts();
  const named = (item.participants ?? []).filter((p) => {
    if (p.rel !== 'appears_in') return true;
    if (p.name) names.add(nameKey(p.key!, p.name), vis, -1);
    return false;
  });
  const at = item.occurred_at?.toISOString() ?? null;
  const links: LinkRow[] = [];
  for (const person of data.people) {
    const key = normalizeKey(person.key);
    await ensureKeys(trx, [key]);
    names.add(nameKey(key, person.name), vis, 1);
    named.push({ rel: 'appears_in', address: '', name: person.name, key });
    const src = { key, kind: 'person' };
    const dst = { item: itemId };
    links.push({
      id: linkId(src.key, 'appears_in', refString(dst), FACES_MAKER),
      src,
      rel: 'appears_in',
      dst,
      validFrom: at,
      validTo: at,
      confidence: 1,
      basis: 'observed',
      madeBy: FACES_MAKER,
      vis: null,
      evidence: [{ item: itemId, part: 'faces', quote: null }],
      via: itemId,
    });
  }
  await sql`update items set participants = ${JSON.stringify(named)}::jsonb where id = ${itemId}`.execute(trx);
  await nameKeys(trx, names);
  await writeLinks(trx, links);
  await prune(trx, touched.sort());
}
