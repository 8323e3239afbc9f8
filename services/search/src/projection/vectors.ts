import { sql, type Kysely, type QueryExecutorProvider, type RawBuilder, type Transaction } from 'kysely';
import { BUILTIN_SPEC, GLOVE_SIF_SPACE } from '@memex/embeddings';
import type { SearchDatabase, SpacesTable } from '../schema.js';

export type SpaceRow = Omit<SpacesTable, 'embedded_items'> & { embedded_items: number };

/** A pair of vector tables: of passages' vectors and of items'. */
export interface VectorTables {
  parts: string;
  items: string;
}

/**
 * The indexed vector tables of a space, with their ANN indexes (`createAnnIndex`; `freshTables` holds
 * the vectors not in them yet). One pair per space rather than one table for all: vectors of
 * different spaces are never compared, each space has its own dimensions (a column type), an
 * index over one space needs no space filter (pgvector applies filters after the index scan,
 * which costs recall), and dropping a space is dropping its tables.
 */
export function vectorTables(ord: number): VectorTables {
  return { parts: `vec_${ord}_parts`, items: `vec_${ord}_items` };
}

/**
 * A space's fresh vectors: what the live projector writes, not yet in an ANN index. Inserting
 * into an HNSW graph, as the index was before, had been most of an import's indexing cost, and
 * an import was searchable only once the last insert was done; an index built in bulk over an
 * import's vectors also gets lists for them (see `listsFor`). Fresh vectors go into these
 * unindexed tables; `FreshVectorMover` puts them into indexed tables on its own connection once
 * the projector is idle or `sealAt` wait (see segments.ts). Search reads both: the indexed tables
 * by ANN, these by an exact scan, a few milliseconds outside a large import (see `EXACT_SCAN_BYTES`).
 */
export function freshTables(ord: number): VectorTables {
  return { parts: `vec_${ord}_parts_fresh`, items: `vec_${ord}_items_fresh` };
}

/**
 * What an exact scan of the fresh vectors may read: the bound on meaning search's latency while
 * vectors wait for an index. Over 16 MiB of halfvec rows (83,886 vectors of 100 dimensions,
 * 21,845 of 384) Postgres took 22–32 ms on a quiet machine here, over 64 MiB 75–95 ms. The
 * scan's cost is the rows' bytes, so the counts below follow a space's dimensions. At 64 MiB a
 * 50,000-message import sealed nothing while it ran and its meaning queries read up to 230,000
 * fresh rows: searching while it ran, hybrid p50/p95 404/742 ms, against 325/596 ms at 16 MiB,
 * which sealed twice and merged once meanwhile (IVFFlat builds of a few seconds on one core) and
 * was searchable as soon (368.9 s against 365.0 s; `npm run bench -- ingest`, 5 December).
 */
const EXACT_SCAN_BYTES = 16 * 2 ** 20;

/**
 * Fresh vectors (passages' and items') the mover seals into a segment while the memex is busy
 * (see segments.ts): an import's vectors wait until this many, so that its CPU goes to the import
 * rather than to indexes (a 50,000-message import sealed at 150,000 vectors built one HNSW graph
 * over them while it ran, with both cores: the projectors fell behind, the import waited for them).
 * An IVFFlat build costs a fraction of that (see `listsFor`); the bound is kept for the exact scan.
 */
export function sealAt(dims: number): number {
  return Math.floor(EXACT_SCAN_BYTES / (2 * dims));
}

/**
 * Fresh vectors at most: past this the projector inserts into the indexed tables itself, into
 * the lists of their indexes as built. Twice `sealAt`: room for what an import brings while a
 * seal is built; it only bounds the exact scan should the mover stop.
 */
export function freshCap(dims: number): number {
  return 2 * sealAt(dims);
}

/** A space's vector table of passages or of items, without indexes beyond its primary key. */
export async function createVectorTable(db: QueryExecutorProvider, name: string, dims: number, of: 'parts' | 'items') {
  const type = sql.raw(`halfvec(${Math.trunc(dims)})`);
  await (
    of === 'parts'
      ? sql`create table ${sql.table(name)} (item_id text not null, ordinal integer not null, embedding ${type} not null, primary key (item_id, ordinal))`
      : sql`create table ${sql.table(name)} (item_id text primary key, embedding ${type} not null)`
  ).execute(db);
}

