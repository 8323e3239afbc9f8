import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { ModelsAdd, ModelsList, ModelsUse, Search } from '@memex/contracts';
import { GLOVE_SIF_SPACE } from '@memex/embeddings';
import { startWorker } from '@memex/pipelines';
import { ServiceHost } from '@memex/runtime';
import { sharedRoot, sharedSkip } from '@memex/testing';
import { createDatabase } from '@memex/db';
import { sql } from 'kysely';
import { listsFor } from './projection/vectors.js';
import { schemaDigest } from './schema-digest.js';
import { SearchHarness } from './test-support.js';

/** A real Model2Vec model, read in place from the shared folder. */
const MODEL2VEC = path.join(sharedRoot, 'models/model2vec-test-fixture');

const QUERIES = [
  'river flood',
  'meeting postponed',
  '"quarterly report"',
  'invoce',
  'from:carol',
  'stock market -bonds',
  'kind:note',
  'conference delayed',
];

describe('search lifecycle', () => {
  let h: SearchHarness;
  let worker: { stop(): Promise<void> } | undefined;
  const work = async () => {
    worker = await startWorker({ natsUrl: h.env.config.natsUrl, blobsDir: h.env.config.blobsDir, name: 'test' });
  };
  const rest = async () => {
    await worker?.stop();
    worker = undefined;
  };

  before(async () => {
    // No worker threads: the test decides when work gets done.
    h = await SearchHarness.start({ workers: 0 });
    await work();
    await h.ingest({ title: 'Flood warning', text: 'The river flooded the village after a week of rain.' });
    await h.ingest({
      title: 'Quarterly report',
      text: 'The quarterly report shows revenue up and costs flat. The invoice backlog is cleared.',
      kind: 'email',
      meta: { from: [{ name: 'Carol', address: 'carol@example.com' }] },
    });
    await h.ingest({ title: 'Markets', text: 'The stock market fell sharply today; bonds rallied.' });
    await h.ingest({ title: 'Schedule', text: 'The meeting was postponed until next week because the venue flooded.' });
    const gone = await h.ingest({ title: 'Draft', text: 'A draft that will be deleted, about the stock market.' });
    await h.note('Idea', 'Ask the council about river defences before the next flood.');
    await h.settle();
    await h.delete(gone);
    await h.settle();
  });
  after(async () => {
    await rest();
    await h.stop();
  });

  test('replaying the search projector reproduces its rows and its answers', async () => {
    const answers = async () => Promise.all(QUERIES.map((q) => h.call(Search, { q })));
    const before = await answers();
    const rowsBefore = await schemaDigest(h.env.config.databaseUrl, 'search');
    assert.ok(
      before.every((result) => result.hits.length > 0),
      'every query finds something',
    );
    const replay = await h.searchApp.get(ServiceHost).projector!.rebuild(h.env.config.databaseUrl);
    assert.ok(replay.events > 10);
    assert.deepEqual(await schemaDigest(h.env.config.databaseUrl, 'search'), rowsBefore);
    assert.deepEqual(await answers(), before);
  });

  test(
    'a new model fills in the background while search answers from the old space, then takes over',
    { skip: sharedSkip('models/model2vec-test-fixture') },
    async () => {
      await rest();
      const added = await h.call(ModelsAdd, { path: MODEL2VEC, name: 'm2v-test' });
      assert.match(added.space, /^model2vec:m2v-test@/);
      const filling = await h.call(Search, { q: 'river flood', min_seq: added.seq });
      assert.equal(filling.space, GLOVE_SIF_SPACE, 'still the old space while the new one is empty');
      const listed = await h.call(ModelsList, {});
      assert.deepEqual(
        listed.models.map((m) => [m.space, m.state, m.embedded_items]),
        [
          [GLOVE_SIF_SPACE, 'active', 5],
          [added.space, 'filling', 0],
        ],
      );
      // Replayed while the switch waits, it still waits: the bulk load counts the items it puts off counting.
      const waiting = await schemaDigest(h.env.config.databaseUrl, 'search');
      await h.searchApp.get(ServiceHost).projector!.rebuild(h.env.config.databaseUrl);
      assert.deepEqual(await schemaDigest(h.env.config.databaseUrl, 'search'), waiting);
      assert.equal((await h.call(ModelsList, {})).active, GLOVE_SIF_SPACE);
      await assert.rejects(h.call(ModelsAdd, { path: MODEL2VEC, name: 'm2v-test' }), /already registered/);
      await assert.rejects(h.call(ModelsAdd, { path: 'relative/folder' }), /must be absolute/);

      await work();
      await h.settle();
      const switched = await h.call(ModelsList, {});
      assert.equal(switched.active, added.space);
      assert.deepEqual(
        switched.models.map((m) => [m.state, m.embedded_items]),
        [
          ['ready', 5],
          ['active', 5],
        ],
      );
      const answer = await h.call(Search, { q: 'river flood', mode: 'meaning' });
      assert.equal(answer.space, added.space);
      assert.ok(answer.hits.length > 0);

      // New items go into every space; choosing a complete space switches at once.
      await h.note('Later', 'Sandbags are stacked along the river.');
      await h.settle();
      const used = await h.call(ModelsUse, { space: GLOVE_SIF_SPACE });
      assert.equal((await h.call(ModelsList, { min_seq: used.seq })).active, GLOVE_SIF_SPACE);
      assert.deepEqual(
        (await h.call(ModelsList, {})).models.map((m) => m.embedded_items),
        [6, 6],
      );
      await assert.rejects(h.call(ModelsUse, { space: 'nope@1' }), /no embedding space nope@1/);

      // A replay of all this (a space made, its switch waited for and made, another space chosen
      // back) gives the same rows: its bulk load goes one event at a time while a switch waits.
      await h.settle();
      const rows = await schemaDigest(h.env.config.databaseUrl, 'search');
      await h.searchApp.get(ServiceHost).projector!.rebuild(h.env.config.databaseUrl);
      assert.deepEqual(await schemaDigest(h.env.config.databaseUrl, 'search'), rows);
      assert.equal((await h.call(ModelsList, {})).active, GLOVE_SIF_SPACE);
    },
  );
});

