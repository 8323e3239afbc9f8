import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { AckPolicy } from '@nats-io/jetstream';
import { SourcesAdd, SourcesGet, SourcesList } from '@memex/contracts';
import sharp from 'sharp';
import { encodeJson, EVENTS_STREAM, JOBS_STREAM, MEDIA_QUEUE_CONSUMER, typeFilter } from '@memex/bus';
import { waitUntil } from '@memex/testing';
import { startSourcesHarness, type SourcesHarness } from './testing/harness.js';

// The photos here need no text read from their pixels.
process.env['MEMEX_OCR'] = 'off';

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

test("media's own queue counts in the backlog: a source's photos media has not finished, until it acknowledges them", async () => {
  const album = path.join(dir, 'album');
  await fs.mkdir(album);
  for (const [n, red] of [
    [1, 200],
    [2, 40],
  ] as const) {
    const jpeg = await sharp({ create: { width: 64, height: 48, channels: 3, background: { r: red, g: 90, b: 10 } } })
      .jpeg()
      .toBuffer();
    await fs.writeFile(path.join(album, `photo-${n}.jpg`), jpeg);
  }
  await fs.writeFile(path.join(album, 'captions.md'), '# Captions\n\nA red one and a dark one.\n');
  await h.call(SourcesAdd, { kind: 'folder', path: album, id: 'album' });
  await waitUntil(async () => (await h.items('album')).length === 3, 'three items');
  const backlog = async () => (await h.call(SourcesGet, { id: 'album' })).source.pipeline_backlog;
  assert.equal(await backlog(), 0, 'no media service has run: no queue');

  // Media's queue as the media service makes it (it is not running here, so nothing is taken).
  await h.bus.jsm.consumers.add(EVENTS_STREAM, {
    durable_name: MEDIA_QUEUE_CONSUMER,
    ack_policy: AckPolicy.Explicit,
    filter_subject: typeFilter('item.ingested'),
  });
  // The two photos wait for media; the note is no media's work; the other sources' notes neither.
  await waitUntil(async () => (await backlog()) === 2, 'the photos waiting for media', {
    timeoutMs: 30_000,
    everyMs: 500,
  });
  assert.equal((await h.call(SourcesGet, { id: 'papers' })).source.pipeline_backlog, 0);

  // Media takes and acknowledges everything: the backlog goes.
  const consumer = await h.bus.js.consumers.get(EVENTS_STREAM, MEDIA_QUEUE_CONSUMER);
  for (let pending = 1; pending > 0; pending = (await consumer.info()).num_pending) {
    const batch = await consumer.fetch({ max_messages: 100, expires: 2_000 });
    for await (const msg of batch) await msg.ackAck();
  }
  await waitUntil(async () => (await backlog()) === 0, 'no media backlog', { timeoutMs: 30_000, everyMs: 500 });
});
