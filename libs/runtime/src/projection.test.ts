import { after, before, test } from 'node:test';
import { ItemDeleted, NotePut, noteMarkdownOf } from '@memex/contracts';
import assert from 'node:assert/strict';
import { sql, type Kysely } from 'kysely';
import { Bus, EventPublisher, EVENTS_STREAM, newId, type LoggedEvent } from '@memex/bus';
import { createDatabase, type Migration } from '@memex/db';
import { createTestEnv, waitUntil, type TestEnv } from '@memex/testing';
import { bookkeepingOf, type BookkeepingDb, type BookkeepingTables, type BookkeepingTrx } from './bookkeeping.js';
import { bulkLoading, ProjectionRunner, type LaneOf, type Projection } from './projection.js';

const migrations: Migration[] = [
  {
    name: '001_seen',
    async up(db) {
      await db.schema
        .createTable('seen')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('seq', 'bigint', (c) => c.notNull())
        .execute();
    },
  },
];

type SeenTables = {
  seen: { id: string; seq: number };
};

/** Records every note; refuses bodies saying "poison", as a projection bug would (until `fixed`). */
class SeenProjection implements Projection {
  fixed = false;
  async apply(trx: BookkeepingTrx, { seq, event }: LoggedEvent): Promise<void> {
    if (event.type !== 'note.put') return;
    const data = event.data as { id: string; body: string };
    if (data.body === 'poison' && !this.fixed) throw new Error('cannot digest this one');
    await trx.withTables<SeenTables>().insertInto('seen').values({ id: data.id, seq }).execute();
  }
}

let env: TestEnv;
let bus: Bus;
let publisher: EventPublisher;
let db: Kysely<SeenTables & BookkeepingTables>;
before(async () => {
  env = await createTestEnv();
  bus = await Bus.connect(env.config.natsUrl, 'projection-test');
  await bus.ensureStreams();
  publisher = new EventPublisher(bus);
  db = createDatabase(env.config.databaseUrl, { schema: 'seen_test' });
});
after(async () => {
  await db.destroy();
  await bus.close();
  await env.stop();
});

/** A runner of `projection` on the test schema; `rebuildBatch`: the events a rebuild applies at once. */
function seenRunner(projection: Projection, rebuildBatch?: number): ProjectionRunner {
  return new ProjectionRunner(
    bus,
    env.config.databaseUrl,
    bookkeepingOf(db),
    { name: 'seen_test', migrations, ...(rebuildBatch ? { rebuildBatch } : {}) },
    projection,
  );
}

async function note(body: string): Promise<number> {
  const id = newId();
  const { seq } = await publisher.publish(NotePut, {
    subject: `item:${id}`,
    actor: { kind: 'user', id: 'owner' },
    data: { id, title: body, body, markdown: noteMarkdownOf(body) },
  });
  return seq;
}

test('one bad event is recorded and skipped; the rest of its batch is applied', async () => {
  const runner = seenRunner(new SeenProjection());
  await runner.start();
  try {
    await note('one');
    const poison = await note('poison');
    const last = await note('three');
    await runner.waitFor(last, 10_000);
    const seen = await db.selectFrom('seen').select('seq').orderBy('seq').execute();
    assert.deepEqual(
      seen.map((row) => Number(row.seq)),
      [poison - 1, last],
    );
    const failures = await db.selectFrom('projector_failures').selectAll().execute();
    assert.equal(failures.length, 1);
    assert.equal(Number(failures[0]!.seq), poison);
    assert.match(failures[0]!.error, /cannot digest this one/);
  } finally {
    await runner.stop();
  }
});

test('a failed event is listed with its subject and reason, counted, and applied by a retry after the fix', async () => {
  const projection = new SeenProjection();
  const runner = seenRunner(projection);
  await runner.start();
  try {
    const before = (await runner.failures()).length;
    const poison = await note('poison');
    await runner.waitFor(await note('after the poison'), 10_000);
    const failure = (await runner.failures()).find((f) => f.seq === poison);
    assert.ok(failure, 'the failure is listed');
    assert.equal(failure.event_type, 'note.put');
    assert.match(failure.subject ?? '', /^item:/);
    assert.match(failure.error, /cannot digest this one/);
    assert.equal(failure.attempts, 1);
    assert.equal(await runner.failureCount(), before + 1);

    // Retried before the fix: still failing, one more attempt, nothing applied.
    const early = await runner.retryFailures([poison]);
    assert.deepEqual(early.fixed, []);
    assert.equal(early.failing[0]?.attempts, 2);
    assert.equal(await db.selectFrom('seen').select('id').where('seq', '=', poison).executeTakeFirst(), undefined);

    projection.fixed = true;
    const retried = await runner.retryFailures();
    assert.ok(retried.fixed.includes(poison));
    assert.deepEqual(retried.failing, []);
    assert.equal(await runner.failureCount(), 0);
    assert.ok(await db.selectFrom('seen').select('id').where('seq', '=', poison).executeTakeFirst());
  } finally {
    await runner.stop();
  }
});

