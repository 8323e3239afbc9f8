import { Inject, Injectable } from '@nestjs/common';
import { sql, type RawBuilder } from 'kysely';
import { MentionComplete, type ParamsOf, type ResultOf, type Scope } from '@memex/contracts';
import { DATABASE, RpcMethod, type CallContext } from '@memex/runtime';
import { foldText } from '../domain/keys.js';
import { EXACT_TIERS, PREFIX_CHARS } from '../projection/entities.js';
import { entityVisible, itemVisible, summaries, visibleNames, type Db, type Summary } from './access.js';

type Completion = ResultOf<typeof MentionComplete>['items'][number];

/** Candidates read per kind of match before ranking; the answer is at most `limit`. */
const CANDIDATES = 200;
const THING_KINDS = ['person', 'org', 'project', 'topic', 'place', 'event', 'host', 'repo'];

/** `like` pattern for a prefix: its wildcards are taken literally. */
function likePrefix(text: string): string {
  return `${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/** @-mention completion: things by name, alias, address or key prefix, then threads and papers by title. */
@Injectable()
export class MentionService {
  constructor(@Inject(DATABASE) private readonly db: Db) {}

  @RpcMethod(MentionComplete)
  async complete(
    params: ParamsOf<typeof MentionComplete>,
    call: CallContext,
  ): Promise<ResultOf<typeof MentionComplete>> {
    const prefix = foldText(params.prefix.replace(/^@/, ''));
    const limit = params.limit ?? 10;
    if (!prefix) return { items: [] };
    const wants = (kind: string) => !params.kinds || params.kinds.includes(kind);
    const items: Completion[] = [];
    if (THING_KINDS.some(wants) || params.kinds?.some((k) => !['thread', 'paper', 'document'].includes(k))) {
      items.push(...(await this.things(call.scope, prefix, limit, params.kinds)));
    }
    // Item kinds the scope may not see at all are not searched (a pass over every subject for nothing).
    const searches = (kind: string) =>
      wants(kind) && (call.scope.kind === 'owner' || call.scope.kinds.includes(kind === 'thread' ? 'email' : kind));
    if (items.length < limit && (searches('thread') || searches('paper') || searches('document'))) {
      items.push(...(await this.items(call.scope, prefix, limit - items.length, searches)));
    }
    return { items: items.slice(0, limit) };
  }

  /**
   * Word-prefix matches (names, aliases, addresses, keys), things whose term is the whole prefix
   * first, then by how much the owner has to do with each; for three letters or more, infix
   * matches by trigram fill in after.
   */
  private async things(scope: Scope, prefix: string, limit: number, kinds?: string[]): Promise<Completion[]> {
    const kindFilter = kinds ? sql`and e.kind = any(${kinds}::text[])` : sql``;
    // The owner sees every candidate; an agent's are checked one by one, so it reads more.
    const candidates = scope.kind === 'owner' ? limit : CANDIDATES;
    const filter = sql`${kindFilter} and ${entityVisible(scope, sql`e.id`)}`;
    let ids =
      prefix.length <= PREFIX_CHARS
        ? await this.byPrefix(prefix, candidates, filter)
        : await this.byTerms(prefix, candidates, filter);
    if (ids.length < limit && prefix.length >= 3) {
      const infix = await sql<{ id: number }>`
        select e.id from mention_terms t join entities e on e.id = t.entity
        where t.term like ${`%${likePrefix(prefix)}`} and e.merged_into is null ${filter}
        group by e.id, e.weight order by e.weight desc, e.id limit ${candidates}`.execute(this.db);
      ids = [...new Set([...ids, ...infix.rows.map((r) => Number(r.id))])];
    }
    if (scope.kind === 'owner') {
      // The owner sees every thing, under its own name: the first `limit` are the answer.
      const described = await this.describe(ids.slice(0, limit));
      return ids.slice(0, limit).flatMap((id) => described.get(id) ?? []);
    }
    const names = await summaries(this.db, scope, ids);
    const chosen: Summary[] = [];
    for (const id of ids) {
      const thing = names.get(id);
      if (!thing) continue;
      // An agent matches only on what it may see: a name from mail must not match outside mail.
      if (!(await this.matchesVisibly(scope, id, thing.key, prefix))) continue;
      chosen.push(thing);
      if (chosen.length >= limit) break;
    }
    const described = await this.describe(chosen.map((t) => t.id));
    return chosen.map((t) => ({ ...described.get(t.id)!, name: t.name }));
  }

  /**
   * A short prefix's things straight off the prefix index, best first. The index orders things by
   * weight tier; within a tier of one weight that is the order, within a wider tier the weights
   * decide, so the last tier read is read whole and sorted by weight.
   */
  private async byPrefix(prefix: string, wanted: number, filter: RawBuilder<unknown>): Promise<number[]> {
    const rows = await sql<{ id: number }>`
      with head as (
        select m.entity, m.exact, m.tier from mention_prefixes m join entities e on e.id = m.entity
        where m.prefix = ${prefix} ${filter}
        order by m.exact desc, m.tier desc, m.entity limit ${wanted}),
      last as (select exact, tier from head order by exact, tier limit 1),
      tail as (
        select m.entity, m.exact, m.tier from last
        join mention_prefixes m on m.prefix = ${prefix} and m.exact = last.exact and m.tier = last.tier
        join entities e on e.id = m.entity
        where last.tier >= ${EXACT_TIERS} ${filter})
      select x.entity as id from (select * from head union select * from tail) x join entities e on e.id = x.entity
      order by x.exact desc, e.weight desc, x.entity limit ${wanted}`.execute(this.db);
    return rows.rows.map((r) => Number(r.id));
  }

  /** A long prefix's things by their terms (few terms share a long prefix). */
  private async byTerms(prefix: string, wanted: number, filter: RawBuilder<unknown>): Promise<number[]> {
    const rows = await sql<{ id: number }>`
      select e.id from (
        select t.entity, bool_or(t.term = ${prefix}) as exact from mention_terms t
        where t.term like ${likePrefix(prefix)} group by t.entity) m
      join entities e on e.id = m.entity
      where e.merged_into is null ${filter}
      order by m.exact desc, e.weight desc, e.id limit ${wanted}`.execute(this.db);
    return rows.rows.map((r) => Number(r.id));
  }

  private async matchesVisibly(scope: Scope, id: number, key: string, prefix: string): Promise<boolean> {
    const texts = [...(await visibleNames(this.db, scope, id)), key.slice(key.indexOf(':') + 1)].map(foldText);
    return texts.some((t) => t.includes(prefix));
  }

  /**
   * Things as completions, under their stored names, with a line that tells things of the same
   * name apart: a person's address and organization, an org's domain.
   */
  private async describe(ids: number[]): Promise<Map<number, Completion>> {
    const out = new Map<number, Completion>();
    if (ids.length === 0) return out;
    const rows = await sql<{
      id: number;
      key: string;
      kind: string;
      name: string;
      attrs: Record<string, string[]>;
      org: string | null;
    }>`
      select e.id, e.key, e.kind, e.name, e.attrs,
        (select o.name from links l join entities o on o.id = l.dst_entity
         where l.src_entity = e.id and l.dst_entity is not null and l.rel in ('works_at', 'member_of') and l.status = 'active'
         order by (l.made_by = 'user') desc, l.confidence desc limit 1) as org
      from entities e where e.id = any(${ids}::bigint[])`.execute(this.db);
    for (const row of rows.rows) {
      const parts = [
        ...(row.attrs.addresses ?? []).slice(0, 1),
        ...(row.org ? [row.org] : []),
        ...(row.attrs.domains ?? []).slice(0, 1),
      ];
      out.set(Number(row.id), { key: row.key, kind: row.kind, name: row.name, detail: parts.join(' · ') || row.kind });
    }
    return out;
  }

  /** Mail threads by subject (key `thread:<key>`) and papers and documents by title (key `item:<id>`). */
  private async items(
    scope: Scope,
    prefix: string,
    limit: number,
    wants: (kind: string) => boolean,
  ): Promise<Completion[]> {
    const out: Completion[] = [];
    const pattern = prefix.length >= 3 ? `%${likePrefix(prefix)}` : likePrefix(prefix);
    if (wants('thread')) {
      const threads = await sql<{ thread_key: string; title: string; n: number; last: Date | null }>`
        select i.thread_key, (array_agg(i.title order by i.occurred_at))[1] as title, count(*)::int as n, max(i.occurred_at) as last
        from items i where i.kind = 'email' and i.thread_key is not null and lower(i.title) like ${pattern} and ${itemVisible(scope)}
        group by i.thread_key
        order by bool_or(lower(i.title) like ${likePrefix(prefix)}) desc, count(*) desc, max(i.occurred_at) desc nulls last limit ${limit}`.execute(
        this.db,
      );
      for (const t of threads.rows) {
        out.push({
          key: `thread:${t.thread_key}`,
          kind: 'thread',
          name: t.title,
          detail: `${t.n} message${t.n === 1 ? '' : 's'}${t.last ? `, last ${t.last.toISOString().slice(0, 10)}` : ''}`,
        });
      }
    }
    const kinds = ['paper', 'document'].filter(wants);
    if (kinds.length > 0 && out.length < limit) {
      const docs = await sql<{ id: string; kind: string; title: string; occurred_at: Date | null }>`
        select i.id, i.kind, i.title, i.occurred_at from items i
        where i.kind = any(${kinds}::text[]) and lower(i.title) like ${pattern} and ${itemVisible(scope)}
        order by lower(i.title) like ${likePrefix(prefix)} desc, (i.kind = 'paper') desc, i.occurred_at desc nulls last limit ${limit - out.length}`.execute(
        this.db,
      );
      for (const d of docs.rows)
        out.push({
          key: `item:${d.id}`,
          kind: d.kind,
          name: d.title,
          detail: d.occurred_at?.toISOString().slice(0, 10) ?? d.kind,
        });
    }
    return out;
  }
}
