import { sql } from 'kysely';
import type { EventOf, PhotoEventsFound } from '@memex/contracts';
import { linkId, normalizeKey, refString } from '../domain/keys.js';
import type { Participant } from '../domain/mail.js';
import { ensureKeys, KeyCounts, nameKey, nameKeys, prune, type Trx, type Vis } from './entities.js';
import { dropLinks, writeLinks, type LinkRow } from './links.js';

/** Who makes the photo event and trip links (the media service's clustering of photos by time and place). */
export const PHOTO_EVENTS_MAKER = 'photo-events@media';

interface GraphItem {
  id: string;
  kind: string;
  labels: string[];
  spam: boolean;
  participants: Participant[] | null;
}

/**
 * Photo events and trips (media's photo_events.found, the whole list each time): each photo or
 * video is `part_of` its `event:photos-…` and `trip:…` things over their time span, the item as
 * evidence, and each event or trip is `located_at` its places with its first photo as evidence.
 * What the previous list said is taken back first; the names live in the items' participants
 * (`part_of`), so deleting a photo takes its share of them.
 */
export async function applyPhotoEvents(trx: Trx, { data }: EventOf<typeof PhotoEventsFound>): Promise<void> {
  const earlier = (
    await sql<{ id: string }>`select id from links where made_by = ${PHOTO_EVENTS_MAKER}`.execute(trx)
  ).rows.map((r) => r.id);
  const touched = await dropLinks(trx, earlier);
  const groups = [
    ...data.events.map((e) => ({ ...e, kind: 'event', places: e.place ? [e.place] : [] })),
    ...data.trips.map((t) => ({ ...t, kind: 'trip' })),
  ];
  const ids = [...new Set(groups.flatMap((g) => g.items))];
  const items = new Map(
    (
      await sql<GraphItem>`
        select id, kind, labels, spam, participants from items
        where id = any(${ids}::text[]) or participants @> '[{"rel":"part_of"}]'::jsonb`.execute(trx)
    ).rows.map((row) => [row.id, row]),
  );
  const names = new KeyCounts();
  const named = new Map<string, Participant[]>();
  const visOf = (item: GraphItem): Vis => ({ kind: item.kind, labels: item.labels, spam: item.spam });
  for (const item of items.values()) {
    named.set(
      item.id,
      (item.participants ?? []).filter((p) => {
        if (p.rel !== 'part_of') return true;
        if (p.name) names.add(nameKey(p.key!, p.name), visOf(item), -1);
        return false;
      }),
    );
  }
  const links: LinkRow[] = [];
  for (const group of groups) {
    const key = normalizeKey(group.key);
    const present = group.items.filter((id) => items.has(id));
    if (present.length === 0) continue;
    await ensureKeys(trx, [key, ...group.places.map((p) => normalizeKey(p.key))]);
    const thing = { key, kind: group.kind };
    for (const id of present) {
      names.add(nameKey(key, group.name), visOf(items.get(id)!), 1);
      named.get(id)!.push({ rel: 'part_of', address: '', name: group.name, key });
      links.push(link({ item: id }, 'part_of', thing, group, id));
    }
    for (const place of group.places)
      links.push(link(thing, 'located_at', { key: normalizeKey(place.key), kind: 'place' }, group, present[0]!));
  }
  for (const [id, participants] of named) {
    if (JSON.stringify(participants) === JSON.stringify(items.get(id)!.participants ?? [])) continue;
    await sql`update items set participants = ${JSON.stringify(participants)}::jsonb where id = ${id}`.execute(trx);
  }
  await nameKeys(trx, names);
  await writeLinks(trx, links);
  await prune(trx, touched.sort());
}

function link(
  src: LinkRow['src'],
  rel: string,
  dst: LinkRow['dst'],
  span: { start: string; end: string },
  evidence: string,
): LinkRow {
  return {
    id: linkId(refString(src), rel, refString(dst), PHOTO_EVENTS_MAKER),
    src,
    rel,
    dst,
    validFrom: span.start,
    validTo: span.end,
    confidence: 1,
    basis: 'observed',
    madeBy: PHOTO_EVENTS_MAKER,
    vis: null,
    evidence: [{ item: evidence, part: '', quote: null }],
    via: evidence,
  };
}
