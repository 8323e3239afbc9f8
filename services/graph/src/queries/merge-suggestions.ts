import { sql } from 'kysely';
import { OWNER_SCOPE, type ReviewList, type ResultOf } from '@memex/contracts';
import { summaries, type Db } from './access.js';

type Entry = ResultOf<typeof ReviewList>['items'][number];

/**
 * Merge suggestions for people who share a phone number (a contact card and a mail signature,
 * or two cards: `has_phone` the same `phone:<E.164>`), each paired with the most seen of them.
 * Only suggested: a merge is the owner's answer (entity.merged), a refusal is review.dismissed,
 * and both outrank any later reading on replay. `skip`: ids already suggested or dismissed.
 */
export async function samePhoneMerges(db: Db, limit: number, skip: Set<string>): Promise<Entry[]> {
  const groups = await sql<{ phone: string; ids: number[] }>`
    select phone, array_agg(id order by weight desc, id) as ids from (
      select distinct ph.key as phone, pe.id, pe.weight
      from links l
      join entities pe on pe.id = l.src_entity and pe.kind = 'person' and pe.merged_into is null
      join entities ph on ph.id = l.dst_entity and ph.kind = 'phone'
      where l.rel = 'has_phone' and l.status = 'active'
    ) x group by phone having count(*) > 1 order by phone limit ${limit}`.execute(db);
  const names = await summaries(
    db,
    OWNER_SCOPE,
    groups.rows.flatMap((g) => g.ids.map(Number)),
  );
  const out: Entry[] = [];
  for (const group of groups.rows) {
    const [first, ...rest] = group.ids.map(Number);
    for (const other of rest) {
      const id = `merge:${first}:${other}`;
      if (skip.has(id)) continue;
      skip.add(id);
      const a = names.get(first!)!;
      const b = names.get(other)!;
      out.push({
        id,
        kind: 'merge',
        summary: `${b.name} (${b.key}) may be ${a.name} (${a.key}): both have the phone ${group.phone.slice('phone:'.length)}`,
        entities: [a, b],
        fact: null,
      });
    }
  }
  return out;
}
