import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { SearchDatabase } from '../schema.js';
import {
  createAnnIndex,
  createVectorTable,
  freshTables,
  renameAnnIndexes,
  vectorTables,
  type SpaceRow,
  type VectorTables,
} from './vectors.js';

/**
 * Segments: vectors of a large import, in indexed tables of their own beside a space's main ones.
 *
 * Once a space's main tables are large, an import's fresh vectors are not inserted into them
 * (into the lists of an index built before them, see `listsFor`): the fresh tables are sealed into
 * a segment, a pair of tables (`vec_<ord>_parts_seg<n>`, `vec_<ord>_items_seg<n>`) whose indexes
 * are built in bulk over them, like Lucene's segments. Segments of like size are merged, again by
 * a bulk build, so a search reads a few indexes (`MERGE_FACTOR` per size level at most), and the
 * small ones into one once the memex is quiet (`segmentsToMerge`). (They came with HNSW graphs,
 * which cost several times as much to insert into as to build; IVFFlat costs little either way.)
 *
 * A segment is a child table (Postgres inheritance) of the space's main table: the projector's
 * deletes and its "is this vector stored already" checks on the main table reach every segment
 * without knowing them. Search reads each table by itself (`vectorLayout`), the planner cannot
 * weigh several index scans under one merge.
 *
 * A segment is built as a scratch table nobody reads (no concurrent index build, whose waits for
 * older transactions would stall behind a long merge), then swapped in by one short transaction
 * that holds the fresh tables exclusively: the layout lock. Readers and the projector take the
 * fresh tables first, so each sees the layout before or after a swap, never half of it.
 */

/** Fresh vectors left when the projector is idle that make a segment rather than inserts into the main tables. */
export const SEAL_MIN = 1_000;
/** Segments of one size level merged into one. */
export const MERGE_FACTOR = 4;
/** Segments below this many vectors make the first size level; each level is `MERGE_FACTOR` times the one before. */
export const LEVEL_SIZE = 5_000;

export interface Segment {
  n: number;
  tables: VectorTables;
  /** Vectors (passages and items) as Postgres last counted them: what merging by size needs. */
  vectors: number;
}

/** A space's segments, oldest first. */
export async function listSegments(db: Kysely<SearchDatabase>, ord: number): Promise<Segment[]> {
  const main = vectorTables(ord);
  const { rows } = await sql<{ name: string; vectors: number }>`
    select c.relname as name, greatest(c.reltuples, 0)::int as vectors from pg_inherits i join pg_class c on c.oid = i.inhrelid
    where i.inhparent in (to_regclass(${main.parts}), to_regclass(${main.items}))`.execute(db);
  const byNumber = new Map<number, number>();
  for (const row of rows) {
    const n = Number(/_seg(\d+)$/.exec(row.name)?.[1]);
    byNumber.set(n, (byNumber.get(n) ?? 0) + row.vectors);
  }
  return [...byNumber].sort(([a], [b]) => a - b).map(([n, vectors]) => ({ n, tables: segmentTables(ord, n), vectors }));
}

export function segmentTables(ord: number, n: number): VectorTables {
  const main = vectorTables(ord);
  return { parts: `${main.parts}_seg${n}`, items: `${main.items}_seg${n}` };
}

/** Where a segment is built before it is swapped in, one pair per kind of work (a crash leaves it to the next). */
function scratchTables(ord: number, work: 'sealing' | 'merging'): VectorTables {
  const main = vectorTables(ord);
  return { parts: `${main.parts}_${work}`, items: `${main.items}_${work}` };
}

/** Whether a table of the search schema is a segment or a segment being built: its rows are read through the main table. */
export function isSegmentTable(name: string): boolean {
  return /^vec_\d+_(parts|items)_(seg\d+|sealing|merging)$/.test(name);
}

/** A table a nearest-vector query reads by its ANN index: `from` (`only` for a space's main table), in so many shards. */
export interface IndexedTable {
  from: RawBuilder<unknown>;
  shards: number;
}

/**
 * The tables a query of a space's vectors reads, each by itself: the fresh ones (exact scan), the
 * main ones (`only`: not their segments again) and every segment's (by their ANN indexes, in as
 * many shards as they have: see `shardsFor`). Takes the layout lock for reading first, so a swap
 * is waited for, not half seen; `trx` must be a transaction.
 */
