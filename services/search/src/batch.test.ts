import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { sql, type Kysely } from 'kysely';
import { encodeVector, type EventEnvelope } from '@memex/contracts';
import { newId, type LoggedEvent } from '@memex/bus';
import { createDatabase, migrate } from '@memex/db';
import { HandlerProjection } from '@memex/runtime';
import { createTestEnv, type TestEnv } from '@memex/testing';
import { groupsOf, type ImportEvent } from './projection/groups.js';
import { searchMigrations } from './projection/migrations.js';
import { SearchProjector } from './projection/search.projector.js';
import { schemaDigest } from './schema-digest.js';

const SPACE = 'tiny@1';
const DIMS = 4;

/** A log of one import with everything that can happen to its items on the way, in one order. */
class Log {
  readonly events: LoggedEvent[] = [];

  private add(type: string, subject: string, data: object, extra: Partial<EventEnvelope> = {}): void {
    const at = new Date(Date.UTC(2024, 0, 1, 0, 0, this.events.length)).toISOString();
    const event: EventEnvelope = {
      id: newId(),
      type,
      v: 1,
      subject,
      occurred_at: at,
      recorded_at: at,
      actor: { kind: 'import', id: 'test' },
      labels: [],
      ...extra,
      data,
    };
    this.events.push({ seq: this.events.length + 1, event, headers: undefined, pending: 0 });
  }

  item(id: string, title: string, revision = 1, kind = 'email'): void {
    const from = [{ name: 'Carol', address: `carol-${revision}@example.com` }];
    const meta = kind === 'email' ? { from, to: [], cc: [], bcc: [], threadKey: id, spam: false } : {};
    this.add(
      'item.ingested',
      `item:${id}`,
      {
        id,
        kind,
        revision,
        title,
        source: { kind: 'test', id: 'batch' },
        external_id: null,
        identity: `test:${id}`,
        origin: 'imported',
        content_type: 'text/plain',
        content_sha256: 'a'.repeat(64),
        size: 10,
        text_sha256: 'b'.repeat(64),
        text_length: 10,
        meta,
      },
      { kind, labels: revision > 1 ? ['work'] : [] },
    );
  }

  /** Passages `ordinals` of a split with `total` in all, as piece `piece` of `pieces`. */
  parts(
    id: string,
    revision: number,
    ordinals: number[],
    options: { pipeline?: string; total?: number; piece?: number; pieces?: number } = {},
  ): void {
    const { pipeline = 'text@1', total = ordinals.length, piece = 0, pieces = 1 } = options;
    this.add('part.extracted', `item:${id}`, {
      item_id: id,
      revision,
      pipeline,
      total,
      piece,
      pieces,
      parts: ordinals.map((ordinal) => ({
        ordinal,
        kind: 'passage',
        text: `passage ${ordinal} of revision ${revision} by ${pipeline}: river flood ${id.slice(-4)} word${ordinal}`,
        start: ordinal * 100,
        end: ordinal * 100 + 80,
      })),
    });
  }

  vectors(
    id: string,
    revision: number,
    ordinals: number[],
    options: { pipeline?: string; space?: string; item?: boolean } = {},
  ): void {
    const { pipeline = 'text@1', space = SPACE, item = true } = options;
    const vector = (n: number) =>
      encodeVector(Float32Array.from({ length: DIMS }, (_, i) => Math.sin(n + i + revision + this.events.length)));
    this.add('embedding.computed', `item:${id}`, {
      item_id: id,
      revision,
      pipeline,
      space,
      dims: DIMS,
      total: ordinals.length,
      piece: 0,
      pieces: 1,
      ...(item ? { item: vector(99) } : {}),
      vectors: ordinals.map((ordinal) => ({ ordinal, vector: vector(ordinal) })),
    });
  }

  deleted(id: string): void {
    this.add('item.deleted', `item:${id}`, { id });
  }

  modelAdded(space: string): void {
    this.add('model.added', `model:${space}`, {
      space,
      kind: 'http',
      dims: DIMS,
      spec: 'http://127.0.0.1:1/',
      details: {},
    });
  }
}

/**
 * Creates, revisions, re-splits, stale pieces, repeats and deletions of the same items close
 * together, as an import with its pipelines writes them (and worse).
 */
