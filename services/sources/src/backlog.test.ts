import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { AckPolicy } from '@nats-io/jetstream';
import { SourcesAdd, SourcesGet, SourcesList } from '@memex/contracts';
import { encodeJson, JOBS_STREAM } from '@memex/bus';
import { waitUntil } from '@memex/testing';
import { startSourcesHarness, type SourcesHarness } from './testing/harness.js';

let h: SourcesHarness;
let dir: string;
before(async () => {
  h = await startSourcesHarness();
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'memex-backlog-'));
});
after(async () => {
  await h.stop();
  await fs.rm(dir, { recursive: true, force: true });
});

/** A job as the pipelines scheduler queues it (the fields the backlog reads: an item, or none). */
const queue = (subject: string, job: Record<string, unknown>) => h.bus.js.publish(subject, encodeJson(job));

test("each source's pipeline backlog: the jobs waiting on MEMEX_JOBS for its items, and none once they are taken", async () => {
  for (const name of ['papers', 'notes']) {
    await fs.mkdir(path.join(dir, name));
    for (const n of [1, 2])
      await fs.writeFile(path.join(dir, name, `${name}-${n}.md`), `# ${name} ${n}\n\nword-${name}${n}\n`);
    await h.call(SourcesAdd, { kind: 'folder', path: path.join(dir, name), id: name });
  }
  await waitUntil(
    async () => (await h.items('papers')).length === 2 && (await h.items('notes')).length === 2,
    'four items',
  );
  const [paper1, paper2] = await h.items('papers');
  const [note1] = await h.items('notes');

  // The pipelines service is not running here: what is queued stays queued.
  await h.bus.ensureStreams();
  const backlogs = async () =>
    Object.fromEntries(
      (await h.call(SourcesList, {})).sources
        .filter((s) => s.managed_by === 'sources')
        .map((s) => [s.id, s.pipeline_backlog]),
    );
  assert.deepEqual(await backlogs(), { notes: 0, papers: 0 }, 'an empty queue is no backlog');
  await queue('memex.job.t1.text.new', { task: 'text', item_id: paper1!.id, revision: 1, source_seq: 1, spaces: [] });
  await queue('memex.job.t0.structure.new', { task: 'structure', item_id: paper1!.id, revision: 1, source_seq: 1 });
  await queue('memex.job.t1.text.recent', {
    task: 'text',
    item_id: paper2!.id,
    revision: 1,
    source_seq: 2,
    spaces: [],
  });
  await queue('memex.job.t1.text.new', { task: 'text', item_id: note1!.id, revision: 1, source_seq: 3, spaces: [] });
  // Neither an item of a source nor an item at all: counted for nobody.
  await queue('memex.job.t1.text.new', {
    task: 'text',
    item_id: '01JZZZZZZZZZZZZZZZZZZZZZZZ',
    revision: 1,
    source_seq: 4,
    spaces: [],
  });
  await queue('memex.job.t1.backfill.background', { task: 'backfill', space: 'glove', until_seq: 9 });

  await waitUntil(
    async () => JSON.stringify(await backlogs()) === JSON.stringify({ notes: 1, papers: 3 }),
    'the backlogs counted',
    {
      timeoutMs: 30_000,
      everyMs: 500,
    },
  );
  assert.equal((await h.call(SourcesGet, { id: 'papers' })).source.pipeline_backlog, 3);

  // A worker takes every job (the work queue deletes what is acknowledged): the backlogs go.
  await h.bus.jsm.consumers.add(JOBS_STREAM, { durable_name: 'backlog_test', ack_policy: AckPolicy.Explicit });
  const consumer = await h.bus.js.consumers.get(JOBS_STREAM, 'backlog_test');
  for (let taken = 0; taken < 6;) {
    const batch = await consumer.fetch({ max_messages: 6, expires: 2_000 });
    for await (const msg of batch) {
      await msg.ackAck();
      taken++;
    }
  }
  await waitUntil(
    async () => JSON.stringify(await backlogs()) === JSON.stringify({ notes: 0, papers: 0 }),
    'no backlog',
    {
      timeoutMs: 30_000,
      everyMs: 500,
    },
  );
});
