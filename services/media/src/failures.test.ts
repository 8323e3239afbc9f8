import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { Ingest, LocationReachable, MediaFailed, MediaGet, MediaRetry } from '@memex/contracts';
import { EventPublisher, EVENTS_STREAM, MEDIA_QUEUE_CONSUMER } from '@memex/bus';
import { fileLocation } from '@memex/locations';
import { serviceHealth } from '@memex/runtime';
import { waitUntil } from '@memex/testing';
import { MediaHarness } from './testing/harness.js';

describe('media: a photo the pipeline cannot read, and a queue that stops', () => {
  let h: MediaHarness;
  let dir: string;
  const fast = { retryBaseMs: 5 };
  const problems = async () => (await serviceHealth(h.bus, 'media')).problems ?? [];
  before(async () => {
    h = await MediaHarness.start(fast);
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'memex-media-failures-'));
  });
  after(async () => {
    await h?.stop();
    if (dir) await fs.rm(dir, { recursive: true, force: true });
  });

  /** A small JPEG of its own colour: one item per content, so each test's photo is a new item. */
  const jpeg = (red: number) =>
    sharp({ create: { width: 64, height: 48, channels: 3, background: { r: red, g: 90, b: 20 } } })
      .jpeg()
      .toBuffer();

  /** A photo read in place at `file`, ingested with media stopped (a test then spoils the file before media reads it). */
  const ingestInPlace = async (file: string, red: number) => {
    await fs.writeFile(file, await jpeg(red));
    await h.stopMedia();
    const { results } = await h.call(Ingest, {
      items: [
        {
          type: 'image/jpeg',
          location: fileLocation(file),
          source: { kind: 'folder', id: 'camera' },
          external_id: file,
        },
      ],
    });
    assert.ok(results[0]!.id, JSON.stringify(results[0]));
    return results[0]!.id;
  };

  it('gives up after its retries, says which photo and why (kept across a restart), and runs it again on retry', async () => {
    const file = path.join(dir, 'looped.jpg');
    const id = await ingestInPlace(file, 10);
    // Read in place, the file becomes a symlink to itself before media reads it: not "unreachable"
    // (a moved file, an unmounted volume), an error no retry gets past.
    await fs.rename(file, `${file}.kept`);
    await fs.symlink(path.basename(file), file);
    await assert.rejects(fs.stat(file), /ELOOP/);
    await h.startMedia(fast);

    let photo: Awaited<ReturnType<typeof h.analyzed>> | undefined;
    await waitUntil(
      async () => (photo = await h.call(MediaGet, { item_id: id }).catch(() => undefined))?.status === 'failed',
      'the photo given up',
      { timeoutMs: 30_000 },
    );
    assert.match(photo!.analysis_problem ?? '', /ELOOP/);
    const failed = await h.call(MediaFailed, {});
    assert.equal(failed.total, 1);
    assert.equal(failed.items[0]!.item_id, id);
    assert.equal(failed.items[0]!.attempts, 5);
    assert.match(failed.items[0]!.reason, /ELOOP/);

    // Health names it, and still does after a restart (the failure is an event, not a counter).
    await h.stopMedia();
    await h.startMedia(fast);
    const named = (await problems()).find((problem) => problem.includes(id));
    assert.ok(named, `health names the photo: ${JSON.stringify(await problems())}`);
    assert.match(named, /gave up on.*ELOOP.*memex photos retry/);

    // Mended; run again: analysed, no longer failed, health clean.
    await fs.rm(file);
    await fs.rename(`${file}.kept`, file);
    const retry = await h.call(MediaRetry, { item_ids: [id, '01ARZ3NDEKTSV4RRFFQ69G5FAV'] });
    assert.deepEqual(retry, { retried: [id], gone: ['01ARZ3NDEKTSV4RRFFQ69G5FAV'] });
    const analyzed = await h.analyzed(id);
    assert.equal(analyzed.analysis_problem, null);
    assert.ok(analyzed.renditions.length > 0);
    assert.equal((await h.call(MediaFailed, {})).total, 0);
    assert.deepEqual(await problems(), []);
  });

  it('a file out of reach is given up on, not skipped, and run again when its source sees it reachable', async () => {
    const folder = path.join(dir, 'volume');
    await fs.mkdir(folder);
    const file = path.join(folder, 'away.jpg');
    const id = await ingestInPlace(file, 100);
    // The volume goes away before media reads it.
    await fs.rename(folder, `${folder}.unmounted`);
    await h.startMedia(fast);
    await waitUntil(async () => (await h.call(MediaFailed, {})).items.some((i) => i.item_id === id), 'given up on', {
      timeoutMs: 30_000,
    });
    const { items } = await h.call(MediaFailed, {});
    assert.match(items.find((i) => i.item_id === id)!.reason, /cannot be read: no such file/);

    // Back: the sources service says so (as it does when a watcher or a worker sees it again).
    await fs.rename(`${folder}.unmounted`, folder);
    await new EventPublisher(h.bus).publish(LocationReachable, {
      subject: 'source:nas',
      actor: { kind: 'system', id: 'sources' },
      data: { source_id: 'nas', prefix: `${fileLocation(folder)}/` },
    });
    assert.ok((await h.analyzed(id)).renditions.length > 0);
    assert.equal((await h.call(MediaFailed, {})).total, 0);
  });

  it('a photo whose stored original is missing (not deleted) is given up on, and analysed once it is back', async () => {
    const bytes = await jpeg(150);
    const file = path.join(dir, 'stored.jpg');
    await fs.writeFile(file, bytes);
    await h.stopMedia();
    const [id] = await h.ingestFiles([file]);
    const sha = createHash('sha256').update(bytes).digest('hex');
    await h.blobs.delete(sha);
    await h.startMedia(fast);
    // Not found until media, started after the ingest, has caught up with it.
    await waitUntil(
      async () => (await h.call(MediaGet, { item_id: id! }).catch(() => undefined))?.status === 'failed',
      'given up on',
      { timeoutMs: 30_000 },
    );
    assert.match(
      (await h.call(MediaGet, { item_id: id! })).analysis_problem ?? '',
      new RegExp(`blob ${sha}\\) is missing`),
    );
    await h.blobs.put(bytes);
    assert.deepEqual(await h.call(MediaRetry, {}), { retried: [id], gone: [] });
    assert.ok((await h.analyzed(id!)).renditions.length > 0);
  });

  it('a queue whose consumer is deleted says so in health, opens again, and analyses what comes next', async () => {
    await h.bus.jsm.consumers.delete(EVENTS_STREAM, MEDIA_QUEUE_CONSUMER);
    await waitUntil(async () => (await problems()).some((p) => /queue stopped/.test(p)), 'the stop in health', {
      timeoutMs: 20_000,
    });
    await waitUntil(async () => (await problems()).length === 0, 'the queue open again', { timeoutMs: 20_000 });
    const file = path.join(dir, 'after.jpg');
    await fs.writeFile(file, await jpeg(200));
    const [id] = await h.ingestFiles([file]);
    assert.ok((await h.analyzed(id!)).renditions.length > 0);
  });
});
