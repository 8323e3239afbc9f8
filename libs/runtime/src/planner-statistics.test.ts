import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { sql, type Kysely } from 'kysely';
import pg from 'pg';
import { createDatabase } from '@memex/db';
import { createTestEnv, type TestEnv } from '@memex/testing';
import { bookkeepingOf } from './bookkeeping.js';
import { PlannerStatistics } from './planner-statistics.js';

let env: TestEnv;
let db: Kysely<unknown>;
before(async () => {
  env = await createTestEnv();
  db = createDatabase(env.config.databaseUrl, { schema: 'stats_probe' });
  await sql`create schema stats_probe`.execute(db);
  // As a projection's lookup table: read by a secondary key, a batch's keys at once.
  // Autovacuum off: it would analyze the table at a moment of its own between the steps below.
  await sql`create table stats_probe.evidence (id bigint primary key, via text not null, quote text not null)
    with (autovacuum_enabled = false)`.execute(db);
  await sql`create index evidence_via on stats_probe.evidence (via)`.execute(db);
});
after(async () => {
  await db.destroy();
  await env.stop();
});

const add = (from: number, to: number) =>
  sql`insert into stats_probe.evidence select n, 'item' || n, repeat('quoted words ', 4)
    from generate_series(${from}, ${to} - 1) n`.execute(db);
const pagesSeen = async () =>
  (
    await sql<{
      pages: number;
    }>`select relpages as pages from pg_class where oid = 'stats_probe.evidence'::regclass`.execute(db)
  ).rows[0]!.pages;
/** The rows the last analyze counted in a table of the schema (-1: never analyzed). */
const tuplesSeen = async (table: string) =>
  (
    await sql<{ tuples: number }>`select reltuples as tuples from pg_class
      where oid = to_regclass(${`stats_probe.${table}`})`.execute(db)
  ).rows[0]!.tuples;

/** The rows the planner expects a lookup of 20 keys (20 rows) to find. */
const estimate = async () => {
  const { rows } = await sql<{ 'QUERY PLAN': string }>`explain select id from stats_probe.evidence
    where via = any(${Array.from({ length: 20 }, (_, i) => `item${i * 997}`)}::text[])`.execute(db);
  return Number(/rows=(\d+)/.exec(rows[0]!['QUERY PLAN'])![1]);
};

test('a table that has grown from nothing is analyzed after a batch, and again only once it has doubled', async () => {
  const statistics = new PlannerStatistics(bookkeepingOf(db), 'stats_probe');
  await add(0, 40_000);
  // Never analyzed: the planner guesses from the table's size alone, far from the 20 rows.
  assert.ok((await estimate()) > 1000, `expected ${await estimate()} rows before`);
  assert.equal(await pagesSeen(), 0);

  await statistics.refresh();
  const first = await pagesSeen();
  assert.ok(first > 100, `analyzed over its ${first} pages`);
  assert.ok((await estimate()) <= 40, `expected ${await estimate()} rows after`);

  // Grown by half: not yet.
  await add(40_000, 60_000);
  await sleep(1100);
  await statistics.refresh();
  assert.equal(await pagesSeen(), first);

  // Past double (with a margin, whatever the rows' widths), but looked at less than a second
  // ago: not yet; a second later, analyzed.
  await add(60_000, 90_000);
  await statistics.refresh();
  assert.equal(await pagesSeen(), first);
  await sleep(1100);
  await statistics.refresh();
  assert.ok((await pagesSeen()) >= 2 * first, 'analyzed again over the doubled table');
});

test('a table another transaction holds is left for the next look, not waited for', async () => {
  await sql`create table stats_probe.held (id int primary key, words text not null) with (autovacuum_enabled = false)`.execute(
    db,
  );
  await sql`insert into stats_probe.held select n, repeat('word ', 20) from generate_series(1, 20000) n`.execute(db);
  const holder = new pg.Client({ connectionString: env.config.databaseUrl });
  await holder.connect();
  try {
    await holder.query('begin');
    await holder.query('lock table stats_probe.held in share mode');
    const statistics = new PlannerStatistics(bookkeepingOf(db), 'stats_probe');
    const started = performance.now();
    await statistics.refresh();
    assert.ok(performance.now() - started < 2000, 'not waited for');
    assert.equal(await tuplesSeen('held'), -1);
    await holder.query('commit');
    await sleep(1100);
    await statistics.refresh();
    assert.equal(await tuplesSeen('held'), 20000);
  } finally {
    await holder.end();
  }
});

test('a table too small for a plan to matter is left to autovacuum', async () => {
  await sql`create table stats_probe.few (id int primary key) with (autovacuum_enabled = false)`.execute(db);
  await sql`insert into stats_probe.few select generate_series(1, 100)`.execute(db);
  await new PlannerStatistics(bookkeepingOf(db), 'stats_probe').refresh();
  assert.equal(await tuplesSeen('few'), -1);
});
