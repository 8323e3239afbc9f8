import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { brotliDecompressSync } from 'node:zlib';
import sharp from 'sharp';
import { PHOTO_FILE_TYPES } from '@memex/contracts';
import { missingTool, motionClip, sharedFile, sharedSkip, withIphoneExif } from '@memex/testing';
import { createRegistry } from '../registry.js';
import { RejectedItem, type AvItem, type PhotoItem } from '../handler.js';
import { isoBox } from '../testing/build.js';

// These tests check metadata; OCR is the media OCR test's (services/media/src/ocr.test.ts), and slow.
process.env['MEMEX_OCR'] = 'off';
const registry = createRegistry();
const CORPUS = 'corpus/photos';
const noExiftool = missingTool('exiftool', ['-ver'], 'Debian libimage-exiftool-perl');
const skip = sharedSkip(CORPUS) || noExiftool;

function photosIn(dir: string): string[] {
  return fs
    .readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && PHOTO_FILE_TYPES[path.extname(e.name).slice(1).toLowerCase()])
    .map((e) => path.join(e.parentPath, e.name))
    .sort();
}

interface ExiftoolReading {
  SourceFile: string;
  DateTimeOriginal?: string;
  CreateDate?: string;
  OffsetTimeOriginal?: string;
  GPSLatitude?: number;
  GPSLongitude?: number;
}

async function parse(file: string, attributes: Record<string, unknown> = {}): Promise<PhotoItem> {
  const type = PHOTO_FILE_TYPES[path.extname(file).slice(1).toLowerCase()]!;
  const item = await registry.parse({
    type,
    bytes: fs.readFileSync(file),
    attributes: { filename: path.basename(file), ...attributes },
  });
  assert.equal(item.kind, 'photo');
  return item as PhotoItem;
}

