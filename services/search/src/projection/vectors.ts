import { sql, type Kysely, type QueryExecutorProvider, type Transaction } from 'kysely';
import { BUILTIN_SPEC, GLOVE_SIF_SPACE } from '@memex/embeddings';
import type { SearchDatabase, SpacesTable } from '../schema.js';

export type SpaceRow = Omit<SpacesTable, 'embedded_items'> & { embedded_items: number };

/**
 * The vector tables of a space. One pair per space rather than one table for all: vectors of
 * different spaces are never compared, each space has its own dimensions (a column type), an
 * HNSW index over one space needs no space filter (pgvector applies filters after the graph
 * walk, which costs recall), and dropping a space is dropping its tables.
 */
export function vectorTables(ord: number): { parts: string; items: string } {
  return { parts: `vec_${ord}_parts`, items: `vec_${ord}_items` };
}

/** pgvector's text form of a vector (what `::halfvec` casts from). */
export function vectorLiteral(vector: Float32Array): string {
  return `[${Array.from(vector).join(',')}]`;
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
  const type = sql.raw(`halfvec(${Math.trunc(info.dims)})`);
  await sql`create table ${sql.table(tables.parts)} (item_id text not null, ordinal integer not null, embedding ${type} not null, primary key (item_id, ordinal))`.execute(
    trx,
  );
  await sql`create table ${sql.table(tables.items)} (item_id text primary key, embedding ${type} not null)`.execute(
    trx,
  );
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

/** The HNSW indexes of a space's vector tables (cosine distance, as search and similar query them). */
export async function createVectorIndexes(db: QueryExecutorProvider, ord: number): Promise<void> {
  for (const table of Object.values(vectorTables(ord))) {
    await sql`create index ${sql.id(`${table}_hnsw`)} on ${sql.table(table)} using hnsw (embedding halfvec_cosine_ops) ${HNSW_BUILD}`.execute(
      db,
    );
  }
}

export async function allSpaces(db: Kysely<SearchDatabase> | Transaction<SearchDatabase>): Promise<SpaceRow[]> {
  return db.selectFrom('spaces').selectAll().orderBy('ord').execute();
}
