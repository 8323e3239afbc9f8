import { sql } from 'kysely';
import { createDatabase } from '@memex/db';
import { isSegmentTable } from './projection/segments.js';

const FRESH = '_fresh';
/** A further shard's ANN index (`vec_0_parts_ann_s1`), and the condition a shard's index holds its rows by. */
const SHARD_INDEX = /^CREATE INDEX \S+_ann_s\d+ /;
const SHARD_CONDITION = / WHERE \(\(\(hashtext\(item_id\) & 2147483647\) % \d+\) = \d+\)$/;

/**
 * A digest of every row of every table of a schema, and of its indexes (what a replay must
 * reproduce exactly; a rebuild drops some indexes for its bulk load and must build each again).
 * A space's fresh vectors are digested with its indexed table's (see `freshTables`), and so are
 * its segments' (see segments.ts, as rows of the main table), without their indexes. An ANN
 * index's lists and shards are those of the rows its table held when it was built (see
 * `listsFor`, `shardsFor`), which is where the rows waited, not what they are: not digested (a
 * table's ANN index is digested as one index over all its rows).
 */
export async function schemaDigest(databaseUrl: string, schema: string): Promise<Record<string, string>> {
  const db = createDatabase<unknown>(databaseUrl, { schema, max: 1 });
  try {
    const { rows: tables } = await sql<{ name: string }>`select table_name as name from information_schema.tables
      where table_schema = ${schema} and table_name <> 'schema_migrations' order by 1`.execute(db);
    const names = new Set(tables.map((t) => t.name));
    const out: Record<string, string> = {};
    for (const { name } of tables) {
      if (isSegmentTable(name)) continue;
      // Fresh vectors count as rows of their indexed table: where a vector waits is not what a replay must reproduce.
      if (name.endsWith(FRESH) && names.has(name.slice(0, -FRESH.length))) continue;
      const rowsOf = names.has(`${name}${FRESH}`)
        ? sql`(select * from ${sql.table(name)} union all select * from ${sql.table(`${name}${FRESH}`)})`
        : sql.table(name);
      const { rows } = await sql<{
        md5: string;
        n: number;
      }>`select md5(coalesce(string_agg(t::text, E'\n' order by t::text), '')) as md5, count(*)::int as n
        from ${rowsOf} t`.execute(db);
      out[name] = `${rows[0]!.n}:${rows[0]!.md5}`;
    }
    const { rows: indexes } = await sql<{ table: string; def: string }>`
      select tablename as table, indexdef as def from pg_indexes where schemaname = ${schema} order by indexname`.execute(
      db,
    );
    out['(indexes)'] = indexes
      .filter((index) => !isSegmentTable(index.table) && !SHARD_INDEX.test(index.def))
      .map((index) =>
        index.def
          .replaceAll(`${schema}.`, '')
          .replace(/lists='?\d+'?/, 'lists=…')
          .replace(SHARD_CONDITION, ''),
      )
      .join('\n');
    return out;
  } finally {
    await db.destroy();
  }
}
