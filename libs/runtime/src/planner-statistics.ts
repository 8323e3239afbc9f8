import { sql } from 'kysely';
import type { BookkeepingDb } from './bookkeeping.js';

/** A table is analyzed again once it has this many times the pages its statistics were taken over. */
const GROWTH = 2;
/** Below this many pages (256 kB) a table is small enough that any plan over it is cheap. */
const MIN_PAGES = 32;
/** `default_statistics_target` of these analyzes (Postgres samples 300 rows per unit). */
const SAMPLE_TARGET = 10;
/** How long an analyze waits for a table another transaction holds before leaving it for the next look. */
const LOCK_WAIT_MS = 100;
/** Postgres' errors for a table held by another transaction past `lock_timeout`, and for one dropped meanwhile. */
const LEFT_FOR_LATER = new Set(['55P03', '42P01']);
/** How often a projector looks for grown tables, at most. */
const EVERY_MS = 1000;

/**
 * Keeps the planner's statistics of a projected schema in step with its tables while they grow.
 *
 * Autovacuum analyzes a table a minute or more after it has changed by a tenth, and never a
 * rebuild's `_next` schema, which lives for seconds. Until then the planner takes a table that
 * has grown from nothing to tens of thousands of rows for the few it had, and reads it whole
 * where an index would find a row: in a graph rebuild, the lookup of an item's earlier readings
 * scanned every evidence row (17 ms a batch), and during an import the refresh of a person's
 * names every name row, once per person (65 ms a batch). After a batch, at most every second,
 * the tables that have at least doubled since their statistics were taken are analyzed: work
 * that grows with the table's logarithm, not its rows.
 */
export class PlannerStatistics {
  private lastLook = Number.NEGATIVE_INFINITY;
  private looking?: Promise<void>;

  constructor(
    private readonly db: BookkeepingDb,
    private readonly schema: string,
  ) {}

  /** Analyzes the schema's tables that have grown (see the class); never fails the caller. */
  async refresh(): Promise<void> {
    if (this.looking || performance.now() - this.lastLook < EVERY_MS) return this.looking;
    this.lastLook = performance.now();
    this.looking = this.analyzeGrown()
      .catch((error: unknown) => console.warn(`planner statistics of ${this.schema}: ${String(error)}`))
      .finally(() => (this.looking = undefined));
    return this.looking;
  }

  private async analyzeGrown(): Promise<void> {
    // Pages now (the file's size, exact and cheap) against those the last analyze or vacuum saw.
    const { rows } = await sql<{ name: string }>`
      select c.relname as name from pg_class c join pg_namespace n on n.oid = c.relnamespace
      where n.nspname = ${this.schema} and c.relkind = 'r'
        and pg_relation_size(c.oid) / current_setting('block_size')::int >= greatest(${GROWTH} * c.relpages, ${MIN_PAGES})`.execute(
      this.db,
    );
    if (rows.length === 0) return;
    await this.db.connection().execute(async (conn) => {
      // A sample of 3,000 rows, not 30,000: row counts and rough distributions are what these
      // plans lack, and sampling costs (analyzing a search rebuild's tables at its end takes half
      // a second, most of it the passages' words). Autovacuum takes the full statistics later.
      await sql`select set_config('default_statistics_target', ${String(SAMPLE_TARGET)}, false),
        set_config('lock_timeout', ${`${LOCK_WAIT_MS}ms`}, false)`.execute(conn);
      try {
        // Each table in a transaction of its own (no lock held while waiting for another), given
        // up if another transaction holds it (an index build, a segment swapped in) or dropped
        // it: the next look takes what is still there.
        for (const { name } of rows)
          await sql`analyze ${sql.id(this.schema, name)}`.execute(conn).catch((error: unknown) => {
            if (!LEFT_FOR_LATER.has((error as { code?: string }).code ?? '')) throw error;
          });
      } finally {
        await sql`reset default_statistics_target`.execute(conn);
        await sql`reset lock_timeout`.execute(conn);
      }
    });
  }
}