export async function vectorLayout(
  trx: Kysely<SearchDatabase>,
  ord: number,
): Promise<{ fresh: VectorTables; indexed: Array<{ parts: IndexedTable; items: IndexedTable }> }> {
  const fresh = freshTables(ord);
  await sql`lock table ${sql.table(fresh.parts)}, ${sql.table(fresh.items)} in access share mode`.execute(trx);
  const main = vectorTables(ord);
  const segments = await listSegments(trx, ord);
  // Shards by their indexes' names (see createAnnIndex): one catalog read for every table.
  const { rows } = await sql<{ table: string; shards: number }>`select t.relname as table, count(*)::int as shards
    from pg_index i join pg_class x on x.oid = i.indexrelid join pg_class t on t.oid = i.indrelid
    where t.relnamespace = current_schema()::regnamespace and t.relname like ${`vec\\_${ord}\\_%`}
      and (x.relname = t.relname || '_ann' or x.relname ~ ('^' || t.relname || '_ann_s[0-9]+$'))
    group by t.relname`.execute(trx);
  const shards = new Map(rows.map((row) => [row.table, row.shards]));
  const indexed = (table: string, from: RawBuilder<unknown>) => ({ from, shards: shards.get(table) ?? 1 });
  return {
    fresh,
    indexed: [
      {
        parts: indexed(main.parts, sql`only ${sql.table(main.parts)}`),
        items: indexed(main.items, sql`only ${sql.table(main.items)}`),
      },
      ...segments.map(({ tables }) => ({
        parts: indexed(tables.parts, sql.table(tables.parts)),
        items: indexed(tables.items, sql.table(tables.items)),
      })),
    ],
  };
}

/**
 * Which segments to merge now, if any. While vectors arrive, `MERGE_FACTOR` of the smallest size
 * level that has as many (each vector is built again about once per level: log₄ of the import's
 * size). Once the memex is quiet, the small ones into one: from the smallest up, each next segment
 * joins while it holds at most `MERGE_FACTOR` times those before it together (any below
 * `LEVEL_SIZE` join). A large segment is built again only once the smaller ones have grown to a
 * quarter of it, not at every quiet time after a day's few new vectors: the segments left each
 * hold four times all smaller ones, so a search reads a few indexes (log₄ of the archive's size).
 */
export function segmentsToMerge(segments: Segment[], idle: boolean): Segment[] | undefined {
  if (segments.length < 2) return undefined;
  if (idle) return smallOnes(segments);
  const levels = new Map<number, Segment[]>();
  for (const segment of segments) {
    const level = Math.floor(Math.log(Math.max(1, segment.vectors / LEVEL_SIZE)) / Math.log(MERGE_FACTOR));
    levels.set(level, [...(levels.get(level) ?? []), segment]);
  }
  const full = [...levels].sort(([a], [b]) => a - b).find(([, same]) => same.length >= MERGE_FACTOR);
  return full?.[1].slice(0, MERGE_FACTOR);
}

/** The smallest segments that merge at a quiet time (see `segmentsToMerge`), in their order; none if fewer than two. */
function smallOnes(segments: Segment[]): Segment[] | undefined {
  const bySize = [...segments].sort((a, b) => a.vectors - b.vectors);
  const merge: Segment[] = [];
  let vectors = 0;
  for (const segment of bySize) {
    if (merge.length > 0 && segment.vectors > MERGE_FACTOR * Math.max(vectors, LEVEL_SIZE)) break;
    merge.push(segment);
    vectors += segment.vectors;
  }
  return merge.length >= 2 ? segments.filter((segment) => merge.includes(segment)) : undefined;
}

/**
 * Seals a space's fresh vectors into a new segment: built aside from what the fresh tables hold
 * now, then swapped in, taking from the fresh tables the rows it holds. Returns the segment's
 * vectors. `conn` holds the space's build lock (one sealing at a time).
 */
export async function sealFresh(conn: Kysely<SearchDatabase>, space: SpaceRow): Promise<number> {
  const fresh = freshTables(space.ord);
  return buildAside(conn, space, 'sealing', [fresh], 'keep');
}

/** Merges segments into one new segment, built aside and swapped in for them. `conn` holds the space's merge lock. */
export async function mergeSegments(
  conn: Kysely<SearchDatabase>,
  space: SpaceRow,
  segments: Segment[],
): Promise<number> {
  return buildAside(
    conn,
    space,
    'merging',
    segments.map((segment) => segment.tables),
    'drop',
  );
}

/**
 * A segment built in the scratch tables of `work` from the rows of `sources`, then swapped in.
 * A build or swap that fails or is cancelled (search stopping, a fresh table gone) leaves no
 * half-made copy of the vectors behind for the next one to find; a scratch name something else
 * holds (not a table) is left alone.
 */
