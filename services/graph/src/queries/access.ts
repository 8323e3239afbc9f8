import { sql, type Expression, type Kysely, type RawBuilder, type SqlBool } from 'kysely';
import { MemexError, type Scope } from '@memex/contracts';
import { visibleTo } from '@memex/db';
import type { Cursor } from '../domain/cursor.js';
import { defaultName, normalizeKey } from '../domain/keys.js';
import type { GraphDatabase } from '../projection/schema.js';

export type Db = Kysely<GraphDatabase>;

/**
 * Runs a read of several statements in one read-only transaction (one snapshot), planned without
 * parallel workers (and, as every connection, without JIT): for a card's few thousand rows,
 * starting workers costs tens of ms on a busy 2-core machine, more than they save.
 */
export function interactive<T>(db: Db, read: (db: Db) => Promise<T>): Promise<T> {
  return db
    .transaction()
    .setAccessMode('read only')
    .execute(async (trx) => {
      await sql`select set_config('max_parallel_workers_per_gather', '0', true)`.execute(trx);
      return read(trx);
    });
}

/** An item row (alias `alias`) the scope may see. */
export function itemVisible(scope: Scope, alias = 'i'): Expression<SqlBool> {
  return visibleTo(scope, { kind: `${alias}.kind`, labels: `${alias}.labels`, spam: `${alias}.spam` });
}

/**
 * A link (alias `l`) the scope may see: one of its evidence items is visible (or, without
 * evidence, its own note-like labels are), and any item at either end is visible too.
 */
export function linkVisible(scope: Scope, l = 'l'): RawBuilder<SqlBool> | Expression<SqlBool> {
  if (scope.kind === 'owner') return sql<SqlBool>`true`;
  const ref = sql.ref(l);
  const own = visibleTo(scope, { kind: `${l}.vis_kind`, labels: `${l}.labels`, spam: `${l}.spam` });
  const endVisible = (column: string) =>
    sql`(${sql.ref(`${l}.${column}`)} is null or exists (select 1 from items ie where ie.id = ${sql.ref(`${l}.${column}`)} and ${itemVisible(scope, 'ie')}))`;
  return sql<SqlBool>`((${own} or exists (select 1 from evidence lev join items li on li.id = lev.item
      where lev.link = ${ref}.id and ${itemVisible(scope, 'li')})) and ${endVisible('src_item')} and ${endVisible('dst_item')})`;
}

/**
 * A thing the scope may see: one of its keys was observed in something visible to it. A scalar
 * subquery with a limit, so it is probed thing by thing: as an `exists` the planner may first
 * gather every visible thing (100,000 of them for a scope with mail) to join a list of ten.
 */
export function entityVisible(scope: Scope, entity: RawBuilder<unknown>): RawBuilder<SqlBool> {
  if (scope.kind === 'owner') return sql<SqlBool>`true`;
  return sql<SqlBool>`(select 1 from entity_keys vk join key_scope vs on vs.key = vk.key where vk.entity = ${entity}
    and ${visibleTo(scope, { kind: 'vs.kind', labels: 'vs.labels', spam: 'vs.spam' })} limit 1) is not null`;
}

export interface Summary {
  id: number;
  key: string;
  kind: string;
  name: string;
}

/**
 * Things as a scope sees them. The owner gets the stored name; an agent the name most often seen
 * where it may look (a name from mail never reaches a scope without mail), else the key's own.
 * Things the scope may not see are absent.
 */
export async function summaries(db: Db, scope: Scope, ids: number[]): Promise<Map<number, Summary>> {
  const out = new Map<number, Summary>();
  const unique = [...new Set(ids)];
  if (unique.length === 0) return out;
  if (scope.kind === 'owner') {
    const rows =
      await sql<Summary>`select id, key, kind, name from entities where id = any(${unique}::bigint[])`.execute(db);
    for (const row of rows.rows) out.set(Number(row.id), { ...row, id: Number(row.id) });
    return out;
  }
  const rows = await sql<Summary & { names: string[] | null }>`
    select e.id, e.key, e.kind, e.name,
      (select array_agg(x.name order by x.n desc, x.name) from (
         select kn.name, sum(kn.n) as n from key_names kn join entity_keys k on k.key = kn.key
         where k.entity = e.id and ${visibleTo(scope, { kind: 'kn.kind', labels: 'kn.labels', spam: 'kn.spam' })} group by kn.name) x) as names
    from entities e where e.id = any(${unique}::bigint[]) and ${entityVisible(scope, sql`e.id`)}`.execute(db);
  for (const row of rows.rows) {
    out.set(Number(row.id), {
      id: Number(row.id),
      key: row.key,
      kind: row.kind,
      name: row.names?.[0] ?? defaultName(row.key),
    });
  }
  return out;
}

/** Aliases a scope may see (names from where it may look, other than the one shown). */
export async function visibleNames(db: Db, scope: Scope, id: number): Promise<string[]> {
  const rows = await sql<{ name: string }>`
    select kn.name from key_names kn join entity_keys k on k.key = kn.key
    where k.entity = ${id} and ${visibleTo(scope, { kind: 'kn.kind', labels: 'kn.labels', spam: 'kn.spam' })}
    group by kn.name order by sum(kn.n) desc, kn.name`.execute(db);
  return rows.rows.map((r) => r.name);
}

