import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { FacesClusters, FacesList, ItemsGet, MailList, MediaEvents, MediaGet, Search } from '@memex/contracts';
import { buildTakeout, zipTakeout } from '@memex/exports/testing';
import { faceTestSet, faceTestSetSkip } from '@memex/media/testing';
import { waitUntil } from '@memex/testing';
import {
  SECTIONS_BY_TEST,
  SECTION_TIMEOUT_MS,
  examplesOf,
  printed,
  readmeSession,
  runExamples,
  type ReadmeSession,
} from './readme-run.js';
import { startStack, type TestStack } from './stack.js';

const [TAKEOUT, PHOTOS, WATCHED, WORKER] = SECTIONS_BY_TEST['readme-sources.test.ts'];
const WAIT = { timeoutMs: 300_000 };

function write(file: string, content: string | Buffer): void {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, content);
}

/** A JPEG of one colour made by ffmpeg, with the EXIF a phone writes (time with its offset, GPS, camera) by exiftool. */
function exifPhoto(file: string, colour: string, exif: { taken: string; offset: string; lat: number; lon: number }) {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  execFileSync('ffmpeg', ['-v', 'error', '-f', 'lavfi', '-i', `color=c=${colour}:s=320x240`, '-frames:v', '1', file]);
  execFileSync('exiftool', [
    '-q',
    '-overwrite_original',
    `-DateTimeOriginal=${exif.taken}`,
    `-OffsetTimeOriginal=${exif.offset}`,
    `-GPSLatitude=${Math.abs(exif.lat)}`,
    `-GPSLatitudeRef=${exif.lat < 0 ? 'S' : 'N'}`,
    `-GPSLongitude=${Math.abs(exif.lon)}`,
    `-GPSLongitudeRef=${exif.lon < 0 ? 'W' : 'E'}`,
    '-Make=Memex',
    '-Model=Readme Camera',
    file,
  ]);
}

/** What the reader has: Takeout exports, an Apple Photos export, pictures with faces and a video, folders to watch. */
async function makeHome(home: string): Promise<void> {
  await buildTakeout(path.join(home, 'Downloads'), 'first');
  // The newer export as downloaded: two zip parts, the sidecars in the second.
  const newer = path.join(home, 'unpacked-newer');
  await buildTakeout(newer, 'newer');
  await zipTakeout(newer, path.join(home, 'Downloads'), 'takeout-20261201T101010Z', 2, (key) =>
    key.endsWith('.json') ? 1 : 0,
  );
  await buildTakeout(home, 'first'); // ~/Takeout, a source: the newer export is unpacked there before the rescan
  await buildTakeout(path.join(home, 'Pictures'), 'first'); // ~/Pictures/Takeout
  exifPhoto(path.join(home, 'Pictures/apple-export/IMG_1234.JPG'), 'teal', {
    taken: '2022:08:01 07:00:00',
    offset: '+02:00',
    lat: 46.0207,
    lon: 7.7491,
  });
  write(
    path.join(home, 'Pictures/apple-export/IMG_1234.xmp'),
    `<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">
<rdf:Description rdf:about="" xmlns:dc="http://purl.org/dc/elements/1.1/">
<dc:title><rdf:Alt><rdf:li xml:lang="x-default">Lake</rdf:li></rdf:Alt></dc:title>
<dc:subject><rdf:Bag><rdf:li>water</rdf:li></rdf:Bag></dc:subject>
</rdf:Description></rdf:RDF></x:xmpmeta>`,
  );
  // Five photos of each of two people (the faces test set's portraits): two clusters of faces.
  const set = await faceTestSet();
  for (const person of ['collins', 'hopper'])
    set
      .filter((p) => p.people.length === 1 && p.people[0]!.person === person)
      .slice(0, 5)
      .forEach((photo, i) => write(path.join(home, `Pictures/people/${person}-${i}.jpg`), photo.jpeg));
  execFileSync('ffmpeg', [
    '-v',
    'error',
    '-f',
    'lavfi',
    '-i',
    'testsrc=duration=3:size=320x240:rate=10',
    '-pix_fmt',
    'yuv420p',
    path.join(home, 'Pictures/clip.mp4'),
  ]);
  write(path.join(home, 'Papers/attention.md'), '# Attention\n\nNotes on attention in transformers.\n');
  exifPhoto(path.join(home, 'mnt/photos/harbour.jpg'), 'navy', {
    taken: '2023:05:20 10:00:00',
    offset: '+01:00',
    lat: 53.5461,
    lon: 9.9661,
  });
  exifPhoto(path.join(home, 'volume1/photos/garden.jpg'), 'green', {
    taken: '2024:06:01 12:00:00',
    offset: '+00:00',
    lat: 51.5007,
    lon: -0.1246,
  });
  write(path.join(home, 'volume1/scans/receipt.txt'), 'Receipt for the boiler repair.\n');
}

