import { Inject, Injectable } from '@nestjs/common';
import { sql, type RawBuilder } from 'kysely';
import {
  EntityGet,
  EntityNeighbors,
  Graph,
  MemexError,
  Months,
  Timeline,
  type ParamsOf,
  type ResultOf,
  type Scope,
} from '@memex/contracts';
import { visibleTo } from '@memex/db';
import { DATABASE, RpcMethod, type CallContext } from '@memex/runtime';
import { decodeCursor, encodeCursor, type Cursor } from '../domain/cursor.js';
import { evidenceOf as orgEvidenceOf, SEVERAL_PEOPLE } from '../domain/orgs.js';
import { confirmedSql, rejectedSql } from '../projection/links.js';
import {
  afterCursor,
  entityItems,
  interactive,
  itemVisible,
  linkVisible,
  recentEntityItems,
  resolveEntity,
  summaries,
  visibleNames,
  type Db,
  type Summary,
} from './access.js';
import { sessionsAbout, touchedBySession } from './sessions.js';

type Fact = ResultOf<typeof EntityGet>['facts'][number];
type TimelineEntry = ResultOf<typeof Timeline>['items'][number];

/** How many of a thing's items the neighbourhood looks at: the newest, so a hub stays fast. */
const NEIGHBORHOOD_ITEMS = 5000;
/** A direct link weighs as much as this many shared items. */
const DIRECT_LINK_WEIGHT = 3;

interface LinkRowOut {
  id: string;
  rel: string;
  src_entity: number | null;
  src_item: string | null;
  dst_entity: number | null;
  dst_item: string | null;
  basis: 'observed' | 'inferred';
  made_by: string;
  confidence: number;
  valid_from: Date | null;
  valid_to: Date | null;
  confirmed: boolean;
}

function iso(date: Date | null): string | null {
  return date ? date.toISOString() : null;
}

/** Facts about things, best first: the owner's word, then observed, then inferred by confidence. */
export async function factsAbout(
  db: Db,
  scope: Scope,
  entities: number[],
  limit: number,
): Promise<(Fact & { self: number })[]> {
  if (entities.length === 0) return [];
  const rows = await sql<LinkRowOut>`
    select l.id, l.rel, l.src_entity, l.src_item, l.dst_entity, l.dst_item, l.basis, l.made_by, l.confidence,
           l.valid_from, l.valid_to, ${confirmedSql(sql.ref('l'))} as confirmed
    from links l
    where ((l.src_entity = any(${entities}::bigint[]) and l.dst_entity is not null)
        or (l.dst_entity = any(${entities}::bigint[]) and l.src_entity is not null))
      and l.status = 'active' and not ${rejectedSql(sql.ref('l'))} and ${linkVisible(scope)}
    order by (l.made_by = 'user') desc, (l.basis = 'observed') desc, l.confidence desc, l.valid_from desc nulls last, l.id
    limit ${limit}`.execute(db);
  const others = rows.rows.flatMap((r) => [Number(r.src_entity), Number(r.dst_entity)]);
  const names = await summaries(db, scope, others);
  const evidence = await evidenceOf(
    db,
    scope,
    rows.rows.map((r) => r.id),
  );
  const out: (Fact & { self: number })[] = [];
  for (const row of rows.rows) {
    const src = Number(row.src_entity);
    const dst = Number(row.dst_entity);
    const outward = entities.includes(src);
    const other = names.get(outward ? dst : src);
    if (!other) continue;
    out.push({
      self: outward ? src : dst,
      link_id: row.id,
      rel: row.rel,
      direction: outward ? 'out' : 'in',
      other: { entity: other },
      basis: row.basis,
      made_by: row.made_by,
      confidence: Math.round(row.confidence * 1000) / 1000,
      valid_from: iso(row.valid_from),
      valid_to: iso(row.valid_to),
      evidence: evidence.get(row.id) ?? [],
      confirmed: row.basis === 'inferred' && row.confirmed,
    });
  }
  return out;
}

/** Up to five visible evidence items per link, newest first. */
export async function evidenceOf(db: Db, scope: Scope, links: string[]): Promise<Map<string, Fact['evidence']>> {
  const out = new Map<string, Fact['evidence']>();
  if (links.length === 0) return out;
  const rows = await sql<{ link: string; item: string; part: string; quote: string | null }>`
    select link, item, part, quote from (
      select ev.link, ev.item, ev.part, ev.quote, row_number() over (partition by ev.link order by i.occurred_at desc nulls last, ev.item) as n
      from evidence ev join items i on i.id = ev.item
      where ev.link = any(${links}::text[]) and ${itemVisible(scope)}) x
    where n <= 5`.execute(db);
  for (const row of rows.rows) {
    const list = out.get(row.link) ?? [];
    list.push({ item: row.item, part: row.part || null, quote: row.quote });
    out.set(row.link, list);
  }
  return out;
}

