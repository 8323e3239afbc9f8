import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { createTestEnv, type TestEnv } from '@memex/testing';
import { createDatabase } from './database.js';
import { migrate, type Migration } from './migrations.js';

let env: TestEnv;
before(async () => {
  env = await createTestEnv();
});
after(async () => env.stop());

test('a database resolves names in its schema, runs each migration once, and plans without JIT', async () => {
  const db = createDatabase<{ things: { name: string } }>(env.config.databaseUrl, { schema: 'things' });
  try {
    let runs = 0;
    const migrations: Migration[] = [
      {
        name: '001_things',
        async up(trx) {
          runs++;
          await trx.schema.createTable('things').addColumn('name', 'text').execute();
        },
      },
    ];
    assert.deepEqual(await migrate(db, 'things', migrations), ['001_things']);
    assert.deepEqual(await migrate(db, 'things', migrations), [], 'a migration applied before is not run again');
    assert.equal(runs, 1);
    await db.insertInto('things').values({ name: 'kettle' }).execute();
    const { rows } = await sql<{ schema: string; jit: string }>`
      select (select table_schema from information_schema.tables where table_name = 'things') as schema,
             current_setting('jit') as jit`.execute(db);
    assert.deepEqual(rows[0], { schema: 'things', jit: 'off' });
    assert.throws(() => createDatabase(env.config.databaseUrl, { schema: 'no; drop' }), /schema/);
  } finally {
    await db.destroy();
  }
});

test('a database sets the settings it is given on every connection, and refuses one it cannot pass as given', async () => {
  const db = createDatabase(env.config.databaseUrl, {
    schema: 'things',
    max: 2,
    settings: { max_parallel_workers_per_gather: '0', work_mem: '32MB' },
  });
  try {
    // Two connections at once: each was opened with the settings.
    const read = () =>
      db.transaction().execute(async (trx) => {
        const { rows } = await sql<{ workers: string; memory: string }>`select
          current_setting('max_parallel_workers_per_gather') as workers, current_setting('work_mem') as memory,
          pg_sleep(0.05)`.execute(trx);
        return rows[0];
      });
    const [first, second] = await Promise.all([read(), read()]);
    assert.deepEqual({ workers: first!.workers, memory: first!.memory }, { workers: '0', memory: '32MB' });
    assert.deepEqual({ workers: second!.workers, memory: second!.memory }, { workers: '0', memory: '32MB' });
  } finally {
    await db.destroy();
  }
  const refused: Record<string, string>[] = [
    { 'work_mem -c jit': 'on' },
    { work_mem: '32MB -c jit=on' },
    { work_mem: '' },
  ];
  for (const settings of refused)
    assert.throws(() => createDatabase(env.config.databaseUrl, { schema: 'things', settings }), /invalid setting/);
});