/** The fresh tables of a space whose indexed tables exist (a migration gives them to spaces made before). */
export async function createFreshTables(db: QueryExecutorProvider, ord: number, dims: number): Promise<void> {
  const fresh = freshTables(ord);
  await createVectorTable(db, fresh.parts, dims, 'parts');
  await createVectorTable(db, fresh.items, dims, 'items');
}

/**
 * Whether a space's fresh vectors have reached `freshCap`, by Postgres's running count of live
 * rows (a guard, asked per batch: counting the rows themselves would scan them).
 */
export async function freshFull(db: QueryExecutorProvider, space: Pick<SpaceRow, 'ord' | 'dims'>): Promise<boolean> {
  return (await liveRows(db, freshTables(space.ord))) >= freshCap(space.dims);
}

/** Fresh vectors counted row by row at most, per table: a few milliseconds. */
const COUNTED_UP_TO = 20_000;

/**
 * A space's fresh vectors (passages and items): counted row by row while fewer than
 * `COUNTED_UP_TO` (and `upTo`) in each table; past that, Postgres' running count of live rows,
 * which trails the commits by a second or so (a backend's counts go out when it is idle). The
 * mover asks every second: counting an import's 250,000 fresh rows twice a second was 37 s of
 * Postgres' CPU in a 50,000-message import. Counted first, so a running count still high from
 * rows just moved never passes for a backlog: the mover would seal or rebuild over nothing.
 */
export async function freshCount(db: QueryExecutorProvider, ord: number, upTo: number): Promise<number> {
  const fresh = freshTables(ord);
  const limit = Math.min(upTo, COUNTED_UP_TO);
  const counted = await countUpTo(db, fresh, limit);
  return counted < limit ? counted : Math.max(counted, await liveRows(db, fresh));
}

/** Live rows of a pair of tables, by Postgres' running count (statistics, not a scan). */
async function liveRows(db: QueryExecutorProvider, tables: VectorTables): Promise<number> {
  const { rows } = await sql<{ n: number }>`select (pg_stat_get_live_tuples(to_regclass(${tables.parts}))
    + pg_stat_get_live_tuples(to_regclass(${tables.items})))::int as n`.execute(db);
  return rows[0]!.n;
}

/** Vectors in a pair of tables (not their segments), counted up to `upTo` in each: never a scan of a whole large table. */
async function countUpTo(db: QueryExecutorProvider, tables: VectorTables, upTo: number) {
  const { rows } = await sql<{ n: number }>`select
      (select count(*) from (select 1 from only ${sql.table(tables.parts)} limit ${upTo}) p)::int
      + (select count(*) from (select 1 from only ${sql.table(tables.items)} limit ${upTo}) i)::int as n`.execute(db);
  return rows[0]!.n;
}

/** A space's main tables holding this many vectors are not built again (see `cheaperToRebuild`). */
export const REBUILD_BELOW = 20_000;

/**
 * Whether `fresh` vectors go into a space's main tables, their indexes built again over all of
 * their vectors (`rebuildIndexes`), rather than into a segment: while the main tables hold fewer
 * than four times the fresh vectors (an archive's first import), one index over all of them costs
 * little more than a segment's and leaves one index to read, not two, with lists for all its rows.
 * Main tables of `REBUILD_BELOW` or more are never built again for fresh vectors: they go to a
 * segment beside them (segments.ts), without building the main tables' own vectors again.
 */
export async function cheaperToRebuild(db: QueryExecutorProvider, ord: number, fresh: number): Promise<boolean> {
  const limit = Math.min(fresh * 4, REBUILD_BELOW);
  return (await countUpTo(db, vectorTables(ord), limit)) < limit;
}

/**
 * Moves up to `limit` fresh passage vectors and item vectors of a space into its indexed tables, in
 * one short transaction each; returns how many. Rows the projector is deleting are skipped
 * (`skip locked`), and it deletes fresh rows before indexed rows, so a vector moved while its item
 * is deleted or re-split is deleted from the indexed table after the move, never left behind. A
 * passage already indexed keeps its vector (a passage's first vector counts); an item's
 * vector is its latest, so the fresh one replaces it.
 */
