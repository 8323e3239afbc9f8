import { sql } from 'kysely';
import { OWNER_SCOPE, type ReviewList, type ResultOf } from '@memex/contracts';
import { OWNER_NAME_KIND } from '../projection/owner-names.js';
import { summaries, type Db } from './access.js';

type Entry = ResultOf<typeof ReviewList>['items'][number];

/** The item kind of contact cards (vCard items). */
const CARD_KIND = 'contact';

const fold = (name: string) => name.toLowerCase().replace(/\s+/g, ' ').trim();

/** `name:<entity>:<name>`: what memex.review.decide takes back for a naming question. */
export function nameEntryId(entity: number, name: string): string {
  return `name:${entity}:${Buffer.from(name).toString('base64url')}`;
}

export function nameOfEntryId(encoded: string): string {
  return Buffer.from(encoded, 'base64url').toString('utf8');
}

/**
 * One address, two names: a person a contact card calls one thing and mail another (not just in
 * case or spacing), and the owner has not chosen. Each card name is a question — accepting it
 * names the person (entity.named, which outranks every reading); declining is review.dismissed.
 * Nothing is renamed until then (the name seen most often stands).
 */
export async function nameDisagreements(db: Db, limit: number): Promise<Entry[]> {
  const rows = await sql<{ entity: string; key: string; card: string[]; seen: string[] }>`
    select e.id as entity, kn.key,
      array_agg(distinct kn.name) filter (where kn.kind = ${CARD_KIND}) as card,
      array_agg(distinct kn.name) filter (where kn.kind <> ${CARD_KIND}) as seen
    from key_names kn join entity_keys k on k.key = kn.key join entities e on e.id = k.entity
    where e.kind = 'person' and e.merged_into is null and kn.n > 0
    group by e.id, kn.key
    having bool_or(kn.kind = ${CARD_KIND}) and bool_or(kn.kind <> ${CARD_KIND}) and not bool_or(kn.kind = ${OWNER_NAME_KIND})
    order by kn.key limit ${limit}`.execute(db);
  const dismissed = new Set(
    (
      await sql<{ suggestion: string }>`select suggestion from review_dismissed where suggestion like 'name:%'`.execute(
        db,
      )
    ).rows.map((r) => r.suggestion),
  );
  const things = await summaries(
    db,
    OWNER_SCOPE,
    rows.rows.map((r) => Number(r.entity)),
  );
  const out: Entry[] = [];
  for (const row of rows.rows) {
    const seen = new Set(row.seen.map(fold));
    const thing = things.get(Number(row.entity));
    if (!thing) continue;
    for (const name of row.card) {
      const id = nameEntryId(Number(row.entity), name);
      if (seen.has(fold(name)) || dismissed.has(id)) continue;
      out.push({
        id,
        kind: 'name',
        summary: `${row.key.slice('person:'.length)} is “${name}” on a contact card and “${row.seen.join('”, “')}” in mail: call them “${name}”?`,
        entities: [thing],
        fact: null,
        name,
      });
    }
  }
  return out;
}
