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
