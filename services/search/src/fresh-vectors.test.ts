import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import { EmbeddingComputed, encodeVector, Search, Similar, TriggerRemoved } from '@memex/contracts';
import { newId } from '@memex/bus';
import { serviceHealth, startService } from '@memex/runtime';
import { createDatabase } from '@memex/db';
import { waitUntil } from '@memex/testing';
import { FreshVectorMover } from './projection/fresh-vector-mover.js';
import { nearestRows, type Arm } from './queries/nearest.js';
import { LEVEL_SIZE, listSegments, mergeSegments, sealFresh, segmentsToMerge } from './projection/segments.js';
import {
  allSpaces,
  cheaperToRebuild,
  createAnnIndex,
  createVectorIndexes,
  createVectorTable,
  dropAnnIndexes,
  ensureAnnIndexes,
  freshCap,
  freshCount,
  moveFresh,
  onOneCore,
  outgrown,
  REBUILD_BELOW,
  rebuildIndexes,
  shardOf,
  withSpaceLock,
} from './projection/vectors.js';
import type { SearchDatabase } from './schema.js';
import { schemaDigest } from './schema-digest.js';
import { SearchModule } from './search.module.js';
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
  /** Rows of an item in the built-in space's indexed tables and fresh tables. */
  const where = async (id: string) => {
    const { rows } = await sql<{ indexed: number; fresh: number }>`select
        (select count(*) from vec_0_parts where item_id = ${id}) + (select count(*) from vec_0_items where item_id = ${id}) as indexed,
        (select count(*) from vec_0_parts_fresh where item_id = ${id}) + (select count(*) from vec_0_items_fresh where item_id = ${id}) as fresh`.execute(
      db,
    );
    return { indexed: Number(rows[0]!.indexed), fresh: Number(rows[0]!.fresh) };
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

  /** The ANN indexes' identities (a rebuild makes new ones), null for one missing or not valid. */
  const indexes = async () => {
    const { rows } = await sql<{ parts: number | null; items: number | null }>`select
        (select indexrelid::int from pg_index where indexrelid = to_regclass('vec_0_parts_ann') and indisvalid) as parts,
        (select indexrelid::int from pg_index where indexrelid = to_regclass('vec_0_items_ann') and indisvalid) as items`.execute(
      db,
    );
    return rows[0]!;
  };

  /** Waits until both ANN indexes are valid (a rebuild builds them after it emptied the fresh tables). */
  const built = async (what: string) => {
    for (const deadline = Date.now() + 30_000; ; await new Promise((resolve) => setTimeout(resolve, 200))) {
      const now = await indexes();
      if (now.parts !== null && now.items !== null) return now;
      assert.ok(Date.now() < deadline, what);
    }
  };

  /** The event of an item's vectors computed again (as a pipelines worker killed before its ack sends it), from where they are kept. */
  const embeddedAgain = async (id: string) => {
    const { rows } = await sql<{ ordinal: number | null; embedding: string }>`
      select ordinal, embedding::text from (select * from vec_0_parts union all select * from vec_0_parts_fresh) p where item_id = ${id}
      union all select null, embedding::text from (select * from vec_0_items union all select * from vec_0_items_fresh) i
      where item_id = ${id}`.execute(db);
    const vector = (text: string) => encodeVector(Float32Array.from(JSON.parse(text) as number[]));
    const item = await sql<{ revision: number; pipeline: string; space: string; dims: number }>`
      select i.parts_revision::int as revision, i.parts_pipeline as pipeline, s.space, s.dims
      from items i, spaces s where i.id = ${id} and s.ord = 0`.execute(db);
    const { revision, pipeline, space, dims } = item.rows[0]!;
    const passages = rows.filter((row) => row.ordinal !== null);
    return {
      subject: `item:${id}`,
      actor: { kind: 'pipeline' as const, id: 'test' },
      data: {
        item_id: id,
        revision,
        pipeline,
        space,
        dims,
        total: passages.length,
        piece: 0,
        pieces: 1,
        item: vector(rows.find((row) => row.ordinal === null)!.embedding),
        vectors: passages.map((row) => ({ ordinal: row.ordinal!, vector: vector(row.embedding) })),
      },
    };
  };
  /** Asserts that an item's passage vector and item vector are each kept once, in whichever table (segments too). */
  const storedOnce = async (id: string) => {
    const { rows } = await sql<{ parts: number; items: number }>`select
        (select count(*)::int from vec_0_parts where item_id = ${id})
          + (select count(*)::int from vec_0_parts_fresh where item_id = ${id}) as parts,
        (select count(*)::int from vec_0_items where item_id = ${id})
          + (select count(*)::int from vec_0_items_fresh where item_id = ${id}) as items`.execute(db);
    assert.deepEqual(rows[0], { parts: 1, items: 1 }, `each vector of ${id} once`);
  };

  before(async () => {
    h = await SearchHarness.start();
    mover = h.searchApp.get(FreshVectorMover);
    db = createDatabase<unknown>(h.env.config.databaseUrl, { schema: 'search', max: 1 });
    // The first vectors make the space, and go straight into its indexed tables.
    const first = await h.ingest({ title: STORIES[0]![0], text: STORIES[0]![1] });
    await h.settle();
    assert.deepEqual(await where(first), { indexed: 2, fresh: 0 });
  });
  after(async () => {
    await db.destroy();
    await h.stop();
  });

  test('a live vector is found by meaning and by similar while it waits, and the same once it is indexed', async () => {
    await mover.onApplicationShutdown();
    const ids = [];
    for (const [title, text] of STORIES.slice(1)) ids.push(await h.ingest({ title, text }));
    await h.settle();
    const [sandbags] = ids;
    assert.deepEqual(await where(sandbags!), { indexed: 0, fresh: 2 }, 'a passage vector and an item vector wait');

    const answers = async () => ({
      meaning: (await h.call(Search, { q: 'sandbags along the river', mode: 'meaning' })).hits.map((hit) => hit.id),
      similar: (await h.call(Similar, { id: sandbags! })).hits.map((hit) => hit.id),
    });
    const waiting = await answers();
    assert.equal(waiting.meaning[0], sandbags, 'the fresh passage is the nearest');
    assert.equal(waiting.similar.length, STORIES.length - 1, 'similar reads its own fresh vector and every other');

    const before = await indexes();
    mover.onApplicationBootstrap();
    await drained();
    assert.deepEqual(await where(sandbags!), { indexed: 2, fresh: 0 });
    // Ten fresh vectors beside an index over two: the indexes are built again over all of them.
    const rebuilt = await built('the ANN indexes are back and valid');
    assert.notEqual(rebuilt.parts, before.parts, 'the passages index was built again');
    assert.deepEqual(await answers(), waiting);
  });

  test('a few fresh vectors beside larger main tables are inserted into them, the index kept', async () => {
    await mover.onApplicationShutdown();
    const id = await h.ingest({ title: 'Meteor', text: 'A meteor crossed the night sky over the orchard.' });
    await h.settle();
    assert.deepEqual(await where(id), { indexed: 0, fresh: 2 });
    const before = await indexes();
    mover.onApplicationBootstrap();
    await drained();
    assert.deepEqual(await where(id), { indexed: 2, fresh: 0 });
    assert.deepEqual(await indexes(), before, 'two fresh vectors beside an index over fourteen: no rebuild');
  });

  test('fresh vectors wait while the memex logs events (an import’s tail), and are indexed once it is quiet', async () => {
    await mover.onApplicationShutdown();
    const id = await h.ingest({ title: 'Eclipse', text: 'The moon hid the sun and the birds fell silent at noon.' });
    await h.settle();
    mover.onApplicationBootstrap();
    // Events the search projector has nothing to do with, as another service's work during an import.
    for (const busyUntil = Date.now() + 4_000; Date.now() < busyUntil;) {
      const trigger = newId();
      await h.publisher.publish(TriggerRemoved, {
        subject: `trigger:${trigger}`,
        actor: { kind: 'user', id: 'owner' },
        data: { id: trigger },
      });
      await new Promise((resolve) => setTimeout(resolve, 200));
      assert.deepEqual(await where(id), { indexed: 0, fresh: 2 }, 'no vector came, but the log grows: not idle');
    }
    await drained();
    assert.deepEqual(await where(id), { indexed: 2, fresh: 0 });
  });

  test('an ANN index a crash left missing or unfinished is built again, and search reads the table meanwhile', async () => {
    await mover.onApplicationShutdown();
    // As a crash between a rebuild's drop and its build leaves it, and as a cancelled concurrent build does.
    await sql`drop index vec_0_parts_ann`.execute(db);
    await sql`update pg_index set indisvalid = false where indexrelid = to_regclass('vec_0_items_ann')`.execute(db);
    const meaning = await h.call(Search, { q: 'sandbags along the river', mode: 'meaning' });
    assert.equal(meaning.hits[0]?.title, 'Sandbags', 'without its index the main table is read by exact scan');
    mover.onApplicationBootstrap();
    await built('the mover builds both indexes again');
    assert.deepEqual(await h.call(Search, { q: 'sandbags along the river', mode: 'meaning' }), meaning);
  });

  /** Seals the built-in space's fresh vectors into a segment, as the mover does during an import. */
  const seal = async () => {
    const space = (await allSpaces(db as never))[0]!;
    await withSpaceLock(db as never, 0, 'indexes', async (conn) => void (await sealFresh(conn, space)));
  };
  /** Merges all of the built-in space's segments into one, as the mover does once it is idle. */
  const mergeAll = async () => {
    const space = (await allSpaces(db as never))[0]!;
    await withSpaceLock(db as never, 0, 'merges', async (conn) => {
      const segments = await listSegments(conn, 0);
      if (segments.length > 1) await mergeSegments(conn, space, segments);
    });
  };

  for (const [how, move] of [
    ['inserted a few at a time', () => moveFresh(db, 0, 3)],
    [
      'moved by rebuilding the indexes',
      () => withSpaceLock(db as never, 0, 'indexes', (conn) => rebuildIndexes(conn, 0)),
    ],
    ['sealed into segments and merged', async () => (await seal(), await mergeAll())],
  ] as const)
    test(`an item deleted while its vectors are being ${how} leaves no vector behind`, async () => {
      await mover.onApplicationShutdown();
      const ids: string[] = [];
      for (let round = 0; round < 5; round++)
        for (const [title, text] of STORIES) ids.push(await h.ingest({ title: `${title} ${how} ${round}`, text }));
      await h.settle();
      assert.ok((await freshLeft()) >= ids.length * 2);
      // While the projector applies the deletions.
      const deleted = ids.filter((_, i) => i % 2 === 0);
      let deleting = true;
      const moving = (async () => {
        while (deleting || (await freshLeft()) > 0) {
          await move();
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
      for (const id of deleted) assert.deepEqual(await where(id), { indexed: 0, fresh: 0 }, `deleted ${id}`);
      for (const id of ids.filter((_, i) => i % 2 === 1)) assert.deepEqual(await where(id), { indexed: 2, fresh: 0 });
      const built = await indexes();
      assert.ok(built.parts !== null && built.items !== null);
      mover.onApplicationBootstrap();
    });

  test('vectors stored again while the mover moves them end up in one table, never both', async () => {
    await mover.onApplicationShutdown();
    const id = await h.ingest({ title: 'Fjord', text: 'Glaciers calved huge icebergs into the frozen fjord.' });
    await h.settle();
    assert.deepEqual(await where(id), { indexed: 0, fresh: 2 });
    // The item's vectors embedded again, as a pipelines worker killed before its ack does.
    const again = await embeddedAgain(id);
    // A move in flight: the fresh rows deleted and put into the main table, not committed yet.
    let commit!: () => void;
    const committed = new Promise<void>((resolve) => (commit = resolve));
    const moving = db.transaction().execute(async (trx) => {
      assert.equal(await moveFresh(trx, 0, 100), 2);
      await committed;
    });
    await h.publisher.publish(EmbeddingComputed, again);
    // The projector meets the rows the move holds, and waits for it.
    await new Promise((resolve) => setTimeout(resolve, 500));
    commit();
    await moving;
    await h.settle();
    await storedOnce(id);
    mover.onApplicationBootstrap();
    await drained();
  });

  test('vectors sealed into segments and merged are found the same, kept once, and digest as in one table', async () => {
    await mover.onApplicationShutdown();
    const digest = () => schemaDigest(h.env.config.databaseUrl, 'search');
    const found = async (id: string) => ({
      meaning: (await h.call(Search, { q: 'comet passed close to the sun', mode: 'meaning' })).hits.map(
        (hit) => hit.id,
      ),
      similar: (await h.call(Similar, { id })).hits.map((hit) => hit.id),
    });
    const ids: string[] = [];
    const earlier = (await listSegments(db as never, 0)).length;
    for (const round of [1, 2]) {
      for (const [title, text] of STORIES) ids.push(await h.ingest({ title: `${title} sealed ${round}`, text }));
      await h.settle();
      const rows = await digest();
      const before = await found(ids.at(-1)!);
      await seal();
      assert.equal(await freshLeft(), 0, 'the seal takes every fresh vector');
      assert.deepEqual(await digest(), rows, 'sealing moves vectors, the read model is the same');
      assert.deepEqual(await found(ids.at(-1)!), before, 'and search finds the same');
    }
    assert.equal((await listSegments(db as never, 0)).length, earlier + 2);
    const { rows: segmentIndexes } = await sql<{ n: number }>`select count(*)::int as n from pg_index
      where indisvalid and indexrelid::regclass::text ~ '^vec_0_(parts|items)_seg[0-9]+_ann$'`.execute(db);
    assert.equal(segmentIndexes[0]!.n, 2 * (earlier + 2), 'each segment table comes with its index built');

    // Stored again while kept in a segment: still once.
    const comet = ids.at(-1)!;
    await h.publisher.publish(EmbeddingComputed, await embeddedAgain(comet));
    await h.settle();
    await storedOnce(comet);

    const rows = await digest();
    const before = await found(comet);
    await mergeAll();
    assert.equal((await listSegments(db as never, 0)).length, 1, 'the segments merged into one');
    assert.deepEqual(await digest(), rows);
    assert.deepEqual(await found(comet), before);
    for (const id of ids) await storedOnce(id);
    // The comet's item vector came again: its last is kept, fresh until the mover moves it.
    for (const id of ids.filter((id) => id !== comet)) assert.deepEqual(await where(id), { indexed: 2, fresh: 0 });
    mover.onApplicationBootstrap();
  });

  test('tables whose ANN index is in shards are read shard by shard, side by side, finding the same; a set left short is built again whole', async () => {
    await mover.onApplicationShutdown();
    const id = await h.ingest({ title: 'Orchard in shards', text: 'Apples ripened in the orchard by the river.' });
    await h.settle();
    await seal();
    const segments = (await listSegments(db as never, 0)).flatMap((segment) => Object.values(segment.tables));
    const tables = ['vec_0_parts', 'vec_0_items', ...segments];
    assert.ok(segments.length >= 2, 'main tables and segments');
    const reindex = (shards: number) =>
      db.connection().execute(async (conn) => {
        for (const table of tables) {
          await dropAnnIndexes(conn, table, { concurrently: false });
          await createAnnIndex(conn, table, { concurrently: false, shards });
        }
      });
    const found = async () => ({
      meaning: (await h.call(Search, { q: 'apples by the river', mode: 'meaning' })).hits.map((hit) => [
        hit.id,
        hit.score,
      ]),
      similar: (await h.call(Similar, { id })).hits.map((hit) => [hit.id, hit.score]),
    });
    const indexesOf = async (table: string) => {
      const { rows } = await sql<{
        name: string;
        partial: boolean;
      }>`select c.relname as name, i.indpred is not null as partial
        from pg_index i join pg_class c on c.oid = i.indexrelid
        where i.indrelid = to_regclass(${table}) and i.indisvalid and not i.indisprimary order by c.relname`.execute(
        db,
      );
      return rows.map((row) => `${row.name}${row.partial ? ' (shard)' : ''}`);
    };
    /** Connections search reads further shards on (see nearestRows). */
    const followers = async () => {
      const { rows } = await sql<{ n: number }>`select count(*)::int as n from pg_stat_activity
        where datname = current_database() and application_name = 'memex-search-shards'`.execute(db);
      return rows[0]!.n;
    };
    try {
      const before = await found();
      const digest = await schemaDigest(h.env.config.databaseUrl, 'search');
      assert.ok(before.meaning.some(([hit]) => hit === id));
      assert.ok(before.similar.length > 0);
      await reindex(2);
      // Shards follow the rows a table held when its index was built, as lists do: not digested.
      assert.deepEqual(await schemaDigest(h.env.config.databaseUrl, 'search'), digest);
      assert.deepEqual(await indexesOf('vec_0_parts'), ['vec_0_parts_ann (shard)', 'vec_0_parts_ann_s1 (shard)']);
      assert.equal(await followers(), 0, 'one connection reads a table in one shard');
      // Tables this small are read whole, shard by shard as by one index: the same hits, the same scores.
      assert.deepEqual(await found(), before);
      assert.ok((await followers()) > 0, 'the second shards read on connections of their own');
      // A whole set of shards is kept; one left short (a crash between two shards' builds) is built
      // again whole, in the shards its rows call for (one, at this size).
      await sql`drop index vec_0_parts_ann_s1`.execute(db);
      await db.connection().execute((conn) => ensureAnnIndexes(conn, 0));
      assert.deepEqual(await indexesOf('vec_0_parts'), ['vec_0_parts_ann']);
      assert.deepEqual(await indexesOf('vec_0_items'), ['vec_0_items_ann (shard)', 'vec_0_items_ann_s1 (shard)']);
      assert.deepEqual(await found(), before);
    } finally {
      await reindex(1);
      mover.onApplicationBootstrap();
    }
  });

  test('every shard is read in the snapshot the query took first: a vector moved out of the fresh table meanwhile is read once', async () => {
    await mover.onApplicationShutdown();
    const url = h.env.config.databaseUrl;
    const leader = createDatabase<SearchDatabase>(url, { schema: 'search', max: 1 });
    // The second shard's connection is held back once reserved, until the vector has moved.
    let reserved!: () => void;
    const reading = new Promise<void>((resolve) => (reserved = resolve));
    let release!: () => void;
    const moved = new Promise<void>((resolve) => (release = resolve));
    const followers = new Kysely<SearchDatabase>({
      dialect: new PostgresDialect({
        pool: new pg.Pool({ connectionString: url, max: 1, options: '-c search_path=search,public' }),
        onReserveConnection: async () => {
          reserved();
          await moved;
        },
      }),
    });
    const reindexMain = (shards: number) =>
      db.connection().execute(async (conn) => {
        for (const table of ['vec_0_parts', 'vec_0_items']) {
          await dropAnnIndexes(conn, table, { concurrently: false });
          await createAnnIndex(conn, table, { concurrently: false, shards });
        }
      });
    try {
      // An item whose vectors belong to the second shard once moved: read by the follower, not the leader.
      let id: string;
      do {
        id = await h.ingest({ title: 'Comet in transit', text: 'The comet crossed the sky before dawn.' });
        await h.settle();
      } while (
        !(await sql<{ second: boolean }>`select ${shardOf(sql.val(id), 1, 2)} as second`.execute(db)).rows[0]!.second
      );
      assert.deepEqual(await where(id), { indexed: 0, fresh: 2 });
      await reindexMain(2);
      const arm: Arm = (table, { shard }) =>
        sql`(select v.item_id from ${table} v where v.item_id = ${id} ${shard ? sql`and ${shard}` : sql``})`;
      const reads = nearestRows(
        leader,
        followers,
        0,
        'items',
        arm,
        (arms) => sql<{ item_id: string }>`${sql.join(arms, sql` union all `)}`,
      );
      // The leader has read the layout and exported its snapshot; the follower waits for a connection.
      // (A query that ends, or fails, without reading a second shard fails here rather than hangs.)
      await Promise.race([
        reading,
        reads.then(() => assert.fail('the query ended without reading the second shard on a connection of its own')),
      ]);
      assert.ok((await moveFresh(db, 0, 1_000)) >= 2);
      assert.deepEqual(await where(id), { indexed: 2, fresh: 0 });
      release();
      // Read in the fresh table by the leader, not again in the second shard by the follower,
      // which would see it there in a snapshot of its own.
      assert.deepEqual(
        (await reads).map((row) => row.item_id),
        [id],
      );
    } finally {
      release();
      await followers.destroy();
      await leader.destroy();
      await reindexMain(1);
      mover.onApplicationBootstrap();
    }
  });

  test('main tables are indexed again over fresh vectors only while it is small', async () => {
    // Row counts are all the rule reads: a space's indexed tables stand in, unindexed.
    await sql`create table vec_99_parts (n int); create table vec_99_items (n int)`.execute(db);
    try {
      const fill = (rows: number) => sql`insert into vec_99_parts select generate_series(1, ${rows})`.execute(db);
      await fill(REBUILD_BELOW / 2);
      assert.equal(await cheaperToRebuild(db, 99, 1_000), false, 'a few beside many are inserted');
      assert.equal(await cheaperToRebuild(db, 99, 50_000), true, 'many beside small main tables: built again over all');
      await fill(REBUILD_BELOW / 2);
      assert.equal(
        await cheaperToRebuild(db, 99, 50_000),
        false,
        'large main tables are not built again, however many wait',
      );
    } finally {
      await sql`drop table vec_99_parts, vec_99_items`.execute(db);
    }
  });

  test('an ANN index its table has outgrown is built again beside it, with lists for its rows', async () => {
    const lists = async () => {
      const { rows } = await sql<{ name: string; options: string[] }>`select c.relname as name, c.reloptions as options
        from pg_index i join pg_class c on c.oid = i.indexrelid
        where i.indrelid = 'vec_98_parts'::regclass and i.indisvalid and not i.indisprimary`.execute(db);
      return rows.map((row) => `${row.name} ${row.options.join(',')}`);
    };
    await createVectorTable(db, 'vec_98_parts', 3, 'parts');
    await createVectorTable(db, 'vec_98_items', 3, 'items');
    try {
      const fill = (from: number, to: number) =>
        sql`insert into vec_98_parts
        select 'item' || n, 0, array[sin(n), cos(n), sin(n * 7)]::halfvec(3) from generate_series(${from}::int, ${to}::int) n`.execute(
          db,
        );
      await fill(1, 1_000);
      await createVectorIndexes(db, 98);
      // Read whole by every query (32 lists at most, 120 probes): one list, no k-means.
      assert.deepEqual(await lists(), ['vec_98_parts_ann lists=1']);
      // Grown fourteen times over, but read whole by every query all the same: kept.
      await fill(1_001, 14_000);
      await sql`analyze vec_98_parts`.execute(db);
      assert.equal(outgrown(1, 14_000), false);
      await db.connection().execute((conn) => ensureAnnIndexes(conn, 98));
      assert.deepEqual(await lists(), ['vec_98_parts_ann lists=1']);
      // Past what a query reads whole: built again, with lists for its rows.
      await fill(14_001, 20_000);
      await sql`analyze vec_98_parts`.execute(db);
      assert.equal(outgrown(1, 20_000), true);
      await db.connection().execute((conn) => ensureAnnIndexes(conn, 98));
      assert.deepEqual(await lists(), ['vec_98_parts_ann lists=141']);
      const { rows } = await sql<{ distance: number }>`select embedding <=> q as distance
        from vec_98_parts, (select array[sin(20000), cos(20000), sin(140000)]::halfvec(3) as q) q
        order by embedding <=> q limit 1`.execute(db);
      assert.ok(rows[0]!.distance < 1e-3, `the rebuilt index finds a vector the query's own (${rows[0]!.distance})`);
    } finally {
      await sql`drop table vec_98_parts, vec_98_items`.execute(db);
    }
  });

  test('segments are merged by size level while vectors arrive, the small ones into one once quiet', () => {
    const segments = (...sizes: number[]) =>
      sizes.map((vectors, n) => ({ n, tables: { parts: `p${n}`, items: `i${n}` }, vectors }));
    const merged = (found: ReturnType<typeof segments> | undefined) => found?.map((segment) => segment.n);
    assert.equal(
      segmentsToMerge(segments(LEVEL_SIZE, LEVEL_SIZE, LEVEL_SIZE), false),
      undefined,
      'three of a level wait',
    );
    assert.deepEqual(
      merged(segmentsToMerge(segments(LEVEL_SIZE * 4, LEVEL_SIZE, LEVEL_SIZE, LEVEL_SIZE, LEVEL_SIZE), false)),
      [1, 2, 3, 4],
    );
    assert.deepEqual(
      merged(
        segmentsToMerge(segments(LEVEL_SIZE * 4, LEVEL_SIZE * 5, LEVEL_SIZE * 6, LEVEL_SIZE * 7, LEVEL_SIZE), false),
      ),
      [0, 1, 2, 3],
      'four of the next level up',
    );
    assert.deepEqual(
      merged(segmentsToMerge(segments(LEVEL_SIZE * 4, LEVEL_SIZE * 2, LEVEL_SIZE), true)),
      [0, 1, 2],
      'quiet: each joins while it holds at most four times those smaller',
    );
    assert.equal(
      segmentsToMerge(segments(LEVEL_SIZE * 100, LEVEL_SIZE), true),
      undefined,
      'a large segment is not built again for a few new vectors',
    );
    assert.deepEqual(
      merged(segmentsToMerge(segments(LEVEL_SIZE * 100, 300, LEVEL_SIZE * 20, 200, LEVEL_SIZE * 3), true)),
      [1, 3, 4],
      'the small ones merge beside it, the next larger waits until they hold a quarter of it',
    );
    assert.equal(segmentsToMerge(segments(LEVEL_SIZE), true), undefined, 'one is merged already');
  });

  test('a build while the memex is busy runs on one core, and the connection is given back as it was', async () => {
    await db.connection().execute(async (conn) => {
      const workers = async () =>
        (await sql<{ n: string }>`select current_setting('max_parallel_maintenance_workers') as n`.execute(conn))
          .rows[0]!.n;
      const before = await workers();
      assert.notEqual(before, '0', "Postgres' default gives builds parallel workers");
      await onOneCore(conn, async () => assert.equal(await workers(), '0'));
      await assert.rejects(
        onOneCore(conn, () => Promise.reject(new Error('build cancelled'))),
        /build cancelled/,
      );
      assert.equal(await workers(), before);
    });
  });

  test('an index build under way when search stops is cancelled, not waited for, and done at the next start', async () => {
    await mover.onApplicationShutdown();
    await sql`drop index vec_0_parts_ann`.execute(db);
    // Another session holds the passages table: the build waits on it, as a long build would run.
    const blocker = createDatabase<unknown>(h.env.config.databaseUrl, { schema: 'search', max: 1 });
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const holding = blocker.transaction().execute(async (trx) => {
      await sql`lock table vec_0_parts in share update exclusive mode`.execute(trx);
      await released;
    });
    try {
      mover.onApplicationBootstrap();
      for (const deadline = Date.now() + 15_000; ; await new Promise((resolve) => setTimeout(resolve, 100))) {
        const { rows } = await sql<{ n: number }>`select count(*)::int as n from pg_stat_activity
          where query ~* '^\\s*create index concurrently' and wait_event_type = 'Lock'`.execute(db);
        if (rows[0]!.n > 0) break;
        assert.ok(Date.now() < deadline, 'the mover starts building the missing index');
      }
      const started = Date.now();
      const stoppedIn = await Promise.race([
        mover.onApplicationShutdown().then(() => Date.now() - started),
        new Promise<number>((resolve) => setTimeout(() => resolve(Infinity), 5_000)),
      ]);
      assert.ok(stoppedIn < 5_000, `stopped in ${stoppedIn} ms, with the table still held`);
      assert.equal((await indexes()).parts, null, 'the build did not finish');
    } finally {
      release();
      await holding;
      await blocker.destroy();
    }
    mover.onApplicationBootstrap();
    await built('the next start builds the index');
  });

  test('a merge under way when search stops is cancelled and leaves no half-made segment behind', async () => {
    await mover.onApplicationShutdown();
    for (const round of [1, 2]) {
      for (const [title, text] of STORIES.slice(0, 2)) await h.ingest({ title: `${title} halted ${round}`, text });
      await h.settle();
      await seal();
    }
    const [first] = await listSegments(db as never, 0);
    const scratch = async () =>
      (
        await sql<{
          parts: string | null;
          items: string | null;
        }>`select to_regclass('vec_0_parts_merging')::text as parts,
          to_regclass('vec_0_items_merging')::text as items`.execute(db)
      ).rows[0];
    // Another session holds a segment: the merge waits to read it, as a long merge would run.
    const blocker = createDatabase<unknown>(h.env.config.databaseUrl, { schema: 'search', max: 1 });
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const holding = blocker.transaction().execute(async (trx) => {
      await sql`lock table ${sql.table(first!.tables.parts)} in access exclusive mode`.execute(trx);
      await released;
    });
    try {
      mover.onApplicationBootstrap();
      for (const deadline = Date.now() + 15_000; ; await new Promise((resolve) => setTimeout(resolve, 100))) {
        const { rows } = await sql<{ n: number }>`select count(*)::int as n from pg_stat_activity
          where datname = current_database() and query ~* '^\\s*insert into "vec_0_parts_merging"' and wait_event_type = 'Lock'`.execute(
          db,
        );
        if (rows[0]!.n > 0) break;
        assert.ok(Date.now() < deadline, 'the mover starts merging the two segments');
      }
      assert.equal((await scratch())?.parts, 'vec_0_parts_merging', 'the merge has made its scratch table');
      await mover.onApplicationShutdown();
      assert.deepEqual(
        await scratch(),
        { parts: null, items: null },
        'the cancelled merge took its scratch tables away',
      );
    } finally {
      release();
      await holding;
      await blocker.destroy();
    }
    mover.onApplicationBootstrap();
  });

  test('a mover that cannot move or merge says so in the service health until it can again', async () => {
    const problems = async () => (await serviceHealth(h.bus, 'search', { timeoutMs: 10_000 })).problems ?? [];
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
          /^fresh vectors have not been moved into the ANN index since .*vec_0_items_fresh/.test(problem),
        ),
      );
    } finally {
      await sql`alter table vec_0_items_fresh_away rename to vec_0_items_fresh`.execute(db);
    }
    await until('the report clears after a look that succeeds', (found) => found.length === 0);

    // A merge that cannot build its segment (its scratch name taken by a view) is reported too.
    await mover.onApplicationShutdown();
    for (const round of [1, 2]) {
      for (const [title, text] of STORIES.slice(0, 2)) await h.ingest({ title: `${title} unmerged ${round}`, text });
      await h.settle();
      await seal();
    }
    await sql`create view vec_0_parts_merging as select 1 as taken`.execute(db);
    try {
      mover.onApplicationBootstrap();
      await until('the merge failure is reported', (found) =>
        found.some((problem) => /^vector segments have not been merged since .*vec_0_parts_merging/.test(problem)),
      );
    } finally {
      await sql`drop view vec_0_parts_merging`.execute(db);
    }
    await until('the report clears after a merge that succeeds', (found) => found.length === 0);
    assert.equal((await listSegments(db as never, 0)).length, 1, 'the idle space merged its segments');
  });

  test('past freshCap waiting vectors the projector writes new ones into the indexed tables itself', async () => {
    await mover.onApplicationShutdown();
    try {
      // Fresh vectors of no item up to the cap (as a stopped mover would leave them), counted by ANALYZE.
      const { dims } = (await allSpaces(db as never))[0]!;
      await sql`insert into vec_0_parts_fresh (item_id, ordinal, embedding)
        select 'filler-' || n, 0, array_fill(0.1::real, array[${dims}::int])::halfvec
        from generate_series(1, ${freshCap(dims)}) n`.execute(db);
      await sql`analyze vec_0_parts_fresh`.execute(db);
      assert.ok(
        (await freshCount(db as never, 0, 10)) >= freshCap(dims),
        'so many are not counted row by row (up to 10 of each here) but by Postgres',
      );
      const id = await h.ingest({
        title: 'Lighthouse',
        text: 'The lighthouse keeper lit the lamp as fog rolled over the harbour.',
      });
      await h.settle();
      assert.deepEqual(await where(id), { indexed: 2, fresh: 0 }, 'straight into the indexed tables');
      await storedOnce(id);
      const { hits } = await h.call(Search, { q: 'lighthouse keeper in the fog', mode: 'meaning' });
      assert.equal(hits[0]?.id, id);
      // Moved away by a connection that works on (as the mover's does, building an index): its
      // counts reach Postgres' running count only once it is idle. Counted, none left is none.
      const working = createDatabase<unknown>(h.env.config.databaseUrl, { schema: 'search', max: 1 });
      try {
        const deleting = sql
          .raw(`begin; delete from vec_0_parts_fresh where item_id like 'filler-%'; commit; select pg_sleep(3)`)
          .execute(working);
        try {
          await waitUntil(
            async () =>
              (await sql`select 1 from vec_0_parts_fresh where item_id like 'filler-%' limit 1`.execute(db)).rows
                .length === 0,
            'the filler rows deleted',
          );
          const { rows } = await sql<{
            n: number;
          }>`select pg_stat_get_live_tuples('vec_0_parts_fresh'::regclass)::int as n`.execute(db);
          assert.ok(rows[0]!.n >= freshCap(dims), 'the running count still has them');
          assert.ok((await freshCount(db as never, 0, 10)) < 10, 'none left is none, not the running count');
        } finally {
          await deleting;
        }
      } finally {
        await working.destroy();
      }
    } finally {
      await sql`delete from vec_0_parts_fresh where item_id like 'filler-%'`.execute(db);
      await sql`analyze vec_0_parts_fresh`.execute(db);
      mover.onApplicationBootstrap();
    }
  });

  test('a second replica leaves a space to the mover holding it, and two movers keep every vector once', async () => {
    const other = await startService((config) => SearchModule.register(config), h.env.config);
    const otherMover = other.get(FreshVectorMover);
    try {
      // This replica holds the space's indexes, as while it builds them; the other's mover looks meanwhile.
      await mover.onApplicationShutdown();
      let release!: () => void;
      const released = new Promise<void>((resolve) => (release = resolve));
      let holding!: Promise<boolean>;
      // Its own connection: the test's one stays free to look.
      const holder = createDatabase<unknown>(h.env.config.databaseUrl, { schema: 'search', max: 1 });
      await new Promise<void>((entered) => {
        holding = withSpaceLock(holder as never, 0, 'indexes', async () => (entered(), await released));
      });
      const ids: string[] = [];
      try {
        for (const [title, text] of STORIES) ids.push(await h.ingest({ title: `${title} replicated`, text }));
        await h.settle();
        // The other mover looks every second: three looks, each finding the space held.
        await new Promise((resolve) => setTimeout(resolve, 3_000));
        for (const id of ids) assert.deepEqual(await where(id), { indexed: 0, fresh: 2 }, 'left for the holder');
      } finally {
        release();
        await holding;
        await holder.destroy();
      }
      assert.equal(await holding, true, 'the lock was held all along');
      await drained();
      await built('the other replica built the indexes once the space was free');

      // Both movers at once, while vectors keep coming: each vector kept once, indexed.
      mover.onApplicationBootstrap();
      for (const round of [1, 2, 3]) {
        for (const [title, text] of STORIES) ids.push(await h.ingest({ title: `${title} both ${round}`, text }));
        await new Promise((resolve) => setTimeout(resolve, 700));
      }
      await h.settle();
      await drained();
      await built('the indexes are valid after both movers');
      for (const id of ids) {
        await storedOnce(id);
        assert.deepEqual(await where(id), { indexed: 2, fresh: 0 });
      }
      assert.deepEqual(await otherMover.healthProblems(), [], 'a space held by the other replica is no failure');
      assert.deepEqual(await mover.healthProblems(), []);
      const { hits } = await h.call(Search, { q: 'comet passed close to the sun', mode: 'meaning' });
      assert.match(hits[0]!.title, /^Comet/);
    } finally {
      await other.close();
    }
  });
});