export async function moveFresh(db: QueryExecutorProvider, ord: number, limit: number): Promise<number> {
  const [fresh, indexed] = [freshTables(ord), vectorTables(ord)];
  const { rows: parts } = await sql<{ n: number }>`with moved as (
      delete from ${sql.table(fresh.parts)} f
      using (select item_id, ordinal from ${sql.table(fresh.parts)} limit ${limit} for update skip locked) s
      where f.item_id = s.item_id and f.ordinal = s.ordinal returning f.*),
    put as (insert into ${sql.table(indexed.parts)} select * from moved on conflict (item_id, ordinal) do nothing)
    select count(*)::int as n from moved`.execute(db);
  const { rows: items } = await sql<{ n: number }>`with moved as (
      delete from ${sql.table(fresh.items)} f
      using (select item_id from ${sql.table(fresh.items)} limit ${limit} for update skip locked) s
      where f.item_id = s.item_id returning f.*),
    put as (insert into ${sql.table(indexed.items)} select * from moved
      on conflict (item_id) do update set embedding = excluded.embedding)
    select count(*)::int as n from moved`.execute(db);
  return parts[0]!.n + items[0]!.n;
}

/**
 * pgvector's text form of a vector (what `::halfvec` casts from), to seven significant digits:
 * more than a halfvec keeps (11 bits, about 3.3 digits), and printing every float32 in full was
 * most of what the projector spent on a vector, and twice the text for Postgres to parse.
 */
export function vectorLiteral(vector: Float32Array): string {
  let literal = '[';
  for (let i = 0; i < vector.length; i++) literal += (i === 0 ? '' : ',') + vector[i]!.toPrecision(7);
  return literal + ']';
}

export interface SpaceInfo {
  space: string;
  dims: number;
  kind?: string;
  spec?: string;
  name?: string;
  model?: string;
  protocol?: 'openai' | 'ollama';
  details?: Record<string, unknown>;
}

/**
 * The space's row, created with its tables on first sight (a model.added, or the first vectors of
 * the built-in space, which has no model.added); `created` says it was. Vectors are stored as
 * halfvec: half the memory and index size of float32, with a loss of precision far below what
 * separates neighbours. A new space's tables come without their ANN indexes: the caller builds
 * them (`createVectorIndexes`) once it has put in the vectors it holds, so that their lists are
 * found among those vectors (see `listsFor`).
 */
export async function ensureSpace(
  trx: Transaction<SearchDatabase>,
  info: SpaceInfo,
  seq: number,
): Promise<SpaceRow & { created: boolean }> {
  const existing = await trx.selectFrom('spaces').selectAll().where('space', '=', info.space).executeTakeFirst();
  if (existing) {
    if (existing.dims !== info.dims)
      throw new Error(`space ${info.space} has ${existing.dims} dimensions, not ${info.dims}`);
    if (!info.spec) return { ...existing, created: false };
    const update = {
      kind: info.kind ?? existing.kind,
      spec: info.spec,
      name: info.name ?? null,
      model: info.model ?? null,
      protocol: info.protocol ?? null,
      details: info.details ?? {},
    };
    await trx.updateTable('spaces').set(update).where('space', '=', info.space).execute();
    return { ...existing, ...update, created: false };
  }
  const max = await trx
    .selectFrom('spaces')
    .select((eb) => eb.fn.max('ord').as('ord'))
    .executeTakeFirst();
  const ord = (max?.ord ?? -1) + 1;
  const builtin = info.space === GLOVE_SIF_SPACE;
  const row: SpaceRow = {
    space: info.space,
    ord,
    dims: info.dims,
    kind: info.kind ?? (builtin ? 'glove-sif' : 'unknown'),
    spec: info.spec ?? (builtin ? BUILTIN_SPEC : ''),
    name: info.name ?? null,
    model: info.model ?? null,
    protocol: info.protocol ?? null,
    details: info.details ?? {},
    added_seq: seq,
    embedded_items: 0,
  };
  await trx.insertInto('spaces').values(row).execute();
  const tables = vectorTables(ord);
  await createVectorTable(trx, tables.parts, info.dims, 'parts');
  await createVectorTable(trx, tables.items, info.dims, 'items');
  await createFreshTables(trx, ord, info.dims);
  return { ...row, created: true };
}

