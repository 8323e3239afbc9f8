import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import sharp from 'sharp';
import { isoBox } from '../testing/build.js';
import { mutations } from '../testing/mutate.js';
import { parsedOrCleanlyRejected } from '../testing/parse.js';

// These check the readers of containers' boxes and chunks; OCR is not what they check, and is slow.
process.env['MEMEX_OCR'] = 'off';

/** A JPEG XL container as cjxl writes one: signature, ftyp, a Brotli-less Exif box, the codestream in jxlp parts. */
function jxlContainer(tiff: Buffer): Buffer {
  const codestream = Buffer.from([0xff, 0x0a, 0xfa, 0x1f, 0xc6, 0x0f, 0x50, 0xdc, 0x08, 0, 0, 0]);
  return Buffer.concat([
    Buffer.from('0000000c4a584c200d0a870a', 'hex'),
    isoBox('ftyp', Buffer.from('jxl \0\0\0\0jxl ', 'latin1')),
    isoBox('jxlp', Buffer.concat([Buffer.alloc(4), codestream.subarray(0, 6)])),
    isoBox('Exif', Buffer.concat([Buffer.alloc(4), tiff])),
    isoBox('jxlp', Buffer.concat([Buffer.from([0x80, 0, 0, 1]), codestream.subarray(6)])),
  ]);
}

describe('photos: fuzzing the containers read by hand', () => {
  it('parses or clearly rejects mutated WebP, AVIF, GIF and JPEG XL files, never crashing', async () => {
    const exif = { IFD0: { Make: 'Acme' }, IFD2: { DateTimeOriginal: '2019:07:04 18:30:00' } };
    const canvas = () => sharp({ create: { width: 16, height: 12, channels: 3, background: '#884422' } });
    const jpeg = await canvas().jpeg().withExif(exif).toBuffer();
    // The TIFF of the JPEG's APP1 segment (after its length and `Exif\0\0`).
    const app1 = jpeg.indexOf(Buffer.from('Exif\0\0', 'latin1'));
    const tiff = jpeg.subarray(app1 + 6, app1 - 2 + jpeg.readUInt16BE(app1 - 2));
    const seeds = [
      { type: 'image/webp', bytes: await canvas().webp().withExif(exif).toBuffer() },
      { type: 'image/webp', bytes: await canvas().webp({ lossless: true }).toBuffer() },
      { type: 'image/avif', bytes: await canvas().avif().withExif(exif).toBuffer() },
      { type: 'image/gif', bytes: await canvas().gif().toBuffer() },
      { type: 'image/jxl', bytes: jxlContainer(tiff) },
    ];
    // Their syntax: chunk and box names, sizes.
    const tokens = [
      'RIFF',
      'WEBP',
      'VP8X',
      'VP8L',
      'EXIF',
      'meta',
      'iinf',
      'iloc',
      'infe',
      'Exif',
      'jxlp',
      'brob',
      '\0\0\0\x01',
      '\xff\xff\xff\xff',
    ];
    // Each seed is a file the readers take whole: the mutations start from what they read.
    for (const seed of seeds) assert.equal(await parsedOrCleanlyRejected(seed), 'parsed', seed.type);
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...seeds), mutations(tokens), async (seed, mutate) => {
        await parsedOrCleanlyRejected({ type: seed.type, bytes: mutate(seed.bytes) });
      }),
      { numRuns: 600 },
    );
  });
});
