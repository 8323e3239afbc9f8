import pg from 'pg';

/** Every row of every table of a schema (bookkeeping aside), sorted: for row-for-row comparisons. */
export async function snapshotSchema(databaseUrl: string, schema: string): Promise<Record<string, unknown[]>> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const tables = await client.query<{ table_name: string }>(
      `select table_name from information_schema.tables where table_schema = $1 and table_name not in ('schema_migrations') order by 1`,
      [schema],
    );
    const snapshot: Record<string, unknown[]> = {};
    for (const { table_name } of tables.rows) {
      const rows = await client.query(`select * from "${schema}"."${table_name}"`);
      // Search's fresh vectors (vec_<n>_*_fresh) are its graph tables' rows not yet moved into the
      // HNSW graph: where a vector waits is timing, not content, so they count as the graph table's.
      const name = /^vec_\d+_(parts|items)_fresh$/.test(table_name) ? table_name.replace(/_fresh$/, '') : table_name;
      snapshot[name] = [...(snapshot[name] ?? []), ...rows.rows.map((row) => JSON.stringify(row))].sort();
    }
    return snapshot;
  } finally {
    await client.end();
  }
}