/**
 * Items behind a thing (or everything), newest first, with how the thing takes part in each;
 * after `cursor` when given. A thing's undated items come last; `datedOnly` leaves them out.
 */
export async function timelineOf(
  db: Db,
  scope: Scope,
  entity: number | null,
  options: {
    before?: string | undefined;
    after?: string | undefined;
    cursor?: Cursor | undefined;
    limit: number;
    noSpam?: boolean;
    datedOnly?: boolean;
  },
): Promise<TimelineEntry[]> {
  const bounds = sql`${options.before ? sql`and i.occurred_at < ${options.before}` : sql``} ${options.after ? sql`and i.occurred_at > ${options.after}` : sql``}
    ${options.cursor ? afterCursor(options.cursor, 'i.occurred_at', 'i.id') : sql``}
    ${options.noSpam ? sql`and not i.spam` : sql``} ${options.datedOnly ? sql`and i.occurred_at is not null` : sql``}`;
  const rows =
    entity === null
      ? await sql<{ id: string; kind: string; title: string; occurred_at: Date | null; rels: string[] }>`
          select i.id, i.kind, i.title, i.occurred_at, array[]::text[] as rels from items i
          where i.occurred_at is not null and ${itemVisible(scope)} ${bounds}
          order by i.occurred_at desc, i.id desc limit ${options.limit}`.execute(db)
      : await sql<{ id: string; kind: string; title: string; occurred_at: Date | null; rels: string[] }>`
          select i.id, i.kind, i.title, i.occurred_at, array_agg(distinct x.rel order by x.rel) as rels
          from ${recentEntityItems(entity, options, options.limit * 4)} x join items i on i.id = x.item
          where ${itemVisible(scope)} ${bounds}
          group by i.id order by i.occurred_at desc nulls last, i.id desc limit ${options.limit}`.execute(db);
  return rows.rows.map((r) => ({
    item: { id: r.id, kind: r.kind, title: r.title, occurred_at: iso(r.occurred_at) },
    rels: r.rels,
  }));
}

/** A time the neighbourhood is read in: from inclusive, to exclusive; either may be open. */
interface TimeRange {
  from?: string | undefined;
  to?: string | undefined;
}

function bounded(range: TimeRange): boolean {
  return range.from !== undefined || range.to !== undefined;
}

/** SQL: the time `at` falls in the range (an unknown time never does once there is a range). */
function inRange(range: TimeRange, at: RawBuilder<unknown>) {
  if (!bounded(range)) return sql<boolean>`true`;
  return sql<boolean>`(${at} is not null ${range.from ? sql`and ${at} >= ${range.from}` : sql``} ${range.to ? sql`and ${at} < ${range.to}` : sql``})`;
}

/**
 * SQL: link `l` belongs to the range: its stated validity overlaps it (open-ended when valid_to is
 * null), or one of the items it rests on happened in it. Without either it has no time and does
 * not count once there is a range.
 */
function linkInRange(range: TimeRange, l = 'l') {
  if (!bounded(range)) return sql<boolean>`true`;
  const from = sql.ref(`${l}.valid_from`);
  const to = sql.ref(`${l}.valid_to`);
  return sql<boolean>`((${from} is not null ${range.to ? sql`and ${from} < ${range.to}` : sql``}
      ${range.from ? sql`and coalesce(${to}, 'infinity'::timestamptz) >= ${range.from}` : sql``})
    or exists (select 1 from evidence rev join items ri on ri.id = rev.item
      where rev.link = ${sql.ref(`${l}.id`)} and ${inRange(range, sql`ri.occurred_at`)}))`;
}

interface NeighborRow {
  entity: number;
  shared: number;
  rels: string[] | null;
}

/**
 * Things sharing items with `entity` (among its newest items) and things linked to it directly,
 * counting only items and links of `range`.
 */