describe("README's archive sections run as written: Takeout, photos, watched folders, a worker", () => {
  let stack: TestStack;
  let session: ReadmeSession;

  before(async () => {
    // Media reads EXIF, makes renditions and keyframes and finds faces; the rest is other tests'.
    Object.assign(process.env, { MEMEX_OBJECT_TAGS: 'off', MEMEX_OCR: 'off', MEMEX_TRANSCRIBE: 'off' });
    stack = await startStack(['ingest', 'pipelines', 'search', 'media', 'sources']);
    const home = fs.mkdtempSync(path.join(os.tmpdir(), 'memex-readme-sources-'));
    await makeHome(home);
    session = readmeSession(home, stack);
  });
  after(async () => {
    for (const child of session?.running ?? []) child.kill('SIGTERM');
    await stack?.stop();
    if (session) fs.rmSync(session.home, { recursive: true, force: true });
  });

  test(
    'Importing a Google Takeout: two exports imported, a Takeout and a photo library as sources',
    { timeout: SECTION_TIMEOUT_MS },
    async () => {
      await runExamples(examplesOf([TAKEOUT!]), session, {
        before: async (command) => {
          if (command.includes('sources rescan me')) await buildTakeout(session.home, 'newer');
        },
      });
      assert.match(printed(session, /sources rescan me/), /^me: \d+ files; .* 0 failed$/m);
      // The newer export's new message, from the source (its watcher or the rescan read it).
      await waitUntil(async () => {
        const { messages } = await stack.owner.call(MailList, { view: 'all', account: 'import:takeout:me', limit: 50 });
        return messages.some((m) => m.subject === 'Dinner?');
      }, 'the newer export read');
    },
  );

  test(
    'Photos and videos: imports, a photo shown and its thumbnail, places, events, faces named, moved, merged',
    { skip: faceTestSetSkip(), timeout: SECTION_TIMEOUT_MS },
    async () => {
      const photoId = async () => {
        const { events } = await stack.owner.call(MediaEvents, {});
        return events.flatMap((e) => e.items)[0]!;
      };
      let clusters: string[] = [];
      let shown = '';
      await runExamples(examplesOf([PHOTOS!]), session, {
        before: async (command) => {
          if (command.includes('photos show')) {
            await waitUntil(
              async () => (await stack.owner.call(MediaEvents, {})).events.length > 0,
              'photo events',
              WAIT,
            );
            shown = await photoId();
            await waitUntil(
              async () => (await stack.owner.call(MediaGet, { item_id: shown })).renditions.length > 0,
              'a thumbnail',
              WAIT,
            );
          }
          if (command.endsWith('# face clusters, largest first'))
            await waitUntil(
              async () => {
                clusters = (await stack.owner.call(FacesClusters, {})).clusters.map((c) => c.cluster_id);
                return clusters.length >= 2;
              },
              'two clusters of faces',
              WAIT,
            );
        },
        prepare: async (command) => {
          if (command.includes('faces move 01J…:2')) {
            const { faces } = await stack.owner.call(FacesList, { cluster_id: clusters[0]! });
            return command.replace('01J…:2', faces[0]!.face_id);
          }
          if (command.includes('faces merge'))
            return command.replace('fc_…', clusters[1]!).replace('fc_…', clusters[0]!);
          return command.replaceAll('fc_…', clusters[0] ?? 'fc_…').replaceAll('01J…', shown);
        },
      });
      assert.ok(fs.statSync(path.join(session.home, 'thumb.webp')).size > 0, 'the thumbnail written');
      assert.match(printed(session, /faces name/), /Ada Lovelace/);
    },
  );

  test(
    'Watched folders and sources: added, listed, searched, paused, resumed, rescanned, configured, removed',
    { timeout: SECTION_TIMEOUT_MS },
    async () => {
      await runExamples(examplesOf([WATCHED!]), session, {
        prepare: (command) => command.replaceAll('/mnt/photos', path.join(session.home, 'mnt/photos')),
        before: async (command) => {
          if (command.includes('memex search'))
            await waitUntil(
              async () => (await stack.owner.call(Search, { q: 'attention source:papers' })).hits.length > 0,
              'the watched note searchable',
              WAIT,
            );
        },
      });
      assert.match(printed(session, /memex search/), /Attention/);
    },
  );

  test(
    'Folders on another machine: memex worker as its own process, its files items located on it',
    { timeout: SECTION_TIMEOUT_MS },
    async () => {
      await runExamples(examplesOf([WORKER!]), session, {
        // This machine is the memex host: the worker reaches its NATS directly, without the SSH tunnel.
        skip: (command) => command.startsWith('ssh '),
        background: (command) => command.includes('memex worker'),
        prepare: (command) =>
          command
            .replaceAll('/volume1/', `${path.join(session.home, 'volume1')}/`)
            .replace('nats://127.0.0.1:7422', stack.config.natsUrl),
      });
      // Found by its words, then by where it is: on the worker, read through it.
      const onWorker = async () => {
        for (const hit of (await stack.owner.call(Search, { q: '"boiler repair"' })).hits) {
          const { location } = await stack.owner.call(ItemsGet, { id: hit.id });
          if (location?.startsWith('worker:nas:')) return location;
        }
        return undefined;
      };
      let location: string | undefined;
      await waitUntil(async () => (location = await onWorker()) !== undefined, "the worker's receipt found", WAIT);
      assert.equal(location, `worker:nas:${path.join(session.home, 'volume1/scans/receipt.txt')}`);
    },
  );
});
