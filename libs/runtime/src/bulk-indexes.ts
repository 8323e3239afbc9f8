import { sql } from 'kysely';
import type { BookkeepingDb } from './bookkeeping.js';

/** Memory for building the indexes back (pgvector builds an HNSW graph in memory when it fits). */
const BUILD_MEMORY = '512MB';

/** Connections the indexes are built and the statistics gathered on, side by side (a rebuild has two). */
const CONNECTIONS = 2;

interface DroppedIndex {
  name: string;
  table: string;
  definition: string;
}

/**
 * The index policy of a bulk load (a rebuild's catch-up into `<schema>_next`): secondary
 * indexes that are costly to maintain row by row — HNSW, GIN, GiST and every other non-B-tree
 * one — are dropped before the load and built once after it, which is far faster (pgvector
 * builds an HNSW graph in bulk at a fraction of the cost of inserting vector by vector, GIN
 * sorts its entries once). What stays: unique indexes and those behind constraints (ON CONFLICT
 * and the constraints need them), B-tree indexes, which projectors look rows up by while they
 * apply (a graph's edges by entity) and which cost little to keep up — but for those a projector
 * names in `dropIndexes` because only queries read them — and the indexes a projector names in
 * `keepIndexes` (a lookup by trigram similarity would scan without its GIN).
 */
export class BulkIndexes {
  private readonly dropped = new Map<string, DroppedIndex>();

  constructor(
    private readonly db: BookkeepingDb,
    private readonly schema: string,
    /** Indexes the projection reads while it applies (`ProjectorOptions.keepIndexes`). */
    private readonly keep: readonly string[] = [],
    /** B-tree indexes only queries read (`ProjectorOptions.dropIndexes`). */
    private readonly alsoDrop: readonly string[] = [],
  ) {}

  /**
   * Drops the schema's costly secondary indexes not dropped yet. Called again after each batch:
   * a projector may create tables with their indexes while it applies (search's vector tables).
   */
  async drop(): Promise<void> {
    const { rows } = await sql<DroppedIndex>`
      select c.relname as name, i.indrelid::regclass::text as "table", pg_get_indexdef(i.indexrelid) as definition
      from pg_index i
        join pg_class c on c.oid = i.indexrelid
        join pg_namespace n on n.oid = c.relnamespace
        join pg_am am on am.oid = c.relam
      where n.nspname = ${this.schema} and (am.amname <> 'btree' or c.relname = any(${[...this.alsoDrop]}::text[]))
        and not i.indisunique and not i.indisprimary
        and not exists (select 1 from pg_constraint k where k.conindid = i.indexrelid)
        and c.relname <> all(${[...this.keep]}::text[])`.execute(this.db);
    for (const index of rows) {
      await sql`drop index ${sql.id(this.schema, index.name)}`.execute(this.db);
      this.dropped.set(index.name, index);
    }
  }

  /**
   * Builds every dropped index again (those of tables the load dropped meanwhile excepted, and
   * those the projection built itself after its load: search's IVFFlat indexes, whose lists
   * depend on the rows loaded, not on those their definition saw) and gathers the planner's
   * statistics of the loaded tables, which a fresh schema has none of.
   */
  async restore(): Promise<void> {
    const waiting = [...this.dropped.values()];
    // Two builds at once, each on a connection of its own (GIN builds take no parallel workers).
    const builder = () =>
      this.db.transaction().execute(async (trx) => {
        await sql`set local maintenance_work_mem = ${sql.lit(BUILD_MEMORY)}`.execute(trx);
        // Parallel workers for the builds that take them (pgvector's HNSW, B-tree) however small the
        // table: Postgres plans none below 8 MB, and a rebuild's HNSW graphs are its longest step.
        await sql`set local min_parallel_table_scan_size = 0`.execute(trx);
        for (let index = waiting.shift(); index; index = waiting.shift()) {
          const { rows } = await sql<{ wanted: boolean }>`select to_regclass(${index.table}) is not null
              and to_regclass(${`${this.schema}.${index.name}`}) is null as wanted`.execute(trx);
          if (rows[0]!.wanted) await sql.raw(index.definition).execute(trx);
        }
      });
    await Promise.all(Array.from({ length: CONNECTIONS }, builder));
    this.dropped.clear();
    const { rows: tables } = await sql<{ name: string }>`
      select tablename as name from pg_tables where schemaname = ${this.schema}`.execute(this.db);
    // The statistics of half the tables on each connection.
    await Promise.all(
      Array.from({ length: CONNECTIONS }, async (_, n) => {
        const share = tables.filter((_, i) => i % CONNECTIONS === n);
        if (share.length > 0)
          await sql`analyze ${sql.join(share.map(({ name }) => sql.id(this.schema, name)))}`.execute(this.db);
      }),
    );
  }
}