async function neighborRows(
  db: Db,
  scope: Scope,
  entity: number,
  range: TimeRange,
): Promise<{ rows: NeighborRow[]; items: string[] }> {
  const mine = await sql<{ item: string }>`
    select x.item from ${entityItems(entity)} x join items i on i.id = x.item
    where ${itemVisible(scope)} and ${inRange(range, sql`i.occurred_at`)}
    group by x.item order by x.item desc limit ${NEIGHBORHOOD_ITEMS}`.execute(db);
  const items = mine.rows.map((r) => r.item);
  const rows = await sql<NeighborRow>`
    with shared as (
      select e as entity, count(distinct ev.item)::int as shared
      from evidence ev join links l on l.id = ev.link and l.status = 'active'
      cross join lateral (values (l.src_entity), (l.dst_entity)) v(e)
      where ev.item = any(${items}::text[]) and e is not null and e <> ${entity}
      group by e),
    direct as (
      select case when l.src_entity = ${entity} then l.dst_entity else l.src_entity end as entity, array_agg(distinct l.rel) as rels
      from links l
      where ((l.src_entity = ${entity} and l.dst_entity is not null) or (l.dst_entity = ${entity} and l.src_entity is not null))
        and l.status = 'active' and not ${rejectedSql(sql.ref('l'))} and ${linkVisible(scope)} and ${linkInRange(range)}
      group by 1)
    select coalesce(s.entity, d.entity) as entity, coalesce(s.shared, 0) as shared, d.rels
    from shared s full join direct d on d.entity = s.entity
    where coalesce(s.entity, d.entity) <> ${entity}`.execute(db);
  return { rows: rows.rows.map((r) => ({ ...r, entity: Number(r.entity) })), items };
}

function weightOf(row: NeighborRow): number {
  return row.shared + DIRECT_LINK_WEIGHT * (row.rels?.length ?? 0);
}

async function rankedNeighbors(
  db: Db,
  scope: Scope,
  entity: number,
  options: { limit: number; kinds?: string[] | undefined; range?: TimeRange },
) {
  const { limit, kinds } = options;
  const { rows, items } = await neighborRows(db, scope, entity, options.range ?? {});
  const names = await summaries(
    db,
    scope,
    rows.map((r) => r.entity),
  );
  const ranked = rows
    .filter((r) => names.has(r.entity) && (!kinds || kinds.includes(names.get(r.entity)!.kind)))
    .map((r) => ({ entity: names.get(r.entity)!, weight: weightOf(r), shared_items: r.shared, links: r.rels ?? [] }))
    .sort((a, b) => b.weight - a.weight || a.entity.key.localeCompare(b.entity.key))
    .slice(0, limit);
  return { ranked, items };
}

/**
 * What made an organization, from the facts the caller may see: the evidence its mail domain gave
 * (domain/orgs.ts; several people is said by naming them), the people mail shows writing from it
 * (each a works_at inferred from their address), then any other link naming it.
 */
function whyOrganization(key: string, facts: Fact[], evidence: string | null): string {
  const names = (rel: string) =>
    facts
      .filter((f) => f.rel === rel && f.direction === 'in' && 'entity' in f.other)
      .map((f) => ('entity' in f.other ? f.other.entity.name || f.other.entity.key : ''));
  const domain = key.replace(/^org:/, '');
  const people = names('works_at');
  const others = facts.filter((f) => f.rel !== 'works_at').map((f) => f.rel);
  const parts = [
    people.length === 1
      ? `1 person writes from ${domain}: ${people[0]}`
      : people.length > 1
        ? `${people.length} people write from ${domain}: ${people.slice(0, 5).join(', ')}${people.length > 5 ? ', …' : ''}`
        : `nobody you may see writes from ${domain}`,
    ...(evidence && evidence !== SEVERAL_PEOPLE ? [evidence] : []),
    ...(others.length > 0 ? [`named by ${[...new Set(others)].join(', ')} links`] : []),
  ];
  return `${parts.join('; ')} (a mail domain is an organization when several people write from it, it is an institution's or it hosts a mailing list; one person's own domain, free mail and list gateways are none)`;
}

/** What made an organization's mail domain one (`evidenceOf` its writers), null for one that is not a mail domain's. */
async function domainEvidence(db: Db, key: string): Promise<string | null> {
  const domain = key.replace(/^org:/, '');
  const rows = await sql<{ standing: string | null }>`
    select w.standing from org_domains o join domain_writers w on w.domain = o.domain
    where o.domain = ${domain} and w.standing is not null
    union all select null from org_domains where domain = ${domain}`.execute(db);
  return rows.rows.length > 0 ? orgEvidenceOf(rows.rows) : null;
}