function importLog(): Log {
  const log = new Log();
  const [a, b, c, d, e] = [newId(), newId(), newId(), newId(), newId()];
  log.item(a, 'Flood warning');
  log.item(b, 'Quarterly report');
  log.item(c, 'Draft to delete');
  log.parts(a, 1, [0, 1], { total: 4, piece: 0, pieces: 2 });
  log.parts(b, 1, [0]);
  log.parts(a, 1, [2, 3], { total: 4, piece: 1, pieces: 2 });
  log.vectors(a, 1, [0, 1, 2, 3]);
  log.parts(c, 1, [0, 1]);
  log.vectors(b, 1, [0]);
  log.vectors(b, 1, [0], { item: false }); // again: the first passage vector stays
  log.item(b, 'Quarterly report, revised', 2); // new title, people and labels
  log.vectors(b, 1, [0]); // stale now
  log.parts(b, 2, [0, 1]);
  log.parts(b, 1, [5]); // older than the item: stale
  log.vectors(b, 2, [0, 1]);
  log.vectors(c, 1, [0, 1]);
  log.deleted(c);
  log.item(c, 'Draft to delete'); // deleted for good: stays out
  log.parts(c, 1, [0, 1]);
  log.item(d, 'Empty', 1, 'document');
  log.parts(d, 1, [], { total: 0 });
  log.vectors(d, 1, []);
  log.parts(a, 1, [0, 1], { pipeline: 'text@2' }); // a new split replaces the old
  log.parts(a, 1, [1, 2], { pipeline: 'text@2', total: 3, piece: 1, pieces: 2 }); // passage 1 twice
  log.vectors(a, 1, [0, 1, 2], { pipeline: 'text@2' });
  log.vectors(a, 1, [0, 1, 2], { pipeline: 'text@2', space: 'other@1' }); // a second space, made here
  log.item(e, 'Late arrival', 1, 'document');
  log.parts(e, 1, [0]);
  log.parts(newId(), 1, [0]); // an item search never heard of
  log.vectors(e, 1, [0]);
  log.deleted(b);
  return log;
}

describe('search projector in bulk', () => {
  let env: TestEnv;
  const dbs = new Map<string, Kysely<unknown>>();
  const projection = HandlerProjection.of(new SearchProjector());

  const schema = async (name: string): Promise<Kysely<unknown>> => {
    const db = createDatabase<unknown>(env.config.databaseUrl, { schema: name, max: 2 });
    dbs.set(name, db);
    await migrate(db, name, searchMigrations);
    return db;
  };
  const apply = (db: Kysely<unknown>, batch: LoggedEvent[]) =>
    db.transaction().execute((trx) => projection.applyBatch(trx as never, batch));

  before(async () => {
    env = await createTestEnv();
  });
  after(async () => {
    for (const db of dbs.values()) await db.destroy();
    await env.stop();
  });

  /** Two schemas, one fed event by event, the other the whole log in one batch: the same rows. */
  const compare = async (name: string, log: Log): Promise<Record<string, string>> => {
    const eachDb = await schema(`search_each_${name}`);
    for (const logged of log.events) await apply(eachDb, [logged]);
    await apply(await schema(`search_whole_${name}`), log.events);
    const rows = await schemaDigest(env.config.databaseUrl, `search_each_${name}`);
    assert.deepEqual(await schemaDigest(env.config.databaseUrl, `search_whole_${name}`), rows);
    return rows;
  };

  test('a batch of an import ends with the rows event-by-event application gives', async () => {
    const log = importLog();
    const run = log.events.filter(({ event }) => event.type !== 'item.deleted') as ImportEvent[];
    assert.ok(groupsOf(run, false).length < run.length / 3, 'the import goes in groups of many events');
    const rows = await compare('import', log);
    assert.match(rows['items']!, /^3:/, 'a, d and e (b and c deleted)');
    assert.match(rows['parts']!, /^4:/, "a's new split (3) and e's passage");
    assert.match(rows['vec_0_parts']!, /^4:/);
    assert.match(rows['vec_1_parts']!, /^3:/);
    assert.match(rows['tombstones']!, /^2:/);
  });

  test('a new space takes over at the vector that completes it, even in a batch', async () => {
    const log = new Log();
    const [a, b] = [newId(), newId()];
    log.item(a, 'First');
    log.parts(a, 1, [0]);
    log.modelAdded(SPACE); // a has no vector in it yet
    log.item(b, 'Second');
    log.vectors(a, 1, [0]); // every item with text has one now: search switches here
    log.parts(b, 1, [0]); // b has text and no vector yet; the switch stays
    await compare('switch', log);
    const db = dbs.get('search_whole_switch')!;
    const { rows } = await sql<{ active: string | null }>`select active from state`.execute(db);
    assert.equal(rows[0]!.active, SPACE);
  });
});
