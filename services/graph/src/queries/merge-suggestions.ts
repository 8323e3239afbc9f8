import { sql } from 'kysely';
import { OWNER_SCOPE, type ReviewList, type ResultOf } from '@memex/contracts';
import { summaries, type Db } from './access.js';

type Entry = ResultOf<typeof ReviewList>['items'][number];

/** Things that may be one (heaviest first), and why, when it is more than a shared name. */
export interface MergeGroup {
  ids: number[];
  why?: string;
}

/**
 * Merge suggestions: each thing of a group paired with its first (the most seen), as the review
 * queue lists them (`merge:<into>:<from>`), leaving out ids in `skip` (dismissed, or already
 * suggested) and adding what it lists to it. Only suggested: a merge is the owner's answer
 * (entity.merged), a refusal review.dismissed, and both outrank any later reading on replay.
 */
export async function mergeSuggestions(db: Db, groups: MergeGroup[], skip: Set<string>): Promise<Entry[]> {
  const names = await summaries(
    db,
    OWNER_SCOPE,
    groups.flatMap((g) => g.ids.map(Number)),
  );
  const out: Entry[] = [];
  for (const group of groups) {
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
        summary: `${b.name} (${b.key}) may be ${a.name} (${a.key})${group.why ? `: ${group.why}` : ''}`,
        entities: [a, b],
        fact: null,
      });
    }
  }
  return out;
}

/**
 * People who share a phone number (a contact card and a mail signature, or two cards:
 * `has_phone` the same `phone:<E.164>`), as merge groups.
 */
export async function samePhoneGroups(db: Db, limit: number): Promise<MergeGroup[]> {
  const groups = await sql<{ phone: string; ids: number[] }>`
    select phone, array_agg(id order by weight desc, id) as ids from (
      select distinct ph.key as phone, pe.id, pe.weight
      from links l
      join entities pe on pe.id = l.src_entity and pe.kind = 'person' and pe.merged_into is null
      join entities ph on ph.id = l.dst_entity and ph.kind = 'phone'
      where l.rel = 'has_phone' and l.status = 'active'
    ) x group by phone having count(*) > 1 order by phone limit ${limit}`.execute(db);
  return groups.rows.map((g) => ({
    ids: g.ids.map(Number),
    why: `both have the phone ${g.phone.slice('phone:'.length)}`,
  }));
}