describe('photo handler on the real photos of the shared corpus', { skip }, () => {
  it('reads capture times, offsets and GPS as exiftool does, and never fails unexpectedly', async () => {
    const files = photosIn(sharedFile(CORPUS));
    const readings = JSON.parse(
      execFileSync(
        'exiftool',
        [
          '-j',
          '-n',
          '-q',
          '-DateTimeOriginal',
          '-CreateDate',
          '-OffsetTimeOriginal',
          '-GPSLatitude',
          '-GPSLongitude',
          ...files,
        ],
        {
          maxBuffer: 16 * 1024 * 1024,
        },
      ).toString(),
    ) as ExiftoolReading[];
    const byFile = new Map(readings.map((r) => [r.SourceFile, r]));
    let timed = 0;
    let located = 0;
    for (const file of files) {
      let item: PhotoItem;
      try {
        item = await parse(file);
      } catch (error) {
        // A file that is not an image is rejected with a reason, never by surprise.
        assert.ok(error instanceof RejectedItem, `${file}: ${String(error)}`);
        assert.equal(error.unexpected, false, `${file}: ${error.reason}`);
        continue;
      }
      const truth = byFile.get(file) ?? { SourceFile: file };
      const stated = truth.DateTimeOriginal ?? truth.CreateDate;
      const exifTime =
        stated && /^\d{4}:\d\d:\d\d \d\d:\d\d:\d\d/.test(stated)
          ? stated.slice(0, 19).replace(/^(\d{4}):(\d\d):(\d\d) /, '$1-$2-$3T')
          : null;
      assert.equal(item.meta.takenAt, exifTime, `${file}: capture time`);
      if (exifTime) timed++;
      if (truth.OffsetTimeOriginal) {
        assert.equal(item.meta.offset, truth.OffsetTimeOriginal, `${file}: offset`);
        assert.equal(
          item.occurredAt,
          new Date(`${exifTime}${truth.OffsetTimeOriginal}`).toISOString(),
          `${file}: instant`,
        );
      }
      if (typeof truth.GPSLatitude === 'number' && typeof truth.GPSLongitude === 'number') {
        assert.ok(item.meta.gps, `${file}: GPS expected`);
        assert.ok(
          Math.abs(item.meta.gps.latitude - truth.GPSLatitude) < 1e-6,
          `${file}: latitude ${item.meta.gps.latitude} vs ${truth.GPSLatitude}`,
        );
        assert.ok(Math.abs(item.meta.gps.longitude - truth.GPSLongitude) < 1e-6, `${file}: longitude`);
        located++;
      } else {
        assert.equal(item.meta.gps, null, `${file}: no GPS`);
      }
      assert.match(item.identity, /^sha256:[0-9a-f]{64}$/);
    }
    // The corpus has dated and located photos: the checks above really ran.
    assert.ok(timed >= 15, `only ${timed} dated photos compared`);
    assert.ok(located >= 6, `only ${located} located photos compared`);
  });

  it("takes no camera's stock description for a caption: the photo is not found by its maker's name", async () => {
    const konica = await parse(sharedFile(`${CORPUS}/exif-samples/jpg/Konica_Minolta_DiMAGE_Z3.jpg`));
    assert.deepEqual(konica.meta.camera, { make: 'KONICA MINOLTA', model: 'DiMAGE Z3' });
    assert.equal(konica.meta.description, null);
    assert.doesNotMatch(konica.text ?? '', /DIGITAL CAMERA/);
  });

  it('reads an iPhone HEIC (time with offset, GPS, lens) and a Sony RAW, and turns orientation into the shown size', async () => {
    const heic = await parse(sharedFile(`${CORPUS}/exif-samples/heic/IMG_5195.HEIC`));
    assert.equal(heic.meta.format, 'heic');
    assert.equal(heic.occurredAt, '2021-04-11T20:47:53.000Z');
    assert.equal(heic.meta.offsetSource, 'exif');
    assert.match(heic.meta.lens ?? '', /iPhone 11 Pro Max/);
    // A Live Photo's still: its MakerNote names the motion clip's content identifier (exiftool: MediaGroupUUID).
    assert.equal(heic.meta.contentIdentifier, '570F1469-09C7-4E50-9875-05F21D5BD166');
    const raw = await parse(sharedFile(`${CORPUS}/exif-py/sony_alpha_a7iii_raw_image.ARW`));
    assert.equal(raw.meta.format, 'raw');
    assert.deepEqual(raw.meta.camera, { make: 'SONY', model: 'ILCE-7M3' });
    assert.equal(raw.occurredAt, '2024-09-14T11:54:44.000Z');
    const turned = await parse(sharedFile(`${CORPUS}/exif-samples/jpg/orientation/landscape_5.jpg`));
    assert.equal(turned.meta.orientation, 5);
    assert.deepEqual([turned.meta.width, turned.meta.height], [600, 450]);
  });

  it('takes time, place and caption from Takeout sidecar attributes where EXIF is silent, and derives the zone from them', async () => {
    const bare = await parse(sharedFile(`${CORPUS}/exif-samples/jpg/orientation/landscape_1.jpg`), {
      taken_at: '2019-07-04T18:30:00Z',
      latitude: 48.8584,
      longitude: 2.2945,
      description: 'fireworks',
    });
    assert.equal(bare.occurredAt, '2019-07-04T18:30:00.000Z');
    assert.equal(bare.meta.timeSource, 'takeout');
    assert.deepEqual(bare.meta.gps, { latitude: 48.8584, longitude: 2.2945, altitude: null });
    assert.match(bare.text, /fireworks/);
    // EXIF's wall-clock time without an offset, and Takeout's UTC instant of the same shot: the zone is their difference.
    const nikon = await parse(sharedFile(`${CORPUS}/exif-samples/jpg/gps/DSCN0010.jpg`), {
      taken_at: '2008-10-22T14:28:39Z',
    });
    assert.equal(nikon.meta.offset, '+02:00');
    assert.equal(nikon.meta.offsetSource, 'takeout');
    assert.equal(nikon.occurredAt, '2008-10-22T14:28:39.000Z');
  });

  it('rejects bytes that are no image, naming the type, and reads an image sent under the wrong type with a warning', async () => {
    await assert.rejects(
      registry.parse({ type: 'image/jpeg', bytes: Buffer.from('this is a text file, not a photo at all') }),
      (error: RejectedItem) => error.reason.startsWith('not a JPEG image') && !error.unexpected,
    );
    const png = await registry.parse({
      type: 'image/jpeg',
      bytes: fs.readFileSync(sharedFile(`${CORPUS}/exifreader/test.png`)),
    });
    assert.equal((png as PhotoItem).meta.format, 'png');
    assert.match(png.warnings.join(), /bytes are PNG/);
  });
});

