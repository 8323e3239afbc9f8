import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { OWNER_SCOPE, Search, Similar } from '@memex/contracts';
import { callRpc } from '@memex/bus';
import type { ServiceHealth } from '@memex/runtime';
import { createDatabase } from '@memex/db';
import { FreshVectorMover } from './projection/fresh-vector-mover.js';
import { moveFresh } from './projection/vectors.js';
import { SearchHarness } from './test-support.js';

const STORIES: Array<[title: string, text: string]> = [
  ['Flood warning', 'The river flooded the village after a week of heavy rain.'],
  ['Sandbags', 'Volunteers stacked sandbags along the swollen river banks overnight.'],
  ['Orchard', 'The apple trees in the orchard blossomed early this spring.'],
  ['Harvest', 'Pickers gathered the ripe apples and pears before the frost.'],
  ['Telescope', 'Through the telescope we watched the rings of Saturn and two of its moons.'],
  ['Comet', 'Astronomers tracked the comet as it passed close to the sun.'],
];

describe('fresh vectors', () => {
  let h: SearchHarness;
  let mover: FreshVectorMover;
  let db: ReturnType<typeof createDatabase<unknown>>;
  /** Rows of an item in the built-in space's graph tables and fresh tables. */
  const where = async (id: string) => {
    const { rows } = await sql<{ graph: number; fresh: number }>`select
        (select count(*) from vec_0_parts where item_id = ${id}) + (select count(*) from vec_0_items where item_id = ${id}) as graph,
        (select count(*) from vec_0_parts_fresh where item_id = ${id}) + (select count(*) from vec_0_items_fresh where item_id = ${id}) as fresh`.execute(
      db,
    );
    return { graph: Number(rows[0]!.graph), fresh: Number(rows[0]!.fresh) };
  };
  const freshLeft = async () => {
    const { rows } = await sql<{ n: string }>`select
      (select count(*) from vec_0_parts_fresh) + (select count(*) from vec_0_items_fresh) as n`.execute(db);
    return Number(rows[0]!.n);
  };
  const drained = async () => {
    for (const deadline = Date.now() + 30_000; (await freshLeft()) > 0;) {
      assert.ok(Date.now() < deadline, 'the mover empties the fresh tables once the projector is idle');
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  };

  before(async () => {
    h = await SearchHarness.start();
    mover = h.searchApp.get(FreshVectorMover);
    db = createDatabase<unknown>(h.env.config.databaseUrl, { schema: 'search', max: 1 });
    // The first vectors make the space, and go straight into its graph tables.
    const first = await h.ingest({ title: STORIES[0]![0], text: STORIES[0]![1] });
    await h.settle();
    assert.deepEqual(await where(first), { graph: 2, fresh: 0 });
  });
  after(async () => {
    await db.destroy();
    await h.stop();
  });

  test('a live vector is found by meaning and by similar while it waits, and the same once it is in the graph', async () => {
    await mover.onApplicationShutdown();
    const ids = [];
    for (const [title, text] of STORIES.slice(1)) ids.push(await h.ingest({ title, text }));
    await h.settle();
    const [sandbags] = ids;
    assert.deepEqual(await where(sandbags!), { graph: 0, fresh: 2 }, 'a passage vector and an item vector wait');

    const answers = async () => ({
      meaning: (await h.call(Search, { q: 'sandbags along the river', mode: 'meaning' })).hits.map((hit) => hit.id),
      similar: (await h.call(Similar, { id: sandbags! })).hits.map((hit) => hit.id),
    });
    const waiting = await answers();
    assert.equal(waiting.meaning[0], sandbags, 'the fresh passage is the nearest');
    assert.equal(waiting.similar.length, STORIES.length - 1, 'similar reads its own fresh vector and every other');

    mover.onApplicationBootstrap();
    await drained();
    assert.deepEqual(await where(sandbags!), { graph: 2, fresh: 0 });
    assert.deepEqual(await answers(), waiting);
  });

  test('an item deleted while its vectors are being moved leaves no vector behind', async () => {
    await mover.onApplicationShutdown();
    const ids: string[] = [];
    for (let round = 0; round < 5; round++)
      for (const [title, text] of STORIES) ids.push(await h.ingest({ title: `${title} ${round}`, text }));
    await h.settle();
    assert.ok((await freshLeft()) >= ids.length * 2);
    // A few vectors at a time, while the projector applies the deletions.
    const deleted = ids.filter((_, i) => i % 2 === 0);
    let deleting = true;
    const moving = (async () => {
      while (deleting || (await freshLeft()) > 0) {
        await moveFresh(db, 0, 3);
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    })();
    try {
      for (const id of deleted) await h.delete(id);
      await h.settle();
    } finally {
      deleting = false;
      await moving;
    }
    for (const id of deleted) assert.deepEqual(await where(id), { graph: 0, fresh: 0 }, `deleted ${id}`);
    for (const id of ids.filter((_, i) => i % 2 === 1)) assert.deepEqual(await where(id), { graph: 2, fresh: 0 });
    mover.onApplicationBootstrap();
  });

  test('a mover that cannot move says so in the service health until it can again', async () => {
    const problems = async () =>
      (
        await callRpc<ServiceHealth>(
          h.bus,
          'memex.rpc.search.health',
          { method: 'health', params: {}, scope: OWNER_SCOPE, caller: { kind: 'user', id: 'owner' } },
          10_000,
        )
      ).problems ?? [];
    const until = async (what: string, done: (found: string[]) => boolean) => {
      for (const deadline = Date.now() + 15_000; !done(await problems());) {
        assert.ok(Date.now() < deadline, what);
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    };
    await sql`alter table vec_0_items_fresh rename to vec_0_items_fresh_away`.execute(db);
    try {
      await until('the failure is reported', (found) =>
        found.some((problem) =>
          /^fresh vectors have not been moved into the HNSW graph since .*vec_0_items_fresh/.test(problem),
        ),
      );
    } finally {
      await sql`alter table vec_0_items_fresh_away rename to vec_0_items_fresh`.execute(db);
    }
    await until('the report clears after a look that succeeds', (found) => found.length === 0);
  });
});
