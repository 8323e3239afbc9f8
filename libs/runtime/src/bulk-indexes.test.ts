import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { sql, type Kysely } from 'kysely';
import { createDatabase } from '@memex/db';
import { createTestEnv, type TestEnv } from '@memex/testing';
import { bookkeepingOf, type BookkeepingTables } from './bookkeeping.js';
import { BulkIndexes } from './bulk-indexes.js';

let env: TestEnv;
let db: Kysely<BookkeepingTables>;
before(async () => {
  env = await createTestEnv();
  db = createDatabase(env.config.databaseUrl, { schema: 'bulk_probe' });
  await sql`create schema bulk_probe`.execute(db);
});
after(async () => {
  await db.destroy();
  await env.stop();
});

const indexes = async (): Promise<string[]> =>
  (
    await sql<{
      def: string;
    }>`select indexdef as def from pg_indexes where schemaname = 'bulk_probe' order by indexname`.execute(db)
  ).rows.map((row) => row.def);

test('a bulk load drops the costly secondary indexes, the B-trees only queries read, those of tables made meanwhile too, and builds them all again', async () => {
  await sql`create table docs (id text primary key, title text not null, tags text[] not null, at int)`.execute(db);
  await sql`create index docs_at on docs (at)`.execute(db);
  await sql`create index docs_recent on docs (at desc, id)`.execute(db);
  await sql`create unique index docs_title_unique on docs (title) where at is null`.execute(db);
  await sql`create index docs_tags on docs using gin (tags)`.execute(db);
  await sql`create index docs_title_trgm on docs using gin (lower(title) gin_trgm_ops) where at > 0`.execute(db);
  await sql`create index docs_title_lookup on docs using gin (title gin_trgm_ops)`.execute(db);
  const before = await indexes();

  const bulk = new BulkIndexes(bookkeepingOf(db), 'bulk_probe', ['docs_title_lookup'], ['docs_recent']);
  await bulk.drop();
  const kept = (await indexes()).map((def) => /INDEX (\w+)/.exec(def)![1]);
  assert.deepEqual(kept, ['docs_at', 'docs_pkey', 'docs_title_lookup', 'docs_title_unique']);

  // A table the projection makes while it loads (as search makes a space's vector tables).
  await sql`create table later (id text primary key, tags text[] not null)`.execute(db);
  await sql`create index later_tags on later using gin (tags)`.execute(db);
  await sql`create table gone (tags text[] not null)`.execute(db);
  await sql`create index gone_tags on gone using gin (tags)`.execute(db);
  await bulk.drop();
  assert.ok(!(await indexes()).some((def) => def.includes('later_tags') || def.includes('gone_tags')));
  await sql`drop table gone`.execute(db);

  await sql`insert into docs values ('a', 'Flood warning', '{rain}', 1), ('b', 'Report', '{}', null)`.execute(db);
  await bulk.restore();
  const after = await indexes();
  assert.deepEqual(
    after.filter((def) => !def.includes('bulk_probe.later ')),
    before,
  );
  assert.ok(after.some((def) => def.includes('later_tags')));
  // The planner has statistics for the loaded tables.
  const { rows } = await sql<{
    n: number;
  }>`select count(*)::int as n from pg_stats where schemaname = 'bulk_probe' and tablename = 'docs'`.execute(db);
  assert.ok(rows[0]!.n > 0);
});