/**
 * A vector table's ANN index: IVFFlat, its rows in `lists` clusters around centroids found by
 * k-means, of which a query reads the `PROBES` nearest. It replaced HNSW graphs (m = 32,
 * ef_construction = 128), measured on this 2-core machine over the search bench's passages
 * (100-dimension halfvec, bags of common words: no clusters to help either index): at 10^5 the
 * graph took 119.5 s to build and found 0.981 of the exact ten at p95 11.9 ms (ef_search 400);
 * IVFFlat with 316 lists 2.4 s, 0.980 at 8.3 ms (80 probes). At 10^6 the graph took 53 minutes
 * and found 0.844; IVFFlat with 1,000 lists 37 s. The graph's build was the longest step of an
 * import after searchable and of a replay (2.7 ms of Postgres' CPU a vector).
 *
 * Its lists are fixed when it is built: `listsFor` the rows it holds then. Rows inserted after
 * go into the nearest list, so an index that has grown far past its lists is built again
 * (`ensureAnnIndexes`), which at these costs is cheaper than keeping a graph up to date.
 *
 * √rows lists, but one for a table every query reads whole all the same (√rows lists no more
 * than `PROBES`: 14,400 rows or fewer): the same rows read, without the k-means that finds the
 * lists, most of a build of that size (the 10,107 item vectors of a 10,000-message import:
 * 0.7–1.1 s of a core at 101 lists, 4.2 s in a replay beside its passages' build; 10,107
 * synthetic ones 0.33–0.39 s, against 35 ms at one list).
 */
export function listsFor(rows: number): number {
  const lists = Math.round(Math.sqrt(rows));
  return lists > PROBES ? lists : 1;
}

/**
 * Lists a query reads in each index (`ivfflat.probes`). With `listsFor`'s √rows lists, a table of
 * 14,400 rows or fewer would be read whole (it has one list), one of 10^5 for a third (recall@10
 * 0.99 on the bench's passages, 0.985 at 100 probes), one of 10^6 for an eighth (0.954 at p95
 * 47.8 ms of the index scan alone; 0.934 and 39.7 ms at 100 probes, 0.903 and 30.4 ms at 80).
 * Read in two shards (`SHARDED_AT`) of 707 lists, 120 probes found 0.965 at p95 28.9 ms, 100
 * probes 0.951 at 23.5; twice the lists (1,414 a shard) found no more for the time (0.951 at 170
 * probes, p95 21.9 ms; 0.959 at 200, 25.4 ms) and took 44 s to build instead of 17 (the scan
 * alone, 100 queries, quiet).
 */
export const PROBES = 120;

/**
 * An index whose lists are half or fewer of `listsFor` the rows its table holds now (built over a
 * quarter of them or fewer) is built again, once the table is past what a query reads whole
 * (`PROBES` lists of `listsFor` rows): below that, lists change a query's speed little and never
 * what it finds.
 */
const OUTGROWN = 2;

/** Whether an index of `lists` lists over `rows` rows is built again (see `OUTGROWN`). */
export function outgrown(lists: number, rows: number): boolean {
  return rows > PROBES ** 2 && lists * OUTGROWN <= listsFor(rows);
}

/**
 * A large table's ANN index is split into shards by its items' ids, one IVFFlat index over each
 * (partial: `shardOf`), which a query reads side by side, each on its own connection and core
 * (see queries/nearest.ts). At 10^6 passages one index of 1,000 lists read at `PROBES` lists took
 * 30 ms of Postgres' CPU a query, most of it pgvector sorting every vector of those lists; two
 * shards of 707 lists each, read at `PROBES` lists too, find more of the exact ten in less time on
 * this 2-core machine (the search bench, 6 December: recall@10 0.974 against 0.951, meaning
 * p50/p95 46.1/61.6 ms against 51.1/71.2), though they read more lists in all, so a hybrid query,
 * whose keyword half shares the cores, is no faster there (p95 84.9 against 76.9 ms). Below
 * `SHARDED_AT` rows a query's one index scan is short, and more shards would only read more lists.
 */
export const SHARDED_AT = 500_000;
/** Shards of a table past `SHARDED_AT`: one per core of the machine this was measured on. */
export const SHARDS = 2;

export function shardsFor(rows: number): number {
  return rows >= SHARDED_AT ? SHARDS : 1;
}

/** The rows of a table in shard `shard` of `shards`: by a hash of their item's id, so an item's passages share one. */
export function shardOf(itemId: RawBuilder<unknown>, shard: number, shards: number): RawBuilder<boolean> {
  return sql<boolean>`(hashtext(${itemId}) & 2147483647) % ${sql.lit(shards)} = ${sql.lit(shard)}`;
}

/** The name of shard `shard`'s index among the ANN indexes named `base` (the first shard's). */
function shardIndexName(base: string, shard: number): string {
  return shard === 0 ? base : `${base}_s${shard}`;
}

