import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import sharp from 'sharp';
import { isoBox } from '../testing/build.js';
import { mutations } from '../testing/mutate.js';
import { parsedOrCleanlyRejected, registry } from '../testing/parse.js';
import type { PhotoItem } from '../handler.js';
import * as build from '../testing/photo-metadata.js';

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

/** The photographer's metadata every seed of the second fuzz test carries: keywords, people, regions, dates. */
const XMP = {
  title: 'Pier',
  description: 'Ann & Bob',
  keywords: ['beach', 'holiday'],
  hierarchical: ['Places|Italy|Rome'],
  people: ['Ann Example'],
  dateCreated: '2019-07-04T18:30:00+02:00',
  mwg: {
    dimensions: { w: 64, h: 48 },
    regions: [
      { name: 'Ann Example', type: 'Face', x: 0.5, y: 0.5, w: 0.2, h: 0.2 },
      { name: 'Bob Example', type: 'Face', x: 20, y: 20, w: 8, h: 8, unit: 'pixel' },
    ],
  },
  microsoft: [{ name: 'Cy Example', rectangle: '0.1, 0.1, 0.2, 0.2' }],
};

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
  it('parses or clearly rejects mutated files carrying XMP and IPTC (JPEG APP1/APP13 and Extended XMP, PNG iTXt, WebP, AVIF, TIFF): the readers warn, never crash or hang', async () => {
    const canvas = () => sharp({ create: { width: 16, height: 12, channels: 3, background: '#884422' } });
    const xml = build.xmpPacket(XMP);
    const extended = build.xmpPacket({ keywords: ['extended'], description: 'long '.repeat(400) });
    const jpeg = build.withSegments(
      await canvas()
        .jpeg()
        .withExif({ IFD0: { Make: 'Acme' } })
        .toBuffer(),
      build.xmpApp1(build.xmpPacket({ ...XMP, extended: build.extendedGuid(extended) })),
      ...build.extendedXmpApp1(extended, 700),
      build.photoshopApp13(
        Buffer.concat([
          build.photoshopResource(0x0425, Buffer.alloc(16)),
          build.photoshopResource(
            0x0404,
            build.iim([
              build.IIM_UTF8,
              [2, 5, 'Pier'],
              [2, 25, 'beach'],
              [2, 120, 'Café'],
              [2, 55, '20190704'],
              [2, 60, '183000+0200'],
            ]),
          ),
        ]),
      ),
    );
    const seeds = [
      { type: 'image/jpeg', bytes: jpeg },
      { type: 'image/png', bytes: build.withPngChunks(await canvas().png().toBuffer(), build.pngXmpChunk(xml, true)) },
      { type: 'image/webp', bytes: await canvas().webp().withXmp(xml).toBuffer() },
      { type: 'image/avif', bytes: await canvas().avif().withXmp(xml).toBuffer() },
      { type: 'image/tiff', bytes: await canvas().tiff().withXmp(xml).toBuffer() },
    ];
    const tokens = [
      'http://ns.adobe.com/xap/1.0/\0',
      'http://ns.adobe.com/xmp/extension/\0',
      'Photoshop 3.0\0',
      '8BIM\x04\x04',
      '\x1c\x02\x19',
      '\x1c\x01\x5a\0\x03\x1b\x25\x47',
      '\x80\x04',
      '\xff\xe1',
      '\xff\xed',
      'iTXt',
      'XML:com.adobe.xmp\0',
      'XMP ',
      'mime\0application/rdf+xml\0',
      '<rdf:li>',
      '</rdf:Bag>',
      'rdf:parseType="Resource"',
      '<!DOCTYPE x>',
      '&amp;',
      '&#0;',
      '"',
      '<',
      '\xff\xff\xff\xff',
    ];
    // Each seed's metadata is read whole: the mutations start from what the readers take.
    for (const seed of seeds) {
      const item = (await registry.parse(seed)) as PhotoItem;
      assert.deepEqual(item.warnings, [], seed.type);
      assert.deepEqual([item.title, item.meta.keywords.slice(0, 2)], ['Pier', ['beach', 'holiday']], seed.type);
    }
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...seeds), mutations(tokens), async (seed, mutate) => {
        await parsedOrCleanlyRejected({ type: seed.type, bytes: mutate(seed.bytes) });
      }),
      { numRuns: 600 },
    );
  });
});