describe("Live Photos: the content identifier an iPhone's still and motion clip share", () => {
  const id = '1F2E3D4C-AAAA-4BBB-8CCC-0123456789AB';

  it("reads it from the still's Apple MakerNote, as exiftool does, beside the capture time", async () => {
    const plain = await sharp({ create: { width: 16, height: 12, channels: 3, background: '#3a6' } })
      .jpeg()
      .toBuffer();
    const still = withIphoneExif(plain, { contentIdentifier: id, takenAt: '2023:07:14 18:30:05', offset: '+02:00' });
    const item = (await registry.parse({
      type: 'image/jpeg',
      bytes: still,
      attributes: { filename: 'IMG_0001.JPG' },
    })) as PhotoItem;
    assert.equal(item.meta.contentIdentifier, id);
    assert.equal(item.occurredAt, '2023-07-14T16:30:05.000Z');
    assert.deepEqual(item.meta.camera, { make: 'Apple', model: 'iPhone 12' });
    // The note is laid out as Apple's: exiftool, which knows Apple's tags, reads the same identifier.
    if (!noExiftool) {
      const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'memex-live-')), 'IMG_0001.JPG');
      fs.writeFileSync(file, still);
      const [reading] = JSON.parse(execFileSync('exiftool', ['-j', '-Apple:all', file], { encoding: 'utf8' })) as Array<
        Record<string, unknown>
      >;
      // exiftool 12.5x names the tag MediaGroupUUID; older ones ContentIdentifier.
      assert.equal(reading!['MediaGroupUUID'] ?? reading!['ContentIdentifier'], id);
    }
    // A photo without one (an ordinary JPEG) has none.
    const other = (await registry.parse({ type: 'image/jpeg', bytes: plain, attributes: {} })) as PhotoItem;
    assert.equal(other.meta.contentIdentifier, null);
  });

  it(
    "reads it from the motion clip's QuickTime keys",
    { skip: missingTool('ffmpeg', ['-version'], 'deploy/local/provision.sh --with-media') },
    async () => {
      const item = (await registry.parse({
        type: 'video/quicktime',
        bytes: await motionClip(id, '2023-07-14T18:30:05+0200'),
        attributes: { filename: 'IMG_0001.MOV' },
      })) as AvItem;
      assert.equal(item.kind, 'video');
      assert.equal(item.meta.contentIdentifier, id);
      assert.equal(item.occurredAt, '2023-07-14T16:30:05.000Z');
    },
  );
});

