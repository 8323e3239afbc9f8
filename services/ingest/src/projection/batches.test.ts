import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { sql, type Kysely } from 'kysely';
import { Ingest } from '@memex/contracts';
import { createDatabase } from '@memex/db';
import { DATABASE, HandlerProjection, ProjectionRunner, ServiceHost, type BookkeepingDb } from '@memex/runtime';
import { seededRandom } from '@memex/testing';
import { generateMessages } from '../testing/archive.js';
import { b64, startIngest, type IngestHarness } from '../testing/service.js';
import { ItemsProjector } from './items.projector.js';
import { joinStagedThreads } from './threads.js';
import type { IngestDatabase } from './schema.js';

/** The rows threading and the mail views keep, in a fixed order. */
async function threadRows(url: string) {
  const db = createDatabase<IngestDatabase>(url, { schema: 'ingest' });
  try {
    return {
      threads: await db.selectFrom('thread_ids').selectAll().orderBy('id').execute(),
      messages: await db.selectFrom('messages').selectAll().orderBy('item_id').execute(),
      items: await db.selectFrom('items').select(['id', 'seq']).orderBy('id').execute(),
    };
  } finally {
    await db.destroy();
  }
}

describe('ingest projector batches', () => {
  let h: IngestHarness;
  before(async () => {
    h = await startIngest();
  });
  after(async () => h?.stop());

  test('threads joined a run at a time, or after a bulk load in lanes (replies before their parents, threads merged by a late message), equal message by message', async () => {
    const random = seededRandom(5);
    // Shuffled, so replies often come first: their parents are ghosts, and a late message joins threads.
    const messages = [...generateMessages({ messages: 150, seed: 5 })]
      .map((message) => ({ message, order: random() }))
      .sort((a, b) => a.order - b.order)
      .map(({ message }) => message);
    let seq = 0;
    for (let i = 0; i < messages.length; i += 25) {
      const answer = await h.call(Ingest, {
        items: messages.slice(i, i + 25).map((m, j) => ({
          type: 'message/rfc822',
          data: b64(m.bytes),
          source: { kind: 'mbox', id: 'batches' },
          external_id: `m${i + j}`,
        })),
      });
      seq = answer.seq;
    }
    const runner = h.app.get(ServiceHost).projector!;
    await runner.waitFor(seq, 120_000);
    const live = await threadRows(h.env.config.databaseUrl);
    assert.equal(live.messages.length, messages.length);
    const threads = new Set(live.messages.map((m) => m.thread_key));
    assert.ok(threads.size < messages.length * 0.9, `${threads.size} threads of ${messages.length} messages`);

    // A rebuild as the service runs it: its bulk load in two lanes by item, threads joined after it.
    await runner.rebuild(h.env.config.databaseUrl);
    assert.deepEqual(await threadRows(h.env.config.databaseUrl), live);

    // One lane, a message at a time and in runs of any length: the threads staged all the same.
    const handlers = HandlerProjection.of(h.app.get(ItemsProjector));
    const afterBulkLoad = (db: BookkeepingDb) => handlers.afterBulkLoad(db);
    const oneByOne = new ProjectionRunner(h.bus, h.env.config.databaseUrl, h.app.get(DATABASE), runner.options, {
      apply: (trx, logged) => handlers.apply(trx, logged),
      afterBulkLoad,
    });
    await oneByOne.rebuild(h.env.config.databaseUrl);
    assert.deepEqual(await threadRows(h.env.config.databaseUrl), live);

    const cut = seededRandom(9);
    const chunked = new ProjectionRunner(h.bus, h.env.config.databaseUrl, h.app.get(DATABASE), runner.options, {
      apply: (trx, logged) => handlers.apply(trx, logged),
      // The staged messages joined a few at a time: threads merged across runs.
      afterBulkLoad: (db) => joinStagedThreads(db as unknown as Kysely<IngestDatabase>, 7),
      async applyBatch(trx, batch) {
        for (let i = 0; i < batch.length;) {
          const size = 1 + Math.floor(cut() * 40);
          await handlers.applyBatch(trx, batch.slice(i, i + size));
          i += size;
        }
      },
    });
    await chunked.rebuild(h.env.config.databaseUrl);
    assert.deepEqual(await threadRows(h.env.config.databaseUrl), live);
  });

  test('an analyze keeps statistics of the columns queries filter on, and takes none of those read whole', async () => {
    const messages = [...generateMessages({ messages: 20, seed: 11 })];
    const { seq } = await h.call(Ingest, {
      items: messages.map((m, i) => ({
        type: 'message/rfc822',
        data: b64(m.bytes),
        source: { kind: 'mbox', id: 'statistics' },
        external_id: `s${i}`,
      })),
    });
    await h.app.get(ServiceHost).projector!.waitFor(seq, 120_000);
    const db = createDatabase<IngestDatabase>(h.env.config.databaseUrl, { schema: 'ingest' });
    try {
      await sql`analyze ingest.items, ingest.messages`.execute(db);
      const { rows } = await sql<{ column: string }>`select tablename || '.' || attname as column from pg_stats
        where schemaname = 'ingest' and tablename in ('items', 'messages')`.execute(db);
      const analyzed = new Set(rows.map((row) => row.column));
      for (const column of ['items.kind', 'items.occurred_at', 'messages.date', 'messages.thread_key'])
        assert.ok(analyzed.has(column), `statistics of ${column}`);
      for (const column of ['items.meta', 'items.text', 'messages.from', 'messages.to', 'messages.cc'])
        assert.ok(!analyzed.has(column), `no statistics of ${column}`);
    } finally {
      await db.destroy();
    }
  });
});