interface AnnIndex {
  name: string;
  valid: boolean;
  lists: number;
  /** A shard's (partial) index. */
  partial: boolean;
}

/** The ANN indexes of a table named from `base`, first shard first. */
async function annIndexesOf(conn: QueryExecutorProvider, table: string, base = `${table}_ann`): Promise<AnnIndex[]> {
  const { rows } =
    await sql<AnnIndex>`select x.relname as name, i.indisvalid as valid, i.indpred is not null as partial,
      coalesce((select split_part(o, '=', 2)::int from unnest(x.reloptions) o where o like 'lists=%'), 1) as lists
    from pg_index i join pg_class x on x.oid = i.indexrelid
    where i.indrelid = to_regclass(${table}) and x.relname ~ ${`^${base}(_s[0-9]+)?$`}
    order by x.relname`.execute(conn);
  return rows;
}

/** The shards a table's ANN index is in (1 for a table with none yet). */
export async function shardsOf(conn: QueryExecutorProvider, table: string): Promise<number> {
  return Math.max(1, (await annIndexesOf(conn, table)).length);
}

/** Drops the ANN indexes of a table named from `base` (every shard's): `concurrently` as `createAnnIndex`. */
export async function dropAnnIndexes(
  conn: QueryExecutorProvider,
  table: string,
  { concurrently, base = `${table}_ann` }: { concurrently: boolean; base?: string },
): Promise<void> {
  for (const { name } of await annIndexesOf(conn, table, base))
    await sql`drop index ${sql.raw(concurrently ? 'concurrently' : '')} if exists ${sql.id(name)}`.execute(conn);
}

/** Renames a table's ANN indexes named from `from` (every shard's) to be named from `to`. */
export async function renameAnnIndexes(
  conn: QueryExecutorProvider,
  table: string,
  from: string,
  to: string,
): Promise<void> {
  for (const { name } of await annIndexesOf(conn, table, from))
    await sql`alter index ${sql.id(name)} rename to ${sql.id(`${to}${name.slice(from.length)}`)}`.execute(conn);
}

/** The ANN indexes of a space's vector tables, over the rows they hold (cosine distance, as search and similar query them). */
export async function createVectorIndexes(db: QueryExecutorProvider, ord: number): Promise<void> {
  for (const table of Object.values(vectorTables(ord))) await createAnnIndex(db, table, { concurrently: false });
}

/** Memory for an index build: pgvector's k-means keeps its sample there (50 rows a list). */
const BUILD_MEMORY = sql.lit('512MB');

/**
 * Builds the ANN index of a table over the rows it holds (not those of its segments), in
 * `shardsFor` them shards, each with lists for its rows, with the memory to build it in.
 * `concurrently` lets the projector write and search read the table meanwhile; `conn` is one
 * connection, not in a transaction when concurrently. `base`: another name than the table's
 * index (one built to replace it). `shards`: so many whatever the rows (tests).
 */
export async function createAnnIndex(
  conn: QueryExecutorProvider,
  table: string,
  { concurrently, base = `${table}_ann`, shards }: { concurrently: boolean; base?: string; shards?: number },
): Promise<void> {
  const { rows } = await sql<{ n: number }>`select count(*)::int as n from only ${sql.table(table)}`.execute(conn);
  const count = shards ?? shardsFor(rows[0]!.n);
  const lists = sql.lit(listsFor(rows[0]!.n / count));
  await sql`set maintenance_work_mem = ${BUILD_MEMORY}`.execute(conn);
  try {
    for (let shard = 0; shard < count; shard++) {
      const only = count > 1 ? sql`where ${shardOf(sql.ref('item_id'), shard, count)}` : sql``;
      await sql`create index ${sql.raw(concurrently ? 'concurrently' : '')} ${sql.id(shardIndexName(base, shard))}
        on ${sql.table(table)} using ivfflat (embedding halfvec_cosine_ops) with (lists = ${lists}) ${only}`.execute(
        conn,
      );
    }
  } finally {
    await sql`reset maintenance_work_mem`.execute(conn);
  }
}

/**
 * Builds the ANN index of each of a space's indexed tables that has none, only what a build cut
 * short left (an invalid index, after a crash or a cancelled build), or one built for far fewer
 * rows than it holds now (`OUTGROWN`: a new space's index over its first vectors, a main table
 * grown by inserts): the new one is built beside it and takes its place, so queries keep an index
 * meanwhile. `concurrently`: the projector keeps writing and search keeps reading (the table by
 * exact scan, where it has no index: right, only slower). `conn` is one connection, not in a
 * transaction, that holds the space's index lock.
 */