describe('RAW files of every maker: read by their own signatures, their EXIF where it is kept', () => {
  const read = async (type: string, bytes: Buffer) => (await registry.parse({ type, bytes })) as PhotoItem;
  /** A camera's JPEG with its EXIF, as the preview inside a RAW file carries it. */
  const cameraJpeg = (make: string, model: string) =>
    sharp({ create: { width: 64, height: 48, channels: 3, background: '#468' } })
      .jpeg()
      .withExif({
        IFD0: { Make: make, Model: model },
        IFD2: { DateTimeOriginal: '2015:08:09 10:11:12', OffsetTimeOriginal: '+09:00' },
      })
      .toBuffer();

  /** The TIFF block of a JPEG's EXIF (APP1 `Exif\0\0`), which TIFF-based RAW files are. */
  const exifTiff = (jpeg: Buffer) => {
    const app1 = jpeg.indexOf(Buffer.from('Exif\0\0', 'latin1'));
    return Buffer.from(jpeg.subarray(app1 + 6, app1 + 4 + jpeg.readUInt16BE(app1 - 2)));
  };

  /** TIFF with the magic number a maker gave it: Olympus `RO` (ORF), Panasonic `U` (RW2). */
  const withMagic = (tiff: Buffer, magic: number) => {
    if (tiff.toString('latin1', 0, 2) === 'II') tiff.writeUInt16LE(magic, 2);
    else tiff.writeUInt16BE(magic, 2);
    return tiff;
  };

  /** A Fujifilm RAF: its header, then the JPEG it points at (offset and length at bytes 84 and 88). */
  const raf = (jpeg: Buffer) => {
    const header = Buffer.alloc(160);
    header.write('FUJIFILMCCD-RAW 0201FF383501', 0, 'latin1');
    header.write('X-T2', 28, 'latin1');
    header.writeUInt32BE(header.length, 84);
    header.writeUInt32BE(jpeg.length, 88);
    return Buffer.concat([header, jpeg]);
  };

  it('ORF, RW2 and RAF give their camera and capture time; a CR3 whose EXIF is unread is kept, saying so', async () => {
    const cases: Array<[type: string, bytes: Buffer, make: string, model: string]> = [
      [
        'image/x-olympus-orf',
        withMagic(exifTiff(await cameraJpeg('OLYMPUS IMAGING CORP.', 'E-M5')), 0x4f52),
        'OLYMPUS IMAGING CORP.',
        'E-M5',
      ],
      [
        'image/x-panasonic-rw2',
        withMagic(exifTiff(await cameraJpeg('Panasonic', 'DMC-GH4')), 0x55),
        'Panasonic',
        'DMC-GH4',
      ],
      ['image/x-fuji-raf', raf(await cameraJpeg('FUJIFILM', 'X-T2')), 'FUJIFILM', 'X-T2'],
    ];
    for (const [type, bytes, make, model] of cases) {
      const item = await read(type, bytes);
      assert.equal(item.meta.format, 'raw', type);
      assert.deepEqual(item.meta.camera, { make, model }, type);
      assert.equal(item.occurredAt, '2015-08-09T01:11:12.000Z', type);
    }
    const noCanonBox = Buffer.concat([
      Buffer.from([0, 0, 0, 24]),
      Buffer.from('ftypcrx \0\0\0\x01crx isom', 'latin1'),
      Buffer.alloc(64),
    ]);
    const kept = await read('image/x-canon-cr3', noCanonBox);
    assert.equal(kept.meta.format, 'raw');
    assert.deepEqual(kept.warnings, ["EXIF unreadable (no Canon metadata box (CMT1–CMT4) in this CR3's moov)"]);
  });

  /** A little-endian TIFF of one IFD: [tag, type, value] (2 ASCII, 3 SHORT, 5 RATIONALs as [numerator, denominator] pairs). */
  const tiff = (entries: Array<[number, 2 | 3 | 5, string | number | Array<[number, number]>]>) => {
    const head = Buffer.alloc(8 + 2 + entries.length * 12 + 4);
    head.write('II', 0, 'latin1');
    head.writeUInt16LE(42, 2);
    head.writeUInt32LE(8, 4);
    head.writeUInt16LE(entries.length, 8);
    const data: Buffer[] = [];
    let offset = head.length;
    entries.forEach(([tag, type, value], i) => {
      const entry = 10 + i * 12;
      const bytes =
        type === 2
          ? Buffer.from(`${value as string}\0`, 'latin1')
          : type === 3
            ? Buffer.from([(value as number) & 0xff, (value as number) >> 8])
            : Buffer.concat(
                (value as Array<[number, number]>).map(([n, d]) => {
                  const pair = Buffer.alloc(8);
                  pair.writeUInt32LE(n, 0);
                  pair.writeUInt32LE(d, 4);
                  return pair;
                }),
              );
      head.writeUInt16LE(tag, entry);
      head.writeUInt16LE(type, entry + 2);
      head.writeUInt32LE(type === 5 ? bytes.length / 8 : type === 3 ? 1 : bytes.length, entry + 4);
      if (bytes.length <= 4) bytes.copy(head, entry + 8);
      else {
        head.writeUInt32LE(offset, entry + 8);
        data.push(bytes);
        offset += bytes.length;
      }
    });
    return Buffer.concat([head, ...data]);
  };

  it("a Canon CR3: its camera, capture time with zone, lens and place, from the TIFFs in Canon's box of its moov", async () => {
    const cr3 = Buffer.concat([
      isoBox('ftyp', Buffer.from('crx \0\0\0\x01crx isom', 'latin1')),
      isoBox(
        'moov',
        isoBox(
          'uuid',
          Buffer.from('85c0b687820f11e08111f4ce462b6a48', 'hex'),
          isoBox('CNCV', Buffer.from('CanonCR3_001/00.09.00/00.00.00', 'latin1')),
          isoBox(
            'CMT1',
            tiff([
              [0x010f, 2, 'Canon'],
              [0x0110, 2, 'Canon EOS R5'],
              [0x0112, 3, 1],
            ]),
          ),
          isoBox(
            'CMT2',
            tiff([
              [0x9003, 2, '2023:06:17 18:45:10'],
              [0x9011, 2, '+02:00'],
              [0xa434, 2, 'RF24-105mm F4 L IS USM'],
            ]),
          ),
          isoBox('CMT3', Buffer.from('maker notes', 'latin1')),
          isoBox(
            'CMT4',
            tiff([
              [1, 2, 'N'],
              [
                2,
                5,
                [
                  [48, 1],
                  [51, 1],
                  [2988, 100],
                ],
              ],
              [3, 2, 'E'],
              [
                4,
                5,
                [
                  [2, 1],
                  [17, 1],
                  [4020, 100],
                ],
              ],
            ]),
          ),
        ),
        isoBox('mvhd', Buffer.alloc(100)),
      ),
      isoBox('mdat', Buffer.alloc(256)),
    ]);
    const item = await read('image/x-canon-cr3', cr3);
    assert.deepEqual(item.warnings, []);
    assert.deepEqual(item.meta.camera, { make: 'Canon', model: 'Canon EOS R5' });
    assert.equal(item.occurredAt, '2023-06-17T16:45:10.000Z');
    assert.equal(item.meta.lens, 'RF24-105mm F4 L IS USM');
    assert.ok(Math.abs(item.meta.gps!.latitude - 48.8583) < 1e-4 && Math.abs(item.meta.gps!.longitude - 2.2945) < 1e-4);
  });

  it('refuses a file sent as RAW whose bytes are no image at all', async () => {
    await assert.rejects(
      registry.parse({ type: 'image/x-olympus-orf', bytes: Buffer.from('this is a text file, not a photo') }),
      (error: RejectedItem) => /not a RAW image/.test(error.reason),
    );
  });
});