describe('search replay of a log longer than a batch', () => {
  let h: SearchHarness;
  before(async () => {
    h = await SearchHarness.start();
  });
  after(async () => h.stop());

  test('builds each ANN index after the load, with lists for every row loaded', async () => {
    const words = ['harbour', 'orchard', 'glacier', 'lantern', 'meadow', 'canyon', 'violin', 'compass'];
    const items = Array.from({ length: 300 }, (_, n) => ({
      title: `Note ${n}`,
      text: `A note about the ${words[n % words.length]} and the ${words[(n * 3 + 1) % words.length]}, number ${n}.`,
    }));
    const batch = await Promise.all(
      items.map(async (item) => ({ item, sha: await h.blobs.put(Buffer.from(item.text)) })),
    );
    await h.ingestPrepared(batch);
    await h.settle();
    const db = createDatabase<unknown>(h.env.config.databaseUrl, { schema: 'search' });
    try {
      const indexes = async () => {
        const { rows } = await sql<{ name: string; lists: string }>`
          select c.relname as name, c.reloptions[1] as lists from pg_class c
          where c.relname in ('vec_0_parts_ann', 'vec_0_items_ann') order by c.relname`.execute(db);
        return rows.map((index) => `${index.name} ${index.lists}`);
      };
      const replay = await h.searchApp.get(ServiceHost).projector!.rebuild(h.env.config.databaseUrl);
      assert.ok(replay.events > 500, `${replay.events} events: more than one batch`);
      const { rows: counts } = await sql<{ parts: number; items: number }>`
        select (select count(*)::int from only vec_0_parts) as parts, (select count(*)::int from only vec_0_items) as items`.execute(
        db,
      );
      // At this size every table has one list, as the first batch's would (`listsFor` differs only
      // past 14,400 rows): what tells them apart is not tested here.
      assert.deepEqual(await indexes(), [
        `vec_0_items_ann lists=${listsFor(counts[0]!.items)}`,
        `vec_0_parts_ann lists=${listsFor(counts[0]!.parts)}`,
      ]);
      assert.equal(counts[0]!.items, 300);
    } finally {
      await db.destroy();
    }
  });
});
