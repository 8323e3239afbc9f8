import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { PHOTO_FILE_TYPES } from '@memex/contracts';
import { sharedFile, sharedSkip } from '@memex/testing';
import { createRegistry } from '../registry.js';
import { RejectedItem, type PhotoItem } from '../handler.js';

// These tests check metadata; OCR is the media OCR test's (services/media/src/ocr.test.ts), and slow.
process.env['MEMEX_OCR'] = 'off';
const registry = createRegistry();
const CORPUS = 'corpus/photos';
const skip = sharedSkip(CORPUS) || (hasExiftool() ? false : 'needs exiftool (Debian libimage-exiftool-perl)');

function hasExiftool(): boolean {
  try {
    execFileSync('exiftool', ['-ver']);
    return true;
  } catch {
    return false;
  }
}

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

  it('reads an iPhone HEIC (time with offset, GPS, lens) and a Sony RAW, and turns orientation into the shown size', async () => {
    const heic = await parse(sharedFile(`${CORPUS}/exif-samples/heic/IMG_5195.HEIC`));
    assert.equal(heic.meta.format, 'heic');
    assert.equal(heic.occurredAt, '2021-04-11T20:47:53.000Z');
    assert.equal(heic.meta.offsetSource, 'exif');
    assert.match(heic.meta.lens ?? '', /iPhone 11 Pro Max/);
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
