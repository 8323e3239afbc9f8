import { sql, type Kysely, type QueryExecutorProvider, type Transaction } from 'kysely';
import { BUILTIN_SPEC, GLOVE_SIF_SPACE } from '@memex/embeddings';
import type { SearchDatabase, SpacesTable } from '../schema.js';

export type SpaceRow = Omit<SpacesTable, 'embedded_items'> & { embedded_items: number };

/** A pair of vector tables: of passages' vectors and of items'. */
export interface VectorTables {
  parts: string;
  items: string;
}

/**
 * The vector tables of a space, with their HNSW graphs (`freshTables` holds the vectors not in
 * them yet). One pair per space rather than one table for all: vectors of different spaces are
 * never compared, each space has its own dimensions (a column type), an
 * HNSW index over one space needs no space filter (pgvector applies filters after the graph
 * walk, which costs recall), and dropping a space is dropping its tables.
 */
export function vectorTables(ord: number): VectorTables {
  return { parts: `vec_${ord}_parts`, items: `vec_${ord}_items` };
}

/**
 * A space's fresh vectors: what the live projector writes, not yet in the HNSW graphs. Inserting
 * into a graph was most of an import's indexing cost (more than half of the search projector's
 * Postgres CPU at m = 32, one vector at a time on one core), and an import was searchable only
 * once the last insert was done. Fresh vectors go into these unindexed tables instead;
 * `FreshVectorMover` puts them into graphs on its own connection once the projector is idle or
 * `sealAt` wait (see segments.ts). Search reads both: the graphs by ANN, these by an exact scan,
 * a few milliseconds outside a large import (see `EXACT_SCAN_BYTES`).
 */
export function freshTables(ord: number): VectorTables {
  return { parts: `vec_${ord}_parts_fresh`, items: `vec_${ord}_items_fresh` };
}

/**
 * What an exact scan of the fresh vectors may read: the bound on meaning search's latency while
 * vectors wait for a graph. Over 64 MiB of halfvec rows (335,000 vectors of 100 dimensions,
 * 87,000 of 384) Postgres took 75–95 ms on a quiet machine here. The scan's cost is the rows'
 * bytes, so the counts below follow a space's dimensions.
 */
const EXACT_SCAN_BYTES = 64 * 2 ** 20;

/**
 * Fresh vectors (passages' and items') the mover seals into a segment while the memex is busy
 * (see segments.ts): an import's vectors wait until this many, so that its CPU goes to the import
 * rather than to graphs (a 50,000-message import sealed at 150,000 vectors built one graph over
 * them while it ran, with both cores: the projectors fell behind, the import waited for them).
 */
export function sealAt(dims: number): number {
  return Math.floor(EXACT_SCAN_BYTES / (2 * dims));
}

/**
 * Fresh vectors at most: past this the projector inserts into the graph itself, several times as
 * slowly as the mover builds graphs. Twice `sealAt`: room for what an import brings while a seal
 * is built (minutes under an import's load, on one core); it only bounds the exact scan should
 * the mover stop.
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

/** The fresh tables of a space whose graph tables exist (a migration gives them to spaces made before). */
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

/** Vectors in a pair of tables (not their segments), counted up to `upTo` in each: never a scan of a whole large graph. */
async function countUpTo(db: QueryExecutorProvider, tables: VectorTables, upTo: number) {
  const { rows } = await sql<{ n: number }>`select
      (select count(*) from (select 1 from only ${sql.table(tables.parts)} limit ${upTo}) p)::int
      + (select count(*) from (select 1 from only ${sql.table(tables.items)} limit ${upTo}) i)::int as n`.execute(db);
  return rows[0]!.n;
}

/** A space's main graph holding this many vectors is not built again (see `cheaperToRebuild`). */
export const REBUILD_BELOW = 20_000;

/**
 * Whether `fresh` vectors are better put into a space's graphs by building them again over all of
 * its vectors (`rebuildGraphs`) than by inserting them one by one. pgvector 0.8 inserted a vector
 * into a graph at m = 32 about six times as slowly as it built one over rows already there
 * (measured on this 2-core machine: 13.8 ms against 2.1 ms per 100-dimension vector), so a
 * rebuild is cheaper while the graph holds fewer than about five times the fresh vectors; four
 * leaves a margin. A graph of `REBUILD_BELOW` or more is never built again: fresh vectors go to a
 * segment beside it (segments.ts), which costs no more to build than they do, without building
 * the graph's own vectors again. So only an archive's first import rebuilds, not every later one.
 */
export async function cheaperToRebuild(db: QueryExecutorProvider, ord: number, fresh: number): Promise<boolean> {
  const limit = Math.min(fresh * 4, REBUILD_BELOW);
  return (await countUpTo(db, vectorTables(ord), limit)) < limit;
}

/**
 * Moves up to `limit` fresh passage vectors and item vectors of a space into its graph tables, in
 * one short transaction each; returns how many. Rows the projector is deleting are skipped
 * (`skip locked`), and it deletes fresh rows before graph rows, so a vector moved while its item
 * is deleted or re-split is deleted from the graph table after the move, never left behind. A
 * passage already in the graph keeps its vector (a passage's first vector counts); an item's
 * vector is its latest, so the fresh one replaces it.
 */
