import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import sharp from 'sharp';
import { bmp, BITMAPS, stripes, type BmpSpec } from '@memex/ingest/testing';
import { BmpError, decodeBmp } from './bmp.js';
import { makeRenditions, NoRendition } from './renditions.js';

/** Every pixel of the decoded bitmap, against the colour the spec drew there. */
function assertPixels(spec: BmpSpec, name: string) {
  const decoded = decodeBmp(bmp(spec));
  assert.ok(!('encoded' in decoded));
  const { width, height, channels, data } = decoded;
  assert.deepEqual([width, height], [spec.width, spec.height], name);
  for (let y = 0; y < height; y++)
    for (let x = 0; x < width; x++) {
      const [r, g, b, a = 255] = spec.pixel(x, y);
      const at = (y * width + x) * channels;
      const expected = channels === 4 ? [r, g, b, a] : [r, g, b];
      assert.deepEqual([...data.subarray(at, at + channels)], expected, `${name} at ${x},${y}`);
    }
  return decoded;
}

describe('Windows bitmaps: decoded to pixels for sharp', () => {
  it('every depth, header and compression: each pixel its colour, rows the right way up', () => {
    for (const { name, spec } of BITMAPS) assertPixels(spec, name);
  });

  it('rows longer than a run (RLE8, RLE4: runs and absolute runs of 255 at the most), and alpha by its mask', () => {
    const wide = (x: number, y: number) => stripes(4)(Math.floor(x / 7), y);
    for (const bits of [4, 8] as const)
      assertPixels({ width: 600, height: 4, bits, pixel: wide, compression: 'rle' }, `RLE${bits}`);
    const translucent = assertPixels(
      {
        width: 3,
        height: 2,
        bits: 32,
        compression: 'bitfields',
        header: 124,
        pixel: (x) => [10 * x, 20, 30, 100 + x],
      },
      'alpha',
    );
    assert.equal('channels' in translucent && translucent.channels, 4);
  });

  it('renditions of a bitmap: thumb and preview, its colours kept; a PNG inside one is handed to sharp', async () => {
    const photo = bmp({ width: 600, height: 400, bits: 24, pixel: (x) => (x < 300 ? [255, 0, 0] : [0, 0, 255]) });
    const [thumb, preview] = await makeRenditions(photo, 'bmp');
    assert.deepEqual([thumb!.width, thumb!.height, preview!.width, preview!.height], [256, 171, 600, 400]);
    const { data } = await sharp(thumb!.webp).raw().toBuffer({ resolveWithObject: true });
    assert.ok(data[0]! > 200 && data[2]! < 60, `the left is red: ${[...data.subarray(0, 3)]}`);

    const png = await sharp({ create: { width: 40, height: 30, channels: 3, background: '#00ff00' } })
      .png()
      .toBuffer();
    const header = bmp({ width: 40, height: 30, bits: 24, pixel: () => [0, 0, 0] }).subarray(0, 54);
    header.writeUInt32LE(5, 30);
    header.writeUInt32LE(54 + png.length, 2);
    const [embedded] = await makeRenditions(Buffer.concat([header, png]), 'bmp');
    assert.deepEqual([embedded!.width, embedded!.height], [40, 30]);
  });

  it('bad input: cut short, 100000 × 100000 pixels, RLE data ending early — a reason each, nothing allocated for the pixels', async () => {
    const whole = bmp({ width: 64, height: 64, bits: 24, pixel: stripes(4) });
    assert.throws(
      () => decodeBmp(whole.subarray(0, 5000)),
      new BmpError('the file is cut short: its 64 × 64 pixels at 24 bits need 12288 bytes, it holds 4946'),
    );
    await assert.rejects(
      makeRenditions(whole.subarray(0, 5000), 'bmp'),
      (error: Error) =>
        error instanceof NoRendition &&
        /^the BMP image could not be decoded: the file is cut short/.test(error.message),
    );

    const huge = Buffer.from(whole);
    huge.writeInt32LE(100_000, 18);
    huge.writeInt32LE(100_000, 22);
    const before = process.memoryUsage().arrayBuffers;
    assert.throws(
      () => decodeBmp(huge),
      /it says it is 100000 × 100000 pixels, more than the 100 megapixels read here/,
    );
    assert.ok(process.memoryUsage().arrayBuffers - before < 16 << 20);
    const rle = bmp({ width: 3000, height: 3000, bits: 8, pixel: () => [1, 2, 3], compression: 'rle' });
    assert.throws(() => decodeBmp(rle.subarray(0, rle.length - 100)), /cut short inside its RLE data/);
    const sparse = bmp({ width: 4, height: 4, bits: 8, pixel: () => [1, 2, 3], compression: 'rle' });
    sparse.writeInt32LE(9000, 18);
    sparse.writeInt32LE(9000, 22);
    assert.throws(() => decodeBmp(sparse), /more than its \d+ bytes of RLE data can hold/);
    for (const [offset, value, reason] of [
      [14, 99, /its header says it is 99 bytes long/],
      [28, 7, /7 bits a pixel/],
      [30, 9, /compression \(9\)/],
    ] as const) {
      const bad = Buffer.from(whole);
      if (offset === 28) bad.writeUInt16LE(value, offset);
      else bad.writeUInt32LE(value, offset);
      assert.throws(() => decodeBmp(bad), reason);
    }
    assert.throws(() => decodeBmp(Buffer.from('not a bitmap at all, really')), /not a BMP file/);
  });

  it('mutated bitmaps of every kind (their headers rewritten, cut short) decode whole or fail with a BmpError', () => {
    let state = 20261207;
    const random = (n: number) => {
      state = (state * 1103515245 + 12345) % 2 ** 31;
      return state % n;
    };
    const seeds = BITMAPS.map(({ spec }) => bmp({ ...spec, width: 40, height: 9 }));
    for (let run = 0; run < 3000; run++) {
      const seed = seeds[run % seeds.length]!;
      let bytes = Buffer.from(seed);
      for (let i = 1 + random(4); i > 0; i--) bytes[random(Math.min(bytes.length, 80))] = random(256);
      if (random(4) === 0) bytes = bytes.subarray(0, random(bytes.length));
      try {
        const decoded = decodeBmp(bytes);
        if (!('encoded' in decoded))
          assert.equal(decoded.data.length, decoded.width * decoded.height * decoded.channels);
      } catch (error) {
        if (!(error instanceof BmpError)) throw error;
      }
    }
  });
});