/** The mail domains a person's keys write from that are no organization, as far as the caller may see their mail. */
async function ownDomains(db: Db, scope: Scope, keys: string[]): Promise<string[]> {
  const rows = await sql<{ domain: string }>`
    select distinct w.domain from domain_writers w join items i on i.id = w.item
    where w.person = any(${keys}::text[]) and ${itemVisible(scope)}
      and not exists (select 1 from org_domains o where o.domain = w.domain) order by w.domain`.execute(db);
  return rows.rows.map((r) => r.domain);
}

@Injectable()
export class EntitiesService {
  constructor(@Inject(DATABASE) private readonly db: Db) {}

  @RpcMethod(EntityGet)
  async get(params: ParamsOf<typeof EntityGet>, call: CallContext): Promise<ResultOf<typeof EntityGet>> {
    return interactive(this.db, async (db) => {
      const { id, resolvedFrom } = await resolveEntity(db, call.scope, params);
      const owner = call.scope.kind === 'owner';
      const row = (
        await sql<{
          key: string;
          kind: string;
          name: string;
          aliases: string[];
          attrs: Record<string, unknown>;
          keys: string[];
        }>`
        select e.key, e.kind, e.name, e.aliases, e.attrs,
          array(select k.key from entity_keys k where k.entity = e.id
                and ${owner ? sql`true` : sql`exists (select 1 from key_scope s where s.key = k.key and ${visibleTo(call.scope, { kind: 's.kind', labels: 's.labels', spam: 's.spam' })})`}
                order by k.key) as keys
        from entities e where e.id = ${id}`.execute(db)
      ).rows[0]!;
      const summary = (await summaries(db, call.scope, [id])).get(id)!;
      const aliases = owner ? row.aliases : (await visibleNames(db, call.scope, id)).filter((n) => n !== summary.name);
      const attrs = owner ? row.attrs : attrsVisible(row.attrs, row.keys);
      const merged = owner
        ? (
            await sql<{ merge_id: string; key: string; name: string }>`
            select m.merge_id, e.key, e.name from merges m join entities e on e.id = m.from_entity
            where m.into_entity = ${id} order by m.at, m.merge_id`.execute(db)
          ).rows
        : [];
      const stats = (
        await sql<{ items: number; first_at: Date | null; last_at: Date | null }>`
        select count(distinct i.id)::int as items, min(i.occurred_at) as first_at, max(i.occurred_at) as last_at
        from ${entityItems(id)} x join items i on i.id = x.item where ${itemVisible(call.scope)}`.execute(db)
      ).rows[0]!;
      const facts = (await factsAbout(db, call.scope, [id], 100)).map(({ self: _self, ...fact }) => fact);
      return {
        entity: { id, key: row.key, kind: row.kind, name: summary.name, aliases, keys: row.keys, attrs },
        resolved_from: resolvedFrom,
        merged,
        facts,
        why: row.kind === 'org' ? whyOrganization(row.key, facts, await domainEvidence(db, row.key)) : null,
        own_domains: row.kind === 'person' ? await ownDomains(db, call.scope, row.keys) : [],
        stats: { items: stats.items, first_at: iso(stats.first_at), last_at: iso(stats.last_at) },
        timeline: await timelineOf(db, call.scope, id, { limit: params.timeline_limit ?? 20 }),
        sessions: await sessionsAbout(db, call.scope, id),
        touched: row.kind === 'session' ? await touchedBySession(db, call.scope, id) : [],
      };
    });
  }

  @RpcMethod(EntityNeighbors)
  async neighbors(
    params: ParamsOf<typeof EntityNeighbors>,
    call: CallContext,
  ): Promise<ResultOf<typeof EntityNeighbors>> {
    return interactive(this.db, async (db) => {
      const { id } = await resolveEntity(db, call.scope, params);
      const center = (await summaries(db, call.scope, [id])).get(id)!;
      const { ranked } = await rankedNeighbors(db, call.scope, id, { limit: params.limit ?? 50, kinds: params.kinds });
      return { entity: center, neighbors: ranked };
    });
  }

