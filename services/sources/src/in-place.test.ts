import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { ItemsContent, ItemsGet, MediaGet, SourcesAdd, SourcesGet } from '@memex/contracts';
import sharp from 'sharp';
import { BlobStore } from '@memex/blobs';
import { sharedFile, sharedSkip, waitUntil } from '@memex/testing';
import { startSourcesHarness, type SourcesHarness } from './testing/harness.js';

const PHOTOS = 'corpus/photos/exif-samples/jpg/gps';

/**
 * A 12-megapixel photo like a phone's: smooth colour fields (blurred noise) with fine grain,
 * as a JPEG at quality 90.
 */
async function cameraPhoto(seed: number): Promise<Buffer> {
  const small = await sharp({
    create: {
      width: 40,
      height: 30,
      channels: 3,
      background: '#000',
      noise: { type: 'gaussian', mean: 60 + seed * 40, sigma: 50 },
    },
  })
    .png()
    .toBuffer();
  return sharp(small).resize(4000, 3000, { kernel: 'cubic' }).jpeg({ quality: 90 }).toBuffer();
}

/** Bytes under a folder (the blob store), recursively. */
async function bytesUnder(dir: string): Promise<number> {
  let total = 0;
  for (const entry of await fs.readdir(dir, { recursive: true, withFileTypes: true }).catch(() => [])) {
    if (entry.isFile()) total += (await fs.stat(path.join(entry.parentPath, entry.name))).size;
  }
  return total;
}

/**
 * A folder of real camera photos (the shared corpus's GPS samples, copied to a folder the test
 * may rename) watched with media read in place, and the media service making thumbnails.
 */
describe('an in-place photo folder', { skip: sharedSkip(PHOTOS) }, () => {
  let h: SourcesHarness;
  let dir: string;
  before(async () => {
    h = await startSourcesHarness({ media: true });
    dir = path.join(await fs.mkdtemp(path.join(os.tmpdir(), 'memex-photos-')), 'Camera');
    await fs.mkdir(dir);
    for (const name of await fs.readdir(sharedFile(PHOTOS)))
      await fs.copyFile(path.join(sharedFile(PHOTOS), name), path.join(dir, name));
    for (const n of [1, 2]) await fs.writeFile(path.join(dir, `phone-${n}.jpg`), await cameraPhoto(n));
  });
  after(async () => {
    await h.stop();
    await fs.rm(path.dirname(dir), { recursive: true, force: true });
  });

  test('only derived data is stored; content is the original; renaming the folder away and back', async () => {
    const names = (await fs.readdir(dir)).sort();
    assert.ok(names.length >= 7);
    const photoBytes = await bytesUnder(dir);
    const blobsBefore = await bytesUnder(h.env.config.blobsDir);
    const { id } = await h.call(SourcesAdd, { kind: 'folder', path: dir });
    await waitUntil(async () => (await h.items(id)).length === names.length, 'every photo an item', {
      timeoutMs: 60_000,
    });
    const items = await h.items(id);
    // Thumbnails are derived data: wait for media to have made them from the files in place.
    for (const item of items) {
      await waitUntil(
        async () => {
          try {
            return (await h.call(MediaGet, { item_id: item.id })).renditions.length > 0;
          } catch {
            return false;
          }
        },
        `thumbnails of ${item.location}`,
        { timeoutMs: 60_000, everyMs: 250 },
      );
    }
    // What the memex stored for each photo: its renditions' blobs (and its text), never its bytes.
    const blobs = new BlobStore(h.env.config.blobsDir);
    const report: string[] = [];
    for (const item of items) {
      const size = (await fs.stat(item.location!.slice('file:'.length))).size;
      const renditions = (await h.call(MediaGet, { item_id: item.id })).renditions;
      let derived = 0;
      for (const r of renditions) derived += (await fs.stat(blobs.pathOf(r.sha256))).size;
      const name = path.basename(item.location!);
      report.push(
        `${name}: ${size} bytes, ${derived} stored (${renditions.map((r) => `${r.name} ${r.width}x${r.height}`).join(', ')})`,
      );
      if (name.startsWith('phone-')) assert.ok(derived < size / 5, `${name}: ${derived} bytes stored for ${size}`);
      else assert.ok(derived < size, `${name}: ${derived} bytes stored for ${size}`);
    }
    const stored = (await bytesUnder(h.env.config.blobsDir)) - blobsBefore;
    console.log(
      `# blob store growth: ${stored} bytes for ${items.length} photos of ${photoBytes} bytes (${Math.round(stored / items.length)} per photo)\n# ${report.join('\n# ')}`,
    );
    assert.ok(stored < photoBytes, `the blob store grew by ${stored} bytes for ${photoBytes} bytes of photos`);

    const first = items.find((item) => item.location?.endsWith(`/${names[0]}`))!;
    assert.equal(first.location, `file:${path.join(dir, names[0]!)}`);
    const content = await h.call(ItemsContent, { id: first.id });
    assert.deepEqual(Buffer.from(content.data, 'base64'), await fs.readFile(path.join(dir, names[0]!)));

    // Unmounted (the folder renamed away): the items stay, unreachable; the source says why.
    const away = `${dir}-unmounted`;
    await fs.rename(dir, away);
    await waitUntil(
      async () => (await h.items(id)).every((item) => item.unreachable_since !== null),
      'the items marked unreachable',
      { timeoutMs: 20_000, everyMs: 100 },
    );
    assert.equal((await h.items(id)).length, names.length, 'nothing deleted');
    const source = (await h.call(SourcesGet, { id })).source;
    assert.equal(source.state, 'error');
    assert.match(source.reason ?? '', /unreachable since .*gone/);
    assert.match((await h.call(ItemsGet, { id: first.id })).unreachable?.why ?? '', /gone/);
    assert.match((await h.healthProblems()).join('\n'), new RegExp(`source ${id} unreachable since .*gone`));
    await assert.rejects(h.call(ItemsContent, { id: first.id }), /unavailable|cannot be read/);

    // Mounted again: back, with the same items.
    await fs.rename(away, dir);
    await waitUntil(
      async () => (await h.items(id)).every((item) => item.unreachable_since === null),
      'the items reachable again',
      { timeoutMs: 20_000, everyMs: 100 },
    );
    assert.deepEqual(
      (await h.items(id)).map((item) => item.id),
      items.map((item) => item.id),
    );
    const again = await h.call(ItemsContent, { id: first.id });
    assert.equal(again.size, content.size);
    assert.equal((await h.call(SourcesGet, { id })).source.state, 'active');
    assert.deepEqual(await h.healthProblems(), []);
  });
});
