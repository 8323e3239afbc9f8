import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { INestApplicationContext } from '@nestjs/common';
import {
  decodeVector,
  ItemDeleted,
  JobsFailed,
  JobsRetry,
  JobsStatus,
  NotePut,
  noteMarkdownOf,
} from '@memex/contracts';
import { BlobStore } from '@memex/blobs';
import {
  Bus,
  callMethod,
  EventPublisher,
  EVENTS_STREAM,
  failedJobCounts,
  JOBS_STREAM,
  newId,
  readLog,
} from '@memex/bus';
import { dot, GLOVE_SIF_SPACE } from '@memex/embeddings';
import { BUS, serviceHealth, startService } from '@memex/runtime';
import { createTestEnv, pdfMeta, waitUntil, type TestEnv } from '@memex/testing';
import { JobQueue, jobSubject, PRIORITIES, TIER1_LANE, type TextJob } from './jobs/queue.js';
import { PipelinesModule } from './pipelines.module.js';
import { eventsOf, ingest } from './testing/items.js';

const owner = { kind: 'user' as const, id: 'owner' };

describe('pipelines tier 1', () => {
  let env: TestEnv;
  let app: INestApplicationContext;
  let bus: Bus;
  let publisher: EventPublisher;
  let blobs: BlobStore;

  before(async () => {
    env = await createTestEnv();
    // Retries 20 ms apart (not 2 s): a job that keeps failing is set aside within a second.
    app = await startService((config) => PipelinesModule.register(config, { workers: 1, retryBaseMs: 10 }), env.config);
    bus = await Bus.connect(env.config.natsUrl, 'test');
    publisher = new EventPublisher(bus);
    blobs = new BlobStore(env.config.blobsDir);
  });
  after(async () => {
    await app.close();
    await bus.close();
    await env.stop();
  });

  test('an ingested PDF becomes passages with pages, and vectors in the built-in space', async () => {
    const page1 = Array.from({ length: 40 }, (_, i) => `The committee reviewed budget line ${i} and approved it.`).join(
      ' ',
    );
    const page2 = 'Appendix: the river flooded the lower fields in spring.';
    const { id } = await ingest(publisher, blobs, {
      title: 'Board minutes',
      text: `${page1}\n\n${page2}`,
      // As the PDF handler writes a document's meta: each page's range of the text.
      typed: {
        kind: 'document',
        meta: pdfMeta(
          [
            { page: 1, start: 0, end: page1.length },
            { page: 2, start: page1.length + 2, end: page1.length + 2 + page2.length },
          ],
          page1.length + page2.length,
        ),
      },
      labels: ['work'],
    });
    const [parts] = await eventsOf(bus, 'part.extracted', id, 1);
    const data = parts!.data as {
      parts: Array<{ ordinal: number; text: string; page?: number; start: number; end: number }>;
      total: number;
      pieces: number;
    };
    assert.ok(data.total >= 2);
    assert.equal(data.pieces, 1);
    assert.deepEqual(new Set(data.parts.map((p) => p.page)), new Set([1, 2]));
    assert.equal(data.parts.at(-1)!.text, page2);
    // The derived events carry the item's scope.
    assert.deepEqual([parts!.labels, parts!.kind, parts!.spam], [['work'], 'document', false]);
    assert.deepEqual(parts!.actor, { kind: 'pipeline', id: 'text@1' });

    const [embedding] = await eventsOf(bus, 'embedding.computed', id, 1);
    const vectors = embedding!.data as {
      space: string;
      dims: number;
      item: string;
      vectors: Array<{ ordinal: number; vector: string }>;
    };
    assert.equal(vectors.space, GLOVE_SIF_SPACE);
    assert.equal(vectors.vectors.length, data.total);
    const item = decodeVector(vectors.item, vectors.dims);
    assert.ok(Math.abs(dot(item, item) - 1) < 1e-5, 'the item vector is normalized');
    const passage = decodeVector(vectors.vectors[0]!.vector, vectors.dims);
    assert.ok(dot(item, passage) > 0.5, 'the item vector is near its passages');
  });

  test('a note is split and embedded; a redelivered job publishes nothing new', async () => {
    const id = newId();
    const put = await publisher.publish(NotePut, {
      subject: `item:${id}`,
      actor: owner,
      kind: 'note',
      data: {
        id,
        title: 'Garden',
        body: 'Plant the tomatoes after the last frost.',
        markdown: noteMarkdownOf('Plant the tomatoes after the last frost.'),
      },
    });
    await eventsOf(bus, 'embedding.computed', id, 1);
    // The note's tier-0 job runs beside the text job: let it and whatever else it starts finish
    // (the log still for a second) before counting the log.
    await eventsOf(bus, 'structure.extracted', id, 1);
    for (let seen = -1, now = await bus.lastSeq(); now !== seen; now = await bus.lastSeq()) {
      seen = now;
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
    // Same job again (as after a crash before the ack): same event ids, so the log dedupes them.
    const queue = new JobQueue(bus);
    const job: TextJob = {
      task: 'text',
      item_id: id,
      revision: put.seq,
      source_seq: put.seq,
      spaces: [GLOVE_SIF_SPACE],
    };
    await queue.enqueue(job, 'touched', `again|${id}`);
    const before = await bus.lastSeq();
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const after = await bus.lastSeq();
    assert.equal(after, before, 'no new events for a job already done');
    assert.equal((await eventsOf(bus, 'part.extracted', id, 1)).length, 1);
    assert.equal((await eventsOf(bus, 'embedding.computed', id, 1)).length, 1);
  });

  test('a new item is one job: text and tier 0 on one reading; a part that fails goes on as a job of its own', async () => {
    const jobsLogged = async () => (await bus.jsm.streams.info(JOBS_STREAM)).state.last_seq;
    const until = async (done: () => Promise<boolean>, what: string) => {
      for (const deadline = Date.now() + 15_000; !(await done());) {
        assert.ok(Date.now() < deadline, what);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    };
    const before = await jobsLogged();
    const item = await ingest(publisher, blobs, {
      title: 'Harvest',
      text: 'Ann will send the harvest report by Friday. The barn roof needs new tiles before winter.',
    });
    await eventsOf(bus, 'embedding.computed', item.id, 1);
    await eventsOf(bus, 'structure.extracted', item.id, 1);
    assert.equal((await jobsLogged()) - before, 1, 'one job for a new item');

    // The same job again with a space no model serves: tier 0 is done (its events already are),
    // the text part fails and is queued again alone, to be retried and dropped by itself.
    const queue = new JobQueue(bus);
    const job: TextJob = {
      task: 'text',
      item_id: item.id,
      revision: 1,
      source_seq: item.seq,
      spaces: ['nowhere@1'],
      structure: true,
    };
    await queue.enqueue(job, 'touched', `split|${item.id}`);
    await until(async () => (await jobsLogged()) - before === 3, 'the failed part queued on its own');
    const alone = await bus.jsm.streams.getMessage(JOBS_STREAM, {
      last_by_subj: jobSubject(TIER1_LANE, 'text', 'touched'),
    });
    const { structure, ...text } = job;
    assert.equal(structure, true);
    assert.deepEqual(alone!.json(), text);
  });

  test('a job that fails every retry is set aside with why: in health, memex jobs and /metrics, until memex jobs retry', async () => {
    const item = await ingest(publisher, blobs, { title: 'Unlucky', text: 'The ferry leaves at noon.' });
    await eventsOf(bus, 'embedding.computed', item.id, 1);
    const job: TextJob = { task: 'text', item_id: item.id, revision: 1, source_seq: item.seq, spaces: ['gone@1'] };
    await new JobQueue(bus).enqueue(job, 'recent', `gone|${item.id}`);
    const setAside = async () => {
      for (const deadline = Date.now() + 15_000; ;) {
        const failed = await callMethod(bus, JobsFailed, { limit: 10_000 });
        const mine = failed.jobs.filter((j) => j.item_id === item.id);
        if (mine.length > 0) return { total: failed.total, mine };
        assert.ok(Date.now() < deadline, 'the failing job set aside');
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    };
    const { total, mine } = await setAside();
    assert.equal(mine.length, 1, 'set aside once');
    const [failed] = mine;
    assert.deepEqual(
      { task: failed!.task, priority: failed!.priority, attempts: failed!.attempts, worker: failed!.worker },
      { task: 'text', priority: 'recent', attempts: 5, worker: 'w1' },
    );
    assert.match(failed!.reason, /gone@1/);
    // Counted where the owner looks.
    assert.equal((await callMethod(bus, JobsStatus, {})).failed, total);
    assert.ok((await failedJobCounts(bus)).get('text')! >= 1, 'the /metrics gauge counts it');
    const health = await serviceHealth(bus, 'pipelines');
    assert.match((health.problems ?? []).join('\n'), new RegExp(`^${total} pipeline job\\(s\\) failed every retry`));

    // Run again: queued at its priority and forgotten as failed; failing again, it is set aside again.
    const retried = await callMethod(bus, JobsRetry, { seqs: [failed!.seq] });
    assert.deepEqual(retried, { retried: [failed!.seq], gone: [] });
    const again = await setAside();
    assert.equal(again.mine.length, 1);
    assert.ok(again.mine[0]!.seq > failed!.seq, 'a new failure, after the retry ran');
    assert.ok(again.mine[0]!.failed_at > failed!.failed_at);
    assert.deepEqual(await callMethod(bus, JobsRetry, { seqs: [failed!.seq] }), { retried: [], gone: [failed!.seq] });
  });

  test('an item.deleted erases the item’s derived events from the log', async () => {
    const { id } = await ingest(publisher, blobs, {
      title: 'Secret',
      text: 'The safe combination is in the blue folder.',
    });
    await eventsOf(bus, 'embedding.computed', id, 1);
    await publisher.publish(ItemDeleted, { subject: `item:${id}`, actor: owner, data: { id } });
    const deadline = Date.now() + 10_000;
    for (;;) {
      const left: string[] = [];
      for await (const { event } of readLog(bus, { untilCaughtUp: true })) {
        if (event.subject === `item:${id}` && event.type !== 'item.deleted' && event.type !== 'item.ingested')
          left.push(event.type);
      }
      if (left.length === 0) break;
      assert.ok(Date.now() < deadline, `still in the log: ${left.join(', ')}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  });

  test('a scheduler whose consumer is deleted says so in health; restarted, new items get their jobs again', async () => {
    const stalled = async () =>
      ((await serviceHealth(bus, 'pipelines')).problems ?? []).some((p) =>
        /job scheduler has not read the log/.test(p),
      );
    await bus.jsm.consumers.delete(EVENTS_STREAM, 'pipelines_scheduler');
    await waitUntil(stalled, 'the stalled scheduler in health', { timeoutMs: 15_000 });
    await app.close();
    app = await startService((config) => PipelinesModule.register(config, { workers: 1, retryBaseMs: 10 }), env.config);
    const { id } = await ingest(publisher, blobs, { title: 'Later', text: 'Written after the scheduler came back.' });
    await eventsOf(bus, 'embedding.computed', id, 1);
    assert.equal(await stalled(), false);
  });

  test('an event delivered to a scheduler that never acknowledged it (its connection lost) is scheduled when it reads again', async () => {
    await app.close();
    const lost = await ingest(publisher, blobs, { title: 'Lost', text: 'Sent into a connection that died.' });
    // Another client takes the delivery and drops it, as a dead connection would.
    const delivered = await (await bus.js.consumers.get(EVENTS_STREAM, 'pipelines_scheduler')).next();
    assert.equal(delivered?.seq, lost.seq);
    // A later event: acknowledging it (ack policy all) must not count the lost one done.
    const later = await ingest(publisher, blobs, { title: 'Later', text: 'Written after the loss.' });
    app = await startService((config) => PipelinesModule.register(config, { workers: 1, retryBaseMs: 10 }), env.config);
    await eventsOf(bus, 'embedding.computed', later.id, 1);
    await eventsOf(bus, 'embedding.computed', lost.id, 1);
  });

  test('a scheduler that deleted its consumer and could not make it again (NATS away between the two) makes it at the same place on the next try', async () => {
    const queue = app.get(JobQueue);
    const { consumers } = app.get<Bus>(BUS).jsm;
    const [add, enqueue] = [consumers.add.bind(consumers), queue.enqueue.bind(queue)];
    let adds = 0;
    let refused = false;
    // Queueing fails once: the scheduler stops reading and reads again from its ack floor, a
    // second later. Making its consumer again fails once, after the old one is deleted.
    queue.enqueue = async (...args) => {
      if (refused) return enqueue(...args);
      refused = true;
      throw new Error('the jobs stream refused the job (test)');
    };
    consumers.add = async (stream, config) => {
      if (config.durable_name === 'pipelines_scheduler' && adds++ === 0) throw new Error('NATS went away (test)');
      return add(stream, config);
    };
    try {
      const { id, seq } = await ingest(publisher, blobs, { title: 'Retried', text: 'Scheduled after two failures.' });
      await eventsOf(bus, 'embedding.computed', id, 1);
      assert.ok(refused);
      assert.equal(adds, 2, 'the consumer was made on the second try');
      // From the ack floor found before the first try (its event), not from the start of the log.
      const { config } = await bus.jsm.consumers.info(EVENTS_STREAM, 'pipelines_scheduler');
      assert.equal(config.opt_start_seq, seq);
    } finally {
      consumers.add = add;
      queue.enqueue = enqueue;
    }
  });
});

describe('job queue', () => {
  test('takes the highest priority first, whatever the order jobs were queued in', async () => {
    const env = await createTestEnv();
    const bus = await Bus.connect(env.config.natsUrl, 'test');
    try {
      await bus.ensureStreams();
      const queue = new JobQueue(bus);
      await queue.ensure();
      const order = [...PRIORITIES].reverse();
      for (const [i, priority] of order.entries()) {
        await queue.enqueue(
          { task: 'text', item_id: `item${i}`, revision: 1, source_seq: i + 1, spaces: [] },
          priority,
          `job${i}`,
        );
      }
      // The same id again is deduplicated.
      await queue.enqueue(
        { task: 'text', item_id: 'item0', revision: 1, source_seq: 1, spaces: [] },
        order[0]!,
        'job0',
      );
      const taken: string[] = [];
      for (;;) {
        const [job, ...more] = await queue.take(50, 3);
        if (!job) break;
        assert.deepEqual(more, [], 'one job per priority: a batch never mixes priorities');
        taken.push(job.priority);
        assert.equal(job.attempt, 1);
        await job.ack();
      }
      assert.deepEqual(taken, [...PRIORITIES]);

      // A batch takes several jobs of the same priority.
      for (const i of [1, 2, 3]) {
        await queue.enqueue({ task: 'text', item_id: `b${i}`, revision: 1, source_seq: i, spaces: [] }, 'new', `b${i}`);
      }
      const batch = await queue.take(50, 2);
      assert.deepEqual(
        batch.map((job) => (job.job as { item_id: string }).item_id),
        ['b1', 'b2'],
      );
      for (const job of [...batch, ...(await queue.take(50, 2))]) await job.ack();
      assert.deepEqual(
        (await queue.backlog()).map((q) => q.waiting + q.in_progress),
        PRIORITIES.map(() => 0),
      );

      // A job given back comes again, counted as a second attempt.
      await queue.enqueue({ task: 'backfill', space: 's', until_seq: 1 }, 'background', 'retry');
      const [first] = await queue.take(50);
      first!.retry(0);
      const [second] = await queue.take(2000);
      assert.equal(second!.attempt, 2);
      await second!.ack();
      queue.close();
    } finally {
      await bus.close();
      await env.stop();
    }
  });
});