  @RpcMethod(Graph)
  async graph(params: ParamsOf<typeof Graph>, call: CallContext): Promise<ResultOf<typeof Graph>> {
    const range = { from: params.from, to: params.to };
    if (range.from && range.to && Date.parse(range.from) >= Date.parse(range.to))
      throw new MemexError('invalid_params', `from (${range.from}) must be before to (${range.to})`);
    return interactive(this.db, async (db) => {
      const { id } = await resolveEntity(db, call.scope, params);
      const center = (await summaries(db, call.scope, [id])).get(id)!;
      const { ranked, items } = await rankedNeighbors(db, call.scope, id, { limit: params.limit ?? 30, range });
      const nodes = ranked.map((n) => n.entity.id);
      const coShared = await sql<{ a: number; b: number; shared: number }>`
      with parts as (
        select distinct ev.item, e as entity from evidence ev join links l on l.id = ev.link and l.status = 'active'
        cross join lateral (values (l.src_entity), (l.dst_entity)) v(e)
        where ev.item = any(${items}::text[]) and e = any(${nodes}::bigint[]))
      select a.entity as a, b.entity as b, count(*)::int as shared from parts a join parts b on a.item = b.item and a.entity < b.entity
      group by 1, 2`.execute(db);
      const direct = await sql<{ a: number; b: number; rels: string[] }>`
      select least(l.src_entity, l.dst_entity) as a, greatest(l.src_entity, l.dst_entity) as b, array_agg(distinct l.rel) as rels
      from links l where l.src_entity = any(${nodes}::bigint[]) and l.dst_entity = any(${nodes}::bigint[]) and l.src_entity <> l.dst_entity
        and l.status = 'active' and not ${rejectedSql(sql.ref('l'))} and ${linkVisible(call.scope)} and ${linkInRange(range)}
      group by 1, 2`.execute(db);
      const edges = new Map<string, { src: number; dst: number; shared_items: number; rels: string[] }>();
      const edge = (a: number, b: number) => {
        const key = `${a}:${b}`;
        if (!edges.has(key)) edges.set(key, { src: a, dst: b, shared_items: 0, rels: [] });
        return edges.get(key)!;
      };
      for (const row of coShared.rows) edge(Number(row.a), Number(row.b)).shared_items = row.shared;
      for (const row of direct.rows) edge(Number(row.a), Number(row.b)).rels = row.rels.sort();
      return {
        center,
        nodes: ranked.map((n) => ({ entity: n.entity, weight: n.weight, shared_items: n.shared_items })),
        edges: [...edges.values()].sort((x, y) => x.src - y.src || x.dst - y.dst),
      };
    });
  }

  @RpcMethod(Months)
  async months(params: ParamsOf<typeof Months>, call: CallContext): Promise<ResultOf<typeof Months>> {
    return interactive(this.db, async (db) => {
      const rows =
        params.key === undefined && params.id === undefined
          ? await sql<{ month: string; items: number }>`
            select to_char(month, 'YYYY-MM') as month, sum(n)::int as items from month_counts mc
            where ${visibleTo(call.scope, { kind: 'mc.kind', labels: 'mc.labels', spam: 'mc.spam' })}
            group by month order by month`.execute(db)
          : await sql<{ month: string; items: number }>`
            select to_char(i.occurred_at at time zone 'UTC', 'YYYY-MM') as month, count(distinct i.id)::int as items
            from ${entityItems((await resolveEntity(db, call.scope, params)).id)} x join items i on i.id = x.item
            where i.occurred_at is not null and ${itemVisible(call.scope)}
            group by 1 order by 1`.execute(db);
      return { months: rows.rows };
    });
  }

  @RpcMethod(Timeline)
  async timeline(params: ParamsOf<typeof Timeline>, call: CallContext): Promise<ResultOf<typeof Timeline>> {
    const entity =
      params.key === undefined && params.id === undefined
        ? null
        : (await resolveEntity(this.db, call.scope, params)).id;
    const limit = params.limit ?? 50;
    const items = await timelineOf(this.db, call.scope, entity, {
      before: params.before,
      after: params.after,
      cursor: params.cursor === undefined ? undefined : decodeCursor(params.cursor),
      limit,
    });
    const last = items[items.length - 1];
    return {
      items,
      next_cursor:
        items.length === limit && last ? encodeCursor({ at: last.item.occurred_at, id: last.item.id }) : null,
    };
  }
}

/** Only the addresses and domains of keys the scope may see. */
function attrsVisible(attrs: Record<string, unknown>, keys: string[]): Record<string, unknown> {
  const values = new Set(keys.map((k) => k.slice(k.indexOf(':') + 1)));
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(attrs)) {
    out[name] = Array.isArray(value) ? value.filter((v) => values.has(String(v))) : value;
  }
  return out;
}

export type { Summary };