test('a projector whose durable consumer is deleted makes it again at its checkpoint and goes on, losing nothing', async () => {
  const schema = 'seen_lost_consumer';
  const seenDb = createDatabase<SeenTables & BookkeepingTables>(env.config.databaseUrl, { schema });
  const runner = new ProjectionRunner(
    bus,
    env.config.databaseUrl,
    bookkeepingOf(seenDb),
    { name: schema, migrations },
    new SeenProjection(),
  );
  await runner.start();
  try {
    await runner.waitFor(await note('before'), 10_000);
    // An operator's mistake, or a stream restored from a backup without its consumers.
    await bus.jsm.consumers.delete(EVENTS_STREAM, runner.durableName);
    const after = [await note('after 1'), await note('after 2')];
    await runner.waitFor(after[1]!, 20_000);
    const seen = await seenDb.selectFrom('seen').select('seq').where('seq', 'in', after).execute();
    assert.equal(seen.length, 2, 'both notes after the deletion applied');
    assert.ok((await bus.jsm.consumers.info(EVENTS_STREAM, runner.durableName)).config.durable_name);
  } finally {
    await runner.stop();
    await seenDb.destroy();
  }
});

test('only one replica projects; the other follows the checkpoint for min_seq', async () => {
  const leader = seenRunner(new SeenProjection());
  const follower = seenRunner(new SeenProjection());
  await leader.start();
  await follower.start();
  try {
    assert.equal(leader.isLeader, true);
    assert.equal(follower.isLeader, false);
    const seq = await note('for the follower');
    await follower.waitFor(seq, 10_000);
    assert.ok(follower.checkpoint >= seq);
    await assert.rejects(follower.waitFor(seq + 1000, 200), /has applied up to \d+, not yet \d+, after 200 ms/);
  } finally {
    await leader.stop();
    await follower.stop();
  }
});

test('a batch of events the projection has no handler for is not applied; the checkpoint still moves past it', async () => {
  /** Handles only note.deleted, so the notes below are none of its business. */
  class DeletionsOnly implements Projection {
    applied: number[] = [];
    handles(type: string): boolean {
      return type === 'note.deleted';
    }
    async apply(_trx: BookkeepingTrx, { seq }: LoggedEvent): Promise<void> {
      this.applied.push(seq);
    }
  }
  const projection = new DeletionsOnly();
  // Its own read model: the other tests' projector applies every note.
  const skipDb = createDatabase<BookkeepingTables>(env.config.databaseUrl, { schema: 'skip_test' });
  const runnerOf = () =>
    new ProjectionRunner(
      bus,
      env.config.databaseUrl,
      bookkeepingOf(skipDb),
      { name: 'skip_test', migrations },
      projection,
    );
  const runner = runnerOf();
  await runner.start();
  const checkpoint = async () =>
    Number(
      (
        await skipDb
          .selectFrom('projector_checkpoint')
          .select('seq')
          .where('projector', '=', 'skip_test')
          .executeTakeFirst()
      )?.seq ?? 0,
    );
  let last = 0;
  try {
    for (const body of ['not mine', 'nor this']) last = await note(body);
    await runner.waitFor(last, 10_000);
    assert.deepEqual(projection.applied, []);
    // Written in Postgres shortly after, for a restart and for replicas that follow it.
    await waitUntil(async () => (await checkpoint()) === last, 'the checkpoint past the skipped notes');
  } finally {
    await runner.stop();
  }
  // A restart resumes past them: nothing is read again, so nothing is applied.
  const restarted = runnerOf();
  await restarted.start();
  try {
    assert.equal(restarted.checkpoint, last);
    assert.deepEqual(projection.applied, []);
  } finally {
    await restarted.stop();
    await skipDb.destroy();
  }
});

