import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { MEDIA_FILE_TYPES, typeOfFileName } from '@memex/contracts';
import { listFolder } from '@memex/exports';
import type { PhotoItem } from '../handler.js';
import { bmp, BITMAPS, stripes } from '../testing/bmp.js';
import fc from 'fast-check';
import { mutations } from '../testing/mutate.js';
import { parsedOrCleanlyRejected, registry, rejection } from '../testing/parse.js';

const photo = async (bytes: Buffer, attributes: Record<string, unknown> = {}, type = 'image/bmp') =>
  (await registry.parse({ type, bytes, attributes })) as PhotoItem;

describe('Windows bitmaps (.bmp) as photos', () => {
  it('are photo types: by their extension, to the photo handler, and sent by a folder import with their time', async () => {
    assert.equal(typeOfFileName('SCAN0001.BMP'), 'image/bmp');
    assert.equal(MEDIA_FILE_TYPES.bmp, 'image/bmp');
    const photos = registry.list().find((handler) => handler.name === 'photo')!;
    for (const type of ['image/bmp', 'image/x-ms-bmp', 'image/x-bmp']) assert.ok(photos.types.includes(type), type);
    const dir = mkdtempSync(path.join(tmpdir(), 'memex-bmp-'));
    try {
      writeFileSync(path.join(dir, 'SCAN0001.BMP'), bmp(BITMAPS[8]!.spec));
      utimesSync(path.join(dir, 'SCAN0001.BMP'), new Date('2004-05-06T07:08:09Z'), new Date('2004-05-06T07:08:09Z'));
      const accepted = new Set(registry.list().flatMap((handler) => handler.types));
      const { files, skipped } = await listFolder(dir, accepted);
      assert.deepEqual(skipped, []);
      assert.deepEqual(
        files.map(({ key, type, modified }) => ({ key, type, modified })),
        [{ key: 'SCAN0001.BMP', type: 'image/bmp', modified: '2004-05-06T07:08:09.000Z' }],
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  for (const { name, spec } of BITMAPS)
    it(`a ${name} bitmap: its size and bit depth, no EXIF, dated by the file's time`, async () => {
      const item = await photo(bmp(spec), { filename: 'scan.bmp', modified: '2004-05-06T07:08:09Z' });
      assert.equal(item.kind, 'photo');
      assert.deepEqual(item.warnings, []);
      const { meta } = item;
      assert.equal(meta.format, 'bmp');
      assert.equal(meta.contentType, 'image/bmp');
      assert.deepEqual([meta.width, meta.height, meta.bitDepth], [5, 3, spec.bits]);
      assert.deepEqual([meta.takenAt, meta.orientation, meta.camera, meta.gps], [null, null, null, null]);
      assert.equal(meta.timeSource, 'file');
      assert.equal(item.occurredAt, '2004-05-06T07:08:09.000Z');
      assert.equal(item.title, 'scan.bmp');
    });

  it('without a file time it has no date; sent under another type it is read as the bitmap it is', async () => {
    const bytes = bmp(BITMAPS[8]!.spec);
    const undated = await photo(bytes);
    assert.deepEqual([undated.occurredAt, undated.meta.timeSource], [null, null]);
    const mislabelled = await photo(bytes, {}, 'image/png');
    assert.equal(mislabelled.meta.format, 'bmp');
    assert.deepEqual(mislabelled.warnings, ['sent as image/png but the bytes are BMP; read as BMP']);
  });

  it('a bitmap cut short is kept with a warning; a header no bitmap has, or 100000 × 100000 pixels, is rejected', async () => {
    const whole = bmp({ width: 64, height: 64, bits: 24, pixel: stripes(4) });
    const cut = await photo(whole.subarray(0, 5000), { filename: 'half.bmp' });
    assert.deepEqual([cut.meta.width, cut.meta.height], [64, 64]);
    assert.deepEqual(cut.warnings, [
      'the BMP image is cut short: its 64 × 64 pixels take 12288 bytes, the file holds 4946; no thumbnail can be made of it',
    ]);

    const huge = Buffer.from(whole);
    huge.writeInt32LE(100_000, 18);
    huge.writeInt32LE(100_000, 22);
    assert.equal(
      (await rejection(photo(huge))).reason,
      'not a readable BMP image: it says it is 100000 × 100000 pixels, more than the 100 megapixels a bitmap may have here',
    );
    const rle = bmp({ ...BITMAPS[4]!.spec });
    rle.writeInt32LE(100_000, 18);
    rle.writeInt32LE(100_000, 22);
    assert.match((await rejection(photo(rle))).reason, /100000 × 100000 pixels, more than the 100 megapixels/);
    // Under the pixels' limit, but more bytes than a photo may be.
    const wide = Buffer.from(whole);
    wide.writeInt32LE(10_000, 18);
    wide.writeInt32LE(9_000, 22);
    wide.writeUInt16LE(32, 28);
    assert.equal(
      (await rejection(photo(wide))).reason,
      'not a readable BMP image: it says it is 10000 × 9000 pixels, more than a file of at most 200 MB holds',
    );

    const empty = Buffer.from(whole);
    empty.writeInt32LE(0, 18);
    assert.match((await rejection(photo(empty))).reason, /its size, 0 × 64 pixels, is no image/);
    const depth = Buffer.from(whole);
    depth.writeUInt16LE(7, 28);
    assert.match((await rejection(photo(depth))).reason, /7 bits a pixel is no depth BMP has/);
    const header = Buffer.from(whole);
    header.writeUInt32LE(99, 14);
    assert.match((await rejection(photo(header))).reason, /not a BMP image: its first bytes are no image format/);
    assert.match((await rejection(photo(whole.subarray(0, 30)))).reason, /ends inside its header/);
  });

  it('parses or clearly rejects mutated bitmaps of every kind: never a crash', async () => {
    const seeds = BITMAPS.map(({ spec }) => ({ type: 'image/bmp', bytes: bmp({ ...spec, width: 40, height: 9 }) }));
    for (const seed of seeds) assert.equal(await parsedOrCleanlyRejected(seed), 'parsed');
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...seeds),
        mutations(['BM', '\x28\0\0\0', '\x7c\0\0\0', '\xff\xff\xff\x7f']),
        async (seed, mutate) => {
          await parsedOrCleanlyRejected({ type: seed.type, bytes: mutate(seed.bytes) });
        },
      ),
      { numRuns: 400 },
    );
  });
});
