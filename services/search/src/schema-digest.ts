import { sql } from 'kysely';
import { createDatabase } from '@memex/db';

/**
 * A digest of every row of every table of a schema, and of its indexes (what a replay must
 * reproduce exactly; a rebuild drops some indexes for its bulk load and must build each again).
 */
export async function schemaDigest(databaseUrl: string, schema: string): Promise<Record<string, string>> {
  const db = createDatabase<unknown>(databaseUrl, { schema, max: 1 });
  try {
    const { rows: tables } = await sql<{ name: string }>`select table_name as name from information_schema.tables
      where table_schema = ${schema} and table_name <> 'schema_migrations' order by 1`.execute(db);
    const out: Record<string, string> = {};
    for (const { name } of tables) {
      const { rows } = await sql<{
        md5: string;
        n: number;
      }>`select md5(coalesce(string_agg(t::text, E'\n' order by t::text), '')) as md5, count(*)::int as n
        from ${sql.table(name)} t`.execute(db);
      out[name] = `${rows[0]!.n}:${rows[0]!.md5}`;
    }
    const { rows: indexes } = await sql<{ defs: string[] }>`
      select coalesce(array_agg(indexdef order by indexname), '{}') as defs from pg_indexes where schemaname = ${schema}`.execute(
      db,
    );
    out['(indexes)'] = indexes[0]!.defs.map((def) => def.replaceAll(`${schema}.`, '')).join('\n');
    return out;
  } finally {
    await db.destroy();
  }
}