export interface Resolved {
  id: number;
  /** The key or id asked for, when it led here through a merge. */
  resolvedFrom: string | null;
}

/**
 * A thing by key (old keys follow their merge) or by id (merged ids follow `merged_into`), or
 * not_found, also when the scope may not see it: a scope never reveals that something exists.
 */
export async function resolveEntity(
  db: Db,
  scope: Scope,
  params: { key?: string | undefined; id?: number | undefined },
): Promise<Resolved> {
  if ((params.key === undefined) === (params.id === undefined)) {
    throw new MemexError('invalid_params', 'pass exactly one of key and id');
  }
  let id: number | null = null;
  let resolvedFrom: string | null = null;
  if (params.key !== undefined) {
    const key = params.key.startsWith('entity:') ? null : normalizeKey(params.key);
    if (key === null) return resolveEntity(db, scope, { id: Number(params.key.slice('entity:'.length)) });
    const row = (
      await sql<{ entity: number; founding: string }>`
      select k.entity, e.key as founding from entity_keys k join entities e on e.id = k.entity where k.key = ${key}`.execute(
        db,
      )
    ).rows[0];
    if (row) {
      id = Number(row.entity);
      if (row.founding !== key && (await wasMerged(db, key))) resolvedFrom = key;
    }
  } else {
    const row = (
      await sql<{ id: number; depth: number }>`
        with recursive chain(id, merged_into, depth) as (
          select id, merged_into, 0 from entities where id = ${params.id}
          union all select e.id, e.merged_into, c.depth + 1 from entities e join chain c on e.id = c.merged_into where c.depth < 100)
        select id, depth from chain where merged_into is null`.execute(db)
    ).rows[0];
    if (row) {
      id = Number(row.id);
      if (row.depth > 0) resolvedFrom = `entity:${params.id}`;
    }
  }
  const what = params.key ?? `entity:${params.id}`;
  if (id === null) throw new MemexError('not_found', `no thing ${what}`);
  const visible = await sql<{ ok: boolean }>`select ${entityVisible(scope, sql`${id}::bigint`)} as ok`.execute(db);
  if (!visible.rows[0]?.ok) throw new MemexError('not_found', `no thing ${what}`);
  return { id, resolvedFrom };
}

async function wasMerged(db: Db, key: string): Promise<boolean> {
  const row = await sql`select 1 from merges where ${key} = any(keys) limit 1`.execute(db);
  return row.rows.length > 0;
}

/** SQL: the items behind a thing (evidence of its active links, and items its links point at). */
export function entityItems(entity: number): RawBuilder<{ item: string; rel: string }> {
  return sql`(
    select ev.item, l.rel from links l join evidence ev on ev.link = l.id
      where l.src_entity = ${entity} and l.status = 'active'
    union all
    select ev.item, l.rel from links l join evidence ev on ev.link = l.id
      where l.dst_entity = ${entity} and l.status = 'active'
    union all
    select coalesce(l.src_item, l.dst_item), l.rel from links l
      where ((l.src_entity = ${entity} and l.dst_item is not null) or (l.dst_entity = ${entity} and l.src_item is not null)) and l.status = 'active')`;
}

/**
 * SQL: the newest items behind a thing, read newest-first off the links' time indexes so a hub
 * with a hundred thousand messages costs what a quiet thing does. `window` rows per kind of
 * link; callers filter (scope, dates) and cut to their limit.
 */
export function recentEntityItems(
  entity: number,
  bounds: { before?: string | undefined; cursor?: Cursor | undefined },
  window: number,
): RawBuilder<{ item: string; rel: string }> {
  // A link to an item starts when the item happened: its time and the item's id stand for the
  // item's own (time, id), so a page's window starts right after the previous page's last item.
  const bound = (item: string) =>
    sql`${bounds.before ? sql`and l.valid_from < ${bounds.before}` : sql``} ${bounds.cursor ? afterCursor(bounds.cursor, 'l.valid_from', item) : sql``}`;
  return sql`(
    (select l.dst_item as item, l.rel from links l
      where l.src_entity = ${entity} and l.dst_item is not null and l.status = 'active' ${bound('l.dst_item')}
      order by l.valid_from desc nulls last, l.dst_item desc limit ${window})
    union all
    (select l.src_item, l.rel from links l
      where l.dst_entity = ${entity} and l.src_item is not null and l.status = 'active' ${bound('l.src_item')}
      order by l.valid_from desc nulls last, l.src_item desc limit ${window})
    union all
    (select ev.item, l.rel from links l join evidence ev on ev.link = l.id
      where ((l.src_entity = ${entity} and l.dst_entity is not null) or (l.dst_entity = ${entity} and l.src_entity is not null))
        and l.status = 'active'
      order by ev.item desc limit ${window}))`;
}

/**
 * SQL: `and` the row comes after `cursor` in newest-first order, undated rows last: an older
 * time, the same time and a smaller id, or no time at all (after any dated row).
 */
export function afterCursor(cursor: Cursor, time: string, id: string): RawBuilder<SqlBool> {
  const [t, i] = [sql.ref(time), sql.ref(id)];
  return cursor.at === null
    ? sql<SqlBool>`and ${t} is null and ${i} < ${cursor.id}`
    : sql<SqlBool>`and (${t} < ${cursor.at} or (${t} = ${cursor.at} and ${i} < ${cursor.id}) or ${t} is null)`;
}