export async function moveFresh(db: QueryExecutorProvider, ord: number, limit: number): Promise<number> {
  const [fresh, graph] = [freshTables(ord), vectorTables(ord)];
  const { rows: parts } = await sql<{ n: number }>`with moved as (
      delete from ${sql.table(fresh.parts)} f
      using (select item_id, ordinal from ${sql.table(fresh.parts)} limit ${limit} for update skip locked) s
      where f.item_id = s.item_id and f.ordinal = s.ordinal returning f.*),
    put as (insert into ${sql.table(graph.parts)} select * from moved on conflict (item_id, ordinal) do nothing)
    select count(*)::int as n from moved`.execute(db);
  const { rows: items } = await sql<{ n: number }>`with moved as (
      delete from ${sql.table(fresh.items)} f
      using (select item_id from ${sql.table(fresh.items)} limit ${limit} for update skip locked) s
      where f.item_id = s.item_id returning f.*),
    put as (insert into ${sql.table(graph.items)} select * from moved
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
 * separates neighbours. A new space's tables come without their HNSW indexes: the caller builds
 * them (`createVectorIndexes`) once it has put in the vectors it holds, because pgvector builds a
 * graph over rows already there far faster than it inserts them one by one (a rebuild's first
 * batch of vectors took seconds through the graph, before the bulk load's index policy could drop it).
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
 * The HNSW graph's build parameters. pgvector's defaults (m = 16, ef_construction = 64) build a
 * graph too sparse for mail: an archive's passages lie close together and a 1–3 word query lies
 * outside them, so its neighbours differ by little. Measured at 10^5 bench passages against
 * exact search (ef_search 400): the default graph found 0.86 of the exact top ten, m = 16 with
 * ef_construction = 200 0.91, m = 32 with ef_construction = 128 0.97 (0.96 at ef_search 300).
 * The price is a longer build and insert, and about twice the distances per step of a query.
 */
const HNSW_BUILD = sql.raw('with (m = 32, ef_construction = 128)');

/** The HNSW index of a graph table (a space's, or a segment's) of passages or of items. */
export function graphIndex(table: string) {
  return sql.id(`${table}_hnsw`);
}

/** The HNSW indexes of a space's vector tables (cosine distance, as search and similar query them). */
export async function createVectorIndexes(db: QueryExecutorProvider, ord: number): Promise<void> {
  for (const table of Object.values(vectorTables(ord))) {
    await sql`create index ${graphIndex(table)} on ${sql.table(table)} using hnsw (embedding halfvec_cosine_ops) ${HNSW_BUILD}`.execute(
      db,
    );
  }
}

/** Memory for a graph build: pgvector builds in memory while the graph fits (30,000 vectors: ~25 MB). */
const BUILD_MEMORY = sql.lit('512MB');

/**
 * Builds the HNSW index of a graph table over the rows it holds, with the memory to build it in.
 * `concurrently` lets the projector write and search read the table meanwhile; `conn` is one
 * connection, not in a transaction when concurrently.
 */
export async function buildGraphIndex(
  conn: QueryExecutorProvider,
  table: string,
  { concurrently }: { concurrently: boolean },
): Promise<void> {
  await sql`set maintenance_work_mem = ${BUILD_MEMORY}`.execute(conn);
  try {
    await sql`create index ${sql.raw(concurrently ? 'concurrently' : '')} ${graphIndex(table)} on ${sql.table(table)}
      using hnsw (embedding halfvec_cosine_ops) ${HNSW_BUILD}`.execute(conn);
  } finally {
    await sql`reset maintenance_work_mem`.execute(conn);
  }
}

/**
 * Builds the HNSW index of each of a space's graph tables that has none, or only what a build cut
 * short left (an invalid index, after a crash or a cancelled build). `concurrently`: the projector
 * keeps writing and search keeps reading (the graph table by exact scan: right, only slower) while
 * it builds. `conn` is one connection, not in a transaction, that holds the space's build lock.
 */
export async function ensureGraphIndexes(conn: QueryExecutorProvider, ord: number): Promise<void> {
  for (const table of Object.values(vectorTables(ord))) {
    const { rows } = await sql<{ valid: boolean }>`select i.indisvalid as valid from pg_index i
      where i.indexrelid = to_regclass(${`${table}_hnsw`})`.execute(conn);
    if (rows[0]?.valid) continue;
    if (rows[0]) await sql`drop index concurrently ${graphIndex(table)}`.execute(conn);
    await buildGraphIndex(conn, table, { concurrently: true });
  }
}

/**
 * Puts every fresh vector of a space into its graph tables by building their graphs again
 * (see `cheaperToRebuild`): the indexes are dropped, the fresh rows moved into the bare tables,
 * and the indexes built over all of them. Same connection rules as `ensureGraphIndexes`.
 */
export async function rebuildGraphs(conn: QueryExecutorProvider, ord: number): Promise<void> {
  for (const table of Object.values(vectorTables(ord)))
    await sql`drop index concurrently if exists ${graphIndex(table)}`.execute(conn);
  await moveFresh(conn, ord, ALL);
  await ensureGraphIndexes(conn, ord);
}

/**
 * Runs `work` with its graph builds on the connection's own core, without Postgres' parallel
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
 * holds it: `graphs` for the space's main graph and sealing (a build must not be dropped as
 * unfinished by a second mover seeing it invalid), `merges` for merging its segments.
 */
export async function withSpaceLock(
  db: Kysely<SearchDatabase>,
  ord: number,
  lock: 'graphs' | 'merges',
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