export async function ensureAnnIndexes(conn: QueryExecutorProvider, ord: number): Promise<void> {
  for (const table of Object.values(vectorTables(ord))) {
    const indexes = await annIndexesOf(conn, table);
    // Rows by Postgres' running count or its last analyze, whichever is larger: not a scan, every second.
    const { rows } = await sql<{
      rows: number;
    }>`select greatest(pg_stat_get_live_tuples(t.oid), t.reltuples)::int as rows
      from pg_class t where t.oid = to_regclass(${table})`.execute(conn);
    if (whole(indexes) && !outgrown(Math.min(...indexes.map((index) => index.lists)), rows[0]!.rows / indexes.length))
      continue;
    // A replacement a crash left, finished or not: built again.
    const next = `${table}_ann_next`;
    await dropAnnIndexes(conn, table, { concurrently: true, base: next });
    if (!whole(indexes)) {
      await dropAnnIndexes(conn, table, { concurrently: true });
      await createAnnIndex(conn, table, { concurrently: true });
      continue;
    }
    await createAnnIndex(conn, table, { concurrently: true, base: next });
    await dropAnnIndexes(conn, table, { concurrently: true });
    await renameAnnIndexes(conn, table, next, `${table}_ann`);
  }
}

/** Whether a table's ANN indexes are a whole set, each finished: one over every row, or shards (partial indexes) from the first. */
function whole(indexes: AnnIndex[]): boolean {
  const sharded = indexes.length > 1;
  return indexes.length > 0 && indexes.every((index) => index.valid && index.partial === sharded);
}

/**
 * Puts every fresh vector of a space into its indexed tables and builds their indexes again
 * over all of them (see `cheaperToRebuild`): the indexes are dropped, the fresh rows moved into
 * the bare tables, and the indexes built. Same connection rules as `ensureAnnIndexes`.
 */
export async function rebuildIndexes(conn: QueryExecutorProvider, ord: number): Promise<void> {
  for (const table of Object.values(vectorTables(ord))) await dropAnnIndexes(conn, table, { concurrently: true });
  await moveFresh(conn, ord, ALL);
  await ensureAnnIndexes(conn, ord);
}

/**
 * Runs `work` with its index builds on the connection's own core, without Postgres' parallel
 * maintenance workers (two by default): a build while the memex is busy must leave the other core
 * to the import and the projectors, which searchable waits for and the build does not.
 */
export async function onOneCore<T>(conn: QueryExecutorProvider, work: () => Promise<T>): Promise<T> {
  await sql`set max_parallel_maintenance_workers = 0`.execute(conn);
  try {
    return await work();
  } finally {
    await sql`reset max_parallel_maintenance_workers`.execute(conn);
  }
}

/** A limit that moves every fresh vector. */
const ALL = Number.MAX_SAFE_INTEGER;

/**
 * Runs `work` on one connection of the pool (given with its Postgres backend's pid, to cancel it
 * by) while holding one of a space's locks, or returns false at once if another replica's mover
 * holds it: `indexes` for the space's main tables' indexes and sealing (a build must not be
 * dropped as unfinished by a second mover seeing it invalid), `merges` for merging its segments.
 */
export async function withSpaceLock(
  db: Kysely<SearchDatabase>,
  ord: number,
  lock: 'indexes' | 'merges',
  work: (conn: Kysely<SearchDatabase>, backend: number) => Promise<void>,
): Promise<boolean> {
  const key = `search:${lock}:${ord}`;
  return db.connection().execute(async (conn) => {
    const { rows } = await sql<{ ok: boolean; backend: number }>`
      select pg_try_advisory_lock(hashtext(${key})) as ok, pg_backend_pid() as backend`.execute(conn);
    if (!rows[0]!.ok) return false;
    try {
      await work(conn, rows[0]!.backend);
      return true;
    } finally {
      await sql`select pg_advisory_unlock(hashtext(${key}))`.execute(conn);
    }
  });
}

export async function allSpaces(db: Kysely<SearchDatabase> | Transaction<SearchDatabase>): Promise<SpaceRow[]> {
  return db.selectFrom('spaces').selectAll().orderBy('ord').execute();
}
