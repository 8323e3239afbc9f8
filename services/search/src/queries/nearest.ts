import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { SearchDatabase } from '../schema.js';
import { vectorLayout } from '../projection/segments.js';
import { PROBES, shardOf } from '../projection/vectors.js';

/**
 * One table's part of a nearest-vector query: its rows aliased `v`, read by their ANN index,
 * `fresh` (the fresh table, read by an exact scan) or `shard` (a condition on `v.item_id` that
 * picks one shard's index).
 */
export type Arm = (
  table: RawBuilder<unknown>,
  options: { fresh: boolean; shard?: RawBuilder<boolean> },
) => RawBuilder<unknown>;

/**
 * The nearest vectors of a space's passages or items, across every table that holds them (see
 * `vectorLayout`): `arm` reads one table, `combine` makes one statement of several arms (their
 * union, ordered and limited). A table whose index is in shards is read shard by shard, side by
 * side: the first shard of every table (and the fresh one) on `db`'s connection, each further
 * shard on a connection of `followers` (its own pool, so a query holding a connection never waits
 * for one a query like it holds), every one in the snapshot the first took after the layout lock
 * (`pg_export_snapshot`): a vector moved between tables meanwhile is read once, never missed.
 * Returns the rows of every statement: each statement's best, for the caller to merge.
 */
export async function nearestRows<R>(
  db: Kysely<SearchDatabase>,
  followers: Kysely<SearchDatabase>,
  ord: number,
  of: 'parts' | 'items',
  arm: Arm,
  combine: (arms: RawBuilder<unknown>[]) => RawBuilder<R>,
): Promise<R[]> {
  return db
    .transaction()
    .setIsolationLevel('repeatable read')
    .execute(async (trx) => {
      const layout = await vectorLayout(trx, ord);
      const statements: RawBuilder<unknown>[][] = [[arm(sql.table(layout.fresh[of]), { fresh: true })]];
      for (const { [of]: table } of layout.indexed) {
        for (let shard = 0; shard < table.shards; shard++) {
          const condition = table.shards > 1 ? shardOf(sql.ref('v.item_id'), shard, table.shards) : undefined;
          (statements[shard] ??= []).push(
            arm(table.from, { fresh: false, ...(condition ? { shard: condition } : {}) }),
          );
        }
      }
      await tuneIndex(trx);
      const [own, ...others] = statements.map(combine);
      if (others.length === 0) return (await own!.execute(trx)).rows;
      const { rows } = await sql<{ snapshot: string }>`select pg_export_snapshot() as snapshot`.execute(trx);
      const results = await Promise.all([
        own!.execute(trx),
        ...others.map((statement) =>
          followers
            .transaction()
            .setIsolationLevel('repeatable read')
            .execute(async (follower) => {
              await sql`set transaction snapshot ${sql.lit(rows[0]!.snapshot)}`.execute(follower);
              await tuneIndex(follower);
              return statement.execute(follower);
            }),
        ),
      ]);
      return results.flatMap((result) => result.rows);
    });
}

/**
 * Settings for one transaction of nearest-vector queries: the lists pgvector reads (`PROBES`),
 * and more of them past rows a filter rejects; no memoize node over the items joined to the
 * nearest passages. The planner expects the index scan to return every row of the table, so it
 * sized a memoize cache for a million items, whose set-up and tear-down took 5 ms of a meaning
 * query at 10^6 passages for the 300 lookups it served.
 */
async function tuneIndex(trx: Kysely<SearchDatabase>): Promise<void> {
  await sql`select set_config('ivfflat.probes', ${String(PROBES)}, true), set_config('ivfflat.iterative_scan', 'relaxed_order', true),
    set_config('enable_memoize', 'off', true)`.execute(trx);
}