/**
 * JPEG XL: a bare codestream or a container whose boxes hold it and the EXIF (Brotli-compressed in
 * a `brob` box, or not). `cjxl` (Debian libjxl-tools) makes the files the way users make them: a
 * camera's JPEG recompressed losslessly, its EXIF kept in a box and its orientation moved into the
 * codestream.
 */
describe('JPEG XL photos', () => {
  const noCjxl = missingTool('cjxl', ['--version'], 'Debian libjxl-tools');

  /** A codestream's first bytes: the signature, a SizeHeader and ImageMetadata's first fields, bits least significant first. */
  function codestream(fields: Array<[value: number, bits: number]>): Buffer {
    const bits: number[] = [];
    for (const [value, count] of fields) for (let i = 0; i < count; i++) bits.push(Math.floor(value / 2 ** i) % 2);
    const bytes = Buffer.alloc(2 + Math.ceil(bits.length / 8) + 8);
    bytes[0] = 0xff;
    bytes[1] = 0x0a;
    bits.forEach((bit, i) => (bytes[2 + (i >> 3)]! |= bit << (i & 7)));
    return bytes;
  }
  const jxl = (bytes: Buffer) => registry.parse({ type: 'image/jxl', bytes, attributes: {} }) as Promise<PhotoItem>;

  it('reads the shown size from the codestream: small and ratio-coded sizes, a quarter turn, a header cut short', async () => {
    // 64 x 48, both multiples of 8 (small): height (48/8 - 1), ratio 0, width (64/8 - 1), all_default.
    const small = await jxl(
      codestream([
        [1, 1],
        [5, 5],
        [0, 3],
        [7, 5],
        [1, 1],
      ]),
    );
    assert.deepEqual([small.meta.format, small.meta.width, small.meta.height], ['jxl', 64, 48]);
    // Height 1024 - 1 in 13 bits (selector 1), width by ratio 6 (5:4): 1280; extra fields,
    // orientation 8 (1 + 7): shown a quarter turned, 1024 x 1280.
    const turned = await jxl(
      codestream([
        [0, 1],
        [1, 2],
        [1023, 13],
        [6, 3],
        [0, 1],
        [1, 1],
        [7, 3],
      ]),
    );
    assert.deepEqual([turned.meta.width, turned.meta.height], [1024, 1280]);
    // A container cut short after its first boxes: no codestream, no size (the photo is kept).
    const signature = Buffer.from('0000000c4a584c200d0a870a', 'hex');
    const ftyp = Buffer.from('0000001466747970' + '6a786c20' + '00000000' + '6a786c20', 'hex');
    const cut = await jxl(Buffer.concat([signature, ftyp]));
    assert.deepEqual([cut.meta.format, cut.meta.width, cut.meta.height], ['jxl', null, null]);
  });

  it(
    "reads a recompressed camera JPEG's EXIF from its box, compressed or not, and its orientation from the codestream",
    { skip: noCjxl },
    async () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'memex-jxl-'));
      const jpeg = path.join(dir, 'IMG_0001.jpg');
      await sharp({ create: { width: 64, height: 48, channels: 3, background: '#884422' } })
        .jpeg()
        .withMetadata({ orientation: 6 })
        .withExif({
          IFD0: { Make: 'Acme', Model: 'Cam 1' },
          IFD2: { DateTimeOriginal: '2019:07:04 18:30:00', OffsetTimeOriginal: '+02:00' },
        })
        .toFile(jpeg);
      execFileSync('cjxl', [jpeg, path.join(dir, 'IMG_0001.jxl')], { stdio: 'ignore' });
      const bytes = fs.readFileSync(path.join(dir, 'IMG_0001.jxl'));
      // cjxl Brotli-compresses the Exif box (a `brob` box); the same file with it plain.
      const boxes: Buffer[] = [];
      for (let at = 0; at < bytes.length; at += bytes.readUInt32BE(at)) {
        const box = bytes.subarray(at, at + bytes.readUInt32BE(at));
        if (box.toString('latin1', 4, 12) !== 'brobExif') {
          boxes.push(box);
          continue;
        }
        const exif = brotliDecompressSync(box.subarray(12));
        const header = Buffer.alloc(8);
        header.writeUInt32BE(8 + exif.length);
        header.write('Exif', 4, 'latin1');
        boxes.push(header, exif);
      }
      const plain = Buffer.concat(boxes);
      assert.notDeepEqual(plain, bytes, 'the file has a compressed Exif box');
      for (const file of [bytes, plain]) {
        const item = await jxl(file);
        assert.equal(item.meta.format, 'jxl');
        assert.deepEqual([item.meta.width, item.meta.height], [48, 64], 'portrait, as the camera was held');
        assert.deepEqual(item.meta.camera, { make: 'Acme', model: 'Cam 1' });
        assert.equal(item.occurredAt, '2019-07-04T16:30:00.000Z');
        assert.deepEqual(item.warnings, []);
      }
      fs.rmSync(dir, { recursive: true });
    },
  );

  it(
    'reads the JPEG XL of the shared corpus as exiftool does (EXIF split around the codestream parts)',
    { skip },
    async () => {
      const item = await parse(sharedFile(`${CORPUS}/exif-py/test_0001.jxl`));
      assert.equal(item.meta.format, 'jxl');
      assert.deepEqual([item.meta.width, item.meta.height], [1280, 1024]);
      assert.equal(item.meta.takenAt, '2025-08-15T22:25:54');
      assert.ok(item.meta.gps && Math.abs(item.meta.gps.latitude - 44.06037845) < 1e-6);
    },
  );
});