async function buildAside(
  conn: Kysely<SearchDatabase>,
  space: SpaceRow,
  work: 'sealing' | 'merging',
  sources: VectorTables[],
  afterwards: 'keep' | 'drop',
): Promise<number> {
  const scratch = scratchTables(space.ord, work);
  try {
    await buildScratch(conn, space, scratch, sources);
    return await swapIn(conn, space.ord, scratch, sources, afterwards);
  } catch (error) {
    for (const table of Object.values(scratch))
      await sql`drop table if exists ${sql.table(table)}`.execute(conn).catch(() => undefined);
    throw error;
  }
}

/** The scratch tables made again with the rows of `sources` and their indexes built. */
async function buildScratch(
  conn: Kysely<SearchDatabase>,
  space: SpaceRow,
  scratch: VectorTables,
  sources: VectorTables[],
): Promise<void> {
  for (const of of ['parts', 'items'] as const) {
    await sql`drop table if exists ${sql.table(scratch[of])}`.execute(conn);
    await createVectorTable(conn, scratch[of], space.dims, of);
    const rows = sql.join(
      sources.map((source) => sql`select * from ${sql.table(source[of])}`),
      sql` union all `,
    );
    await sql`insert into ${sql.table(scratch[of])} ${rows}`.execute(conn);
    await createAnnIndex(conn, scratch[of], { concurrently: false });
    // The planner's row counts: whether to read a segment by its index or by a scan, and its merge level.
    await sql`analyze ${sql.table(scratch[of])}`.execute(conn);
  }
}

/**
 * Swaps built scratch tables in as a new segment, in one transaction under the layout lock: rows
 * the sources lost while it was built (an item deleted or split again, an item's newer vector)
 * are taken out of it; then the sources are dropped (a merge) or lose the rows it took (a seal).
 */
async function swapIn(
  conn: Kysely<SearchDatabase>,
  ord: number,
  scratch: VectorTables,
  sources: VectorTables[],
  afterwards: 'keep' | 'drop',
): Promise<number> {
  return conn.transaction().execute(async (trx) => {
    const [main, fresh] = [vectorTables(ord), freshTables(ord)];
    // What a segment joining the main tables takes, first: waited for (a build of the main tables'
    // index holds it) before the layout lock stops searches and the projector.
    await sql`lock table ${sql.table(main.parts)}, ${sql.table(main.items)} in share update exclusive mode`.execute(
      trx,
    );
    await sql`lock table ${sql.table(fresh.parts)}, ${sql.table(fresh.items)} in access exclusive mode`.execute(trx);
    let vectors = 0;
    for (const of of ['parts', 'items'] as const) {
      const same = (source: string) =>
        sql`exists (select 1 from ${sql.table(source)} x where ${keyMatch(of)} and x.embedding = s.embedding)`;
      await sql`delete from ${sql.table(scratch[of])} s
        where not (${sql.join(
          sources.map((source) => same(source[of])),
          sql` or `,
        )})`.execute(trx);
      for (const source of sources)
        await (
          afterwards === 'keep'
            ? sql`delete from ${sql.table(source[of])} x using ${sql.table(scratch[of])} s where ${keyMatch(of)}`
            : sql`drop table ${sql.table(source[of])}`
        ).execute(trx);
      const { rows } = await sql<{ n: number }>`select count(*)::int as n from ${sql.table(scratch[of])}`.execute(trx);
      vectors += rows[0]!.n;
    }
    // Everything in it was deleted meanwhile: no segment.
    if (vectors === 0) {
      for (const table of Object.values(scratch)) await sql`drop table ${sql.table(table)}`.execute(trx);
      return 0;
    }
    const n = (await listSegments(trx, ord)).reduce((last, segment) => Math.max(last, segment.n), 0) + 1;
    const segment = segmentTables(ord, n);
    for (const of of ['parts', 'items'] as const) {
      await sql`alter table ${sql.table(scratch[of])} rename to ${sql.id(segment[of])}`.execute(trx);
      await renameAnnIndexes(trx, segment[of], `${scratch[of]}_ann`, `${segment[of]}_ann`);
      await sql`alter table ${sql.table(segment[of])} inherit ${sql.table(main[of])}`.execute(trx);
    }
    return vectors;
  });
}

/** The key of a vector row in `x` equal to that of `s`. */
function keyMatch(of: 'parts' | 'items') {
  return of === 'parts' ? sql`x.item_id = s.item_id and x.ordinal = s.ordinal` : sql`x.item_id = s.item_id`;
}