test('rebuild reproduces the read model and the live projector goes on after the switch', async () => {
  // The projection as fixed in the retry test above, whose retry applied the poison events.
  const projection = Object.assign(new SeenProjection(), { fixed: true });
  const runner = seenRunner(projection);
  await runner.start();
  try {
    for (let i = 0; i < 20; i++) await note(`n${i}`);
    await runner.waitFor(await bus.lastSeq(), 10_000);
    const before = await db.selectFrom('seen').selectAll().orderBy('id').execute();
    const result = await runner.rebuild(env.config.databaseUrl);
    assert.equal(result.last_seq, await bus.lastSeq());
    assert.deepEqual(await db.selectFrom('seen').selectAll().orderBy('id').execute(), before);
    const after = await note('after');
    await runner.waitFor(after, 10_000);
    assert.ok(await db.selectFrom('seen').select('id').where('seq', '=', after).executeTakeFirst());
  } finally {
    await runner.stop();
  }
});

test('a rebuild passes over the events its projection has no handler for, and ends at the last event read', async () => {
  /** Takes note.put only; records what it is given. */
  class NotesOnly extends SeenProjection {
    given: number[] = [];
    handles(type: string): boolean {
      return type === 'note.put';
    }
    override async apply(trx: BookkeepingTrx, logged: LoggedEvent): Promise<void> {
      this.given.push(logged.seq);
      await super.apply(trx, logged);
    }
  }
  const projection = Object.assign(new NotesOnly(), { fixed: true });
  // Batches of three: several are read while the one before is applied.
  const runner = seenRunner(projection, 3);
  await runner.start();
  try {
    const deletions: number[] = [];
    for (let i = 0; i < 10; i++) {
      await note(`kept ${i}`);
      const id = newId();
      const { seq } = await publisher.publish(ItemDeleted, {
        subject: `item:${id}`,
        actor: { kind: 'user', id: 'owner' },
        data: { id },
      });
      deletions.push(seq);
    }
    // The log ends with an event the projection skips.
    const last = deletions.at(-1)!;
    await runner.waitFor(last, 10_000);
    const before = await db.selectFrom('seen').selectAll().orderBy('id').execute();
    projection.given = [];
    const result = await runner.rebuild(env.config.databaseUrl);
    assert.equal(result.last_seq, last);
    assert.deepEqual(await db.selectFrom('seen').selectAll().orderBy('id').execute(), before);
    assert.deepEqual(
      projection.given.filter((seq) => deletions.includes(seq)),
      [],
    );
    const checkpoint = await db
      .selectFrom('projector_checkpoint')
      .select('seq')
      .where('projector', '=', 'seen_test')
      .executeTakeFirstOrThrow();
    assert.equal(Number(checkpoint.seq), last);
    const after = await note('after the rebuild');
    await runner.waitFor(after, 10_000);
    assert.ok(await db.selectFrom('seen').select('id').where('seq', '=', after).executeTakeFirst());
  } finally {
    await runner.stop();
  }
});

test('a live projector waiting to read again when a rebuild pauses it does not read until the rebuild resumes it', async () => {
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  /**
   * Once the bulk load is done: the live reading stops (its consumer gone; it reads again a second
   * later) and a note is published, which the switch, paused, takes its time over. However long the
   * bulk load took, the retry comes due within the pause.
   */
  class Slow extends SeenProjection {
    override async apply(trx: BookkeepingTrx, logged: LoggedEvent): Promise<void> {
      if ((logged.event.data as { body?: string }).body === 'slow') await sleep(2_500);
      await super.apply(trx, logged);
    }
    async afterBulkLoad(): Promise<void> {
      await bus.jsm.consumers.delete(EVENTS_STREAM, runner.durableName);
      await note('slow');
    }
  }
  const runner = seenRunner(Object.assign(new Slow(), { fixed: true }));
  const paused = () => (runner as unknown as { paused: boolean }).paused;
  const { consumers } = bus.jsm;
  const add = consumers.add.bind(consumers);
  const madeWhilePaused: boolean[] = [];
  consumers.add = async (stream, config) => {
    if (config.durable_name === runner.durableName) madeWhilePaused.push(paused());
    return add(stream, config);
  };
  await runner.start();
  try {
    await runner.waitFor(await note('before'), 10_000);
    await runner.rebuild(env.config.databaseUrl);
    const after = await note('after');
    await runner.waitFor(after, 10_000);
    assert.ok(await db.selectFrom('seen').select('id').where('seq', '=', after).executeTakeFirst());
    assert.ok(madeWhilePaused.length >= 2, 'made at the start and again on resuming');
    assert.deepEqual(
      madeWhilePaused.filter((made) => made),
      [],
      'no consumer made while paused',
    );
  } finally {
    consumers.add = add;
    await runner.stop();
  }
});