/**
 * EXIF and sizes where exifr does not find them: a WebP's RIFF chunks (Android and Google Photos
 * save WebP), an AVIF whose Exif item libheif laid out (libavif, GIMP, ImageMagick, sharp), a GIF's
 * screen. They came out undated and sizeless, a WebP with a warning that its EXIF was unreadable.
 */
describe('photos in containers exifr does not read', () => {
  const exif = {
    IFD0: { Make: 'Acme', Model: 'Cam 1' },
    IFD2: { DateTimeOriginal: '2019:07:04 18:30:00', OffsetTimeOriginal: '+02:00' },
  };
  const canvas = () => sharp({ create: { width: 64, height: 48, channels: 3, background: '#884422' } });
  const photo = async (type: string, bytes: Buffer) =>
    (await registry.parse({ type, bytes, attributes: {} })) as PhotoItem;
  const reading = (item: PhotoItem) => [
    item.occurredAt,
    item.meta.camera?.make ?? null,
    item.meta.width,
    item.meta.height,
    item.warnings,
  ];

  it('reads a WebP (lossy, lossless) and an AVIF made by libheif: their EXIF and their size', async () => {
    const dated = ['2019-07-04T16:30:00.000Z', 'Acme', 64, 48, []];
    assert.deepEqual(reading(await photo('image/webp', await canvas().webp().withExif(exif).toBuffer())), dated);
    assert.deepEqual(
      reading(await photo('image/webp', await canvas().webp({ lossless: true }).withExif(exif).toBuffer())),
      dated,
    );
    assert.deepEqual(reading(await photo('image/avif', await canvas().avif().withExif(exif).toBuffer())), dated);
    // Without EXIF, the size is the container's; no warning.
    const bare = [null, null, 64, 48, []];
    assert.deepEqual(reading(await photo('image/webp', await canvas().webp().toBuffer())), bare);
    assert.deepEqual(reading(await photo('image/gif', await canvas().gif().toBuffer())), bare);
    // A damaged AVIF (a 16x12 one of sharp's, mutated by the fuzz test below) on which exifr's box
    // reader never returned, hanging ingest: kept, undated.
    const damaged = Buffer.from(
      'AAAAHGZ0eXBhdmlmAAAAAG1pZjFhdmlmbWlhZgAAARdtZXRSSUZGYQAAAAAAAAAhaGRscgAAAAAAAAAAcGljdAAAAAAAAAAA' +
        'AAAAAAAAAAA0aWxvYwAAAABEQAACAAEAAAAAATsAAQAAAAAAAAAkAAIAAAAAAV8AAQAAAAAAAADwAAAAOGlpbmYAAAAAAAIA' +
        'AAAVaW5mZQIAAAAAAQAAYXYwMQAAAAAVaW5mZQIAAAEAAgAARXhpZgAAAAAOcGl0bQAAAAAAAQAAAFZpcHJwAAAAOGlwY28A' +
        'AAAMYXYxQ4EgAgAAAAAUaXNwZQAAAAAAAAAQAAAADAAAABBwaXhpAAAAAAMICAgAAAAWadMGCzyi5e9wbVJJRkZhAAAAAAAA' +
        'AAEAAQOBAgMAAAAaaXJlZgAAAAAAAAAOY2RzYwACAAEAAQAAARxtZGF0EgAKCDgM/tpAQ0GkMhYZQmMEwAA0AAB1hk3a5lwO' +
        'huhB1+gKAAAABkV4aWYAAElJKgAIAAAABwAPAQIABQAAAHIAAAASAQMAAQAAAAEAAAAaAQUAAQAAAGIAAAAbAQUAAQAAAGoA' +
        'AAAoAQMAAQAAAAIAAAATAgMAAQAAAAEAAABphwQAAQAAAHgAAAAAAAAAOGMAAOgDAAA4YwAA6AMAAEFjbWUAAAcAAJAHAAQA' +
        'AAAwMjEwA5ACABQAAADSAAAAAZEHAAQAAAABAgMAAKAHAAQAAAAwMTAwAaADAAEAAAD//wAAAqAEAAEAAAAQAAAAA6AEAAEA' +
        'AAAMAAAAAAAAADIwMTk6MDc6MDQgMTg6MzA6MDAA',
      'base64',
    );
    assert.deepEqual(reading(await photo('image/avif', damaged)).slice(0, 2), [null, null]);
    // Cut short inside its chunks: kept, sizeless.
    const cut = (await canvas().webp().toBuffer()).subarray(0, 20);
    assert.deepEqual(reading(await photo('image/webp', cut)).slice(2), [null, null, []]);
  });

  it("turns a HEIF's size by its irot, as decoders show it", async () => {
    const ispe = Buffer.alloc(12);
    ispe.writeUInt32BE(4032, 4);
    ispe.writeUInt32BE(3024, 8);
    const heif = (angle: number) =>
      Buffer.concat([
        isoBox('ftyp', Buffer.from('heic\0\0\0\0mif1heic', 'latin1')),
        isoBox(
          'meta',
          Buffer.alloc(4),
          isoBox('iprp', isoBox('ipco', isoBox('ispe', ispe), isoBox('irot', Buffer.from([angle])))),
        ),
      ]);
    assert.deepEqual(reading(await photo('image/heic', heif(1))).slice(2, 4), [3024, 4032]);
    assert.deepEqual(reading(await photo('image/heic', heif(2))).slice(2, 4), [4032, 3024]);
  });
});
