import { sql, type Kysely } from 'kysely';

/** One step of a read model's schema. Use unqualified names: they land in the target schema. */
export interface Migration {
  name: string;
  /** Schema statements only: the tables it builds are not typed yet. */
  up(db: Kysely<unknown>): Promise<void>;
}

/**
 * A database seen without its table types, for schema statements. Kysely's types are invariant in
 * the schema, so a service's `Kysely<ServiceDb>` is converted here, in one place, not cast at
 * every caller.
 */
export function schemaOnly<DB>(db: Kysely<DB>): Kysely<unknown> {
  return db as unknown as Kysely<unknown>;
}

/**
 * Creates the schema if needed and applies the migrations not yet applied, each in its own
 * transaction, under an advisory lock so replicas starting together don't race.
 */
export async function migrate<DB>(db: Kysely<DB>, schema: string, migrations: Migration[]): Promise<string[]> {
  const applied: string[] = [];
  await db.connection().execute(async (conn) => {
    await sql`select pg_advisory_lock(hashtext(${'migrate:' + schema}))`.execute(conn);
    try {
      await sql`create schema if not exists ${sql.id(schema)}`.execute(conn);
      await sql`create table if not exists ${sql.id(schema, 'schema_migrations')} (
        name text primary key, applied_at timestamptz not null default now())`.execute(conn);
      const done = await sql<{ name: string }>`select name from ${sql.id(schema, 'schema_migrations')}`.execute(conn);
      const doneNames = new Set(done.rows.map((row) => row.name));
      for (const migration of migrations) {
        if (doneNames.has(migration.name)) continue;
        await conn.transaction().execute(async (trx) => {
          await sql`set local search_path to ${sql.id(schema)}, public`.execute(trx);
          await migration.up(schemaOnly(trx));
          await sql`insert into ${sql.id(schema, 'schema_migrations')} (name) values (${migration.name})`.execute(trx);
        });
        applied.push(migration.name);
      }
    } finally {
      await sql`select pg_advisory_unlock(hashtext(${'migrate:' + schema}))`.execute(conn);
    }
  });
  return applied;
}
