import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Bus, JOBS_STREAM } from '@memex/bus';
import { createTestEnv, type TestEnv } from '@memex/testing';
import { JobQueue, type TextJob } from './queue.js';

/**
 * A job's lease: a worker that dies (its connection gone, as after SIGKILL or a lost machine)
 * gives its jobs back a lease after it last spoke, not after the minutes a job may take; a live
 * worker keeps the job however long it holds it. Leases of 1.5 s here stand for the 30 s of a
 * deployment.
 */
const LEASE_MS = 1_500;
const LANE = 'lease-test';

let env: TestEnv;
let bus: Bus;
before(async () => {
  env = await createTestEnv();
  bus = await Bus.connect(env.config.natsUrl, 'queue-test');
  await bus.ensureStreams();
});
after(async () => {
  await bus.close();
  await env.stop();
});

const job = (item: string): TextJob => ({ task: 'text', item_id: item, revision: 1, source_seq: 1, spaces: ['s@1'] });

test("a live worker keeps its job past the lease; a dead one's job goes to another worker one lease later", async () => {
  const dying = await Bus.connect(env.config.natsUrl, 'queue-test-dying');
  const first = new JobQueue(dying, LANE, LEASE_MS);
  const other = new JobQueue(bus, LANE, LEASE_MS);
  await other.ensure();
  await other.enqueue(job('a'), 'new', 'lease|a');

  const [held] = await first.take(1_000);
  assert.deepEqual(held?.job, job('a'));
  // Three leases long, held and never touched by the job itself: nobody else gets it.
  for (const until = Date.now() + 3 * LEASE_MS; Date.now() < until;) {
    assert.deepEqual(await other.take(200), [], 'a held job is not handed to another worker');
  }

  // The worker goes without a word (its acks never sent): the job comes back once the lease is out.
  const gone = Date.now();
  await dying.close();
  let again: Awaited<ReturnType<JobQueue['take']>> = [];
  while (again.length === 0 && Date.now() - gone < 10 * LEASE_MS) again = await other.take(200);
  const after = Date.now() - gone;
  assert.deepEqual(again[0]?.job, job('a'), "the dead worker's job is taken again");
  assert.equal(again[0]?.attempt, 2);
  assert.ok(after < 3 * LEASE_MS, `taken again ${after} ms after its worker went, within a lease or two`);
  await again[0]!.ack();
  assert.deepEqual(await other.take(LEASE_MS * 2), [], 'acked once, never again');
});

test("a queue's consumers take the lease of the version running (an upgrade from five minutes)", async () => {
  const lane = 'lease-upgrade';
  await new JobQueue(bus, lane, 5 * 60_000).ensure();
  await new JobQueue(bus, lane, LEASE_MS).ensure();
  const info = await bus.jsm.consumers.info(JOBS_STREAM, `pipelines_${lane}_new`);
  assert.equal(info.config.ack_wait, LEASE_MS * 1_000_000);
});