test("a rebuild's bulk load says so to the projection, which then writes what it put off, once, before the swap", async () => {
  const seen: string[] = [];
  class Deferring extends SeenProjection {
    override async apply(trx: BookkeepingTrx, logged: LoggedEvent): Promise<void> {
      seen.push(`${logged.seq} ${(await bulkLoading(trx)) ? 'bulk' : 'live'}`);
      await super.apply(trx, logged);
    }
    async afterBulkLoad(next: BookkeepingDb): Promise<void> {
      const rows = await next.withTables<SeenTables>().selectFrom('seen').select('seq').execute();
      seen.push(`after bulk load: ${rows.length} rows`);
    }
  }
  const runner = seenRunner(Object.assign(new Deferring(), { fixed: true }));
  await runner.start();
  try {
    const seqs = [await note('one'), await note('two')];
    await runner.waitFor(seqs[1]!, 10_000);
    const rows = await db.selectFrom('seen').select('id').execute();
    assert.ok(seen.includes(`${seqs[1]} live`));
    seen.length = 0;
    await runner.rebuild(env.config.databaseUrl);
    assert.ok(seen.includes(`${seqs[1]} bulk`));
    assert.ok(!seen.some((entry) => entry.endsWith(' live')));
    assert.deepEqual(
      seen.filter((entry) => entry.startsWith('after')),
      [`after bulk load: ${rows.length} rows`],
    );
    assert.equal(seen.at(-1), `after bulk load: ${rows.length} rows`);
  } finally {
    await runner.stop();
  }
});

test("a rebuild's bulk load applies the lanes a projection names side by side, in order within each, and an event with none alone between them", async () => {
  /** A note whose body is `<lane> ...` goes in that lane; `alone ...` (and any other event) in none. */
  const laneOf = (logged: LoggedEvent) => {
    const lane = String((logged.event.data as { body?: string }).body ?? 'alone').split(' ')[0]!;
    return lane === 'alone' ? undefined : lane;
  };
  /** Records when and on which connection each event of a bulk load went, holding it 50 ms. */
  class Laned extends SeenProjection {
    applied: { seq: number; lane: string | undefined; pid: number; from: number; to: number }[] = [];
    override async apply(trx: BookkeepingTrx, logged: LoggedEvent): Promise<void> {
      await super.apply(trx, logged);
      if (!(await bulkLoading(trx))) return;
      const from = performance.now();
      const { rows } = await sql<{ pid: number }>`select pg_backend_pid() as pid, pg_sleep(0.05)`.execute(trx);
      this.applied.push({ seq: logged.seq, lane: laneOf(logged), pid: rows[0]!.pid, from, to: performance.now() });
    }
    async bulkLanes(): Promise<LaneOf> {
      return laneOf;
    }
  }
  const projection = Object.assign(new Laned(), { fixed: true });
  const runner = seenRunner(projection, 100);
  await runner.start();
  try {
    // Lanes a and b hash to different connections (checked: FNV-1a of "a" and "b" differ in parity).
    const bodies = ['a 1', 'b 1', 'a 2', 'b 2', 'a 3', 'alone 1', 'b 3', 'a 4', 'b 4', 'a 5'];
    const seqs: number[] = [];
    for (const body of bodies) seqs.push(await note(body));
    await runner.waitFor(seqs.at(-1)!, 10_000);
    const before = await db.selectFrom('seen').selectAll().orderBy('id').execute();
    await runner.rebuild(env.config.databaseUrl);
    assert.deepEqual(await db.selectFrom('seen').selectAll().orderBy('id').execute(), before);

    const ours = projection.applied.filter((a) => seqs.includes(a.seq));
    assert.equal(ours.length, bodies.length);
    const inLane = (lane: string) => ours.filter((a) => a.lane === lane);
    for (const lane of ['a', 'b']) {
      const applied = inLane(lane).map((a) => a.seq);
      assert.deepEqual(
        applied,
        [...applied].sort((x, y) => x - y),
        `lane ${lane} in log order`,
      );
    }
    const together = inLane('a').some((a) =>
      inLane('b').some((b) => a.from < b.to && b.from < a.to && a.pid !== b.pid),
    );
    assert.ok(together, 'the two lanes applied at the same time, each on its own connection');
    // The event with no lane after every event before it, before every event after it.
    const alone = ours.find((a) => a.lane === undefined)!;
    for (const other of ours) {
      if (other.seq < alone.seq) assert.ok(other.to <= alone.from, `${other.seq} applied before the lone event`);
      if (other.seq > alone.seq) assert.ok(other.from >= alone.to, `${other.seq} applied after the lone event`);
    }
  } finally {
    await runner.stop();
  }
});
