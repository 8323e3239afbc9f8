import os from 'node:os';
import sharp from 'sharp';
import {
  Ingest,
  ItemsGet,
  MediaGet,
  OWNER_SCOPE,
  type MethodDefinition,
  type ParamsOf,
  type ResultOf,
} from '@memex/contracts';
import { Bus, callMethod } from '@memex/bus';
import { IngestModule } from '@memex/ingest';
import { HumanFaceModel, makeRenditions, MediaModule, ObjectTagger } from '@memex/media';
import { faceTestSet, faceTestSetSkip, imageOnlyPdf, scannedPage } from '@memex/media/testing';
import { startService } from '@memex/runtime';
import { createTestEnv, seededRandom, waitUntil } from '@memex/testing';
import type { BenchResult } from '../result.js';

/** Photos per run: 12-megapixel JPEGs, as phones make them. */
const PHOTOS = 8;
const PAGES = 2;

type Call = <M extends MethodDefinition>(method: M, params: ParamsOf<M>) => Promise<ResultOf<M>>;

/** Ingest (and the media service) in this process on a fresh test environment, for one measurement. */
async function withServices(media: boolean, body: (call: Call) => Promise<void>): Promise<void> {
  const env = await createTestEnv();
  const apps = [await startService((config) => IngestModule.register(config), env.config)];
  if (media) apps.push(await startService((config) => MediaModule.register(config), env.config));
  const bus = await Bus.connect(env.config.natsUrl, 'bench-media');
  try {
    await body((method, params) => callMethod(bus, method, params, { scope: OWNER_SCOPE, timeoutMs: 600_000 }));
  } finally {
    await bus.close();
    for (const app of apps.reverse()) await app.close();
    await env.stop();
  }
}

/** A 4000×3000 JPEG with EXIF (time, GPS, camera) and real texture (noise over a gradient), as a phone writes one. */
async function phonePhoto(i: number): Promise<Buffer> {
  const width = 4000;
  const height = 3000;
  const random = seededRandom(i + 1);
  const small = Buffer.alloc(400 * 300 * 3);
  for (let p = 0; p < small.length; p++) small[p] = Math.floor(((p % 1200) / 1200) * 200 + random() * 55);
  return sharp(small, { raw: { width: 400, height: 300, channels: 3 } })
    .resize(width, height, { kernel: 'cubic' })
    .jpeg({ quality: 88 })
    .withExif({
      IFD0: { Make: 'BenchPhone', Model: 'Model 12', Orientation: String(1 + (i % 2) * 5) },
      IFD2: {
        DateTimeOriginal: `2024:06:${String(1 + (i % 28)).padStart(2, '0')} 12:00:00`,
        OffsetTimeOriginal: '+02:00',
      },
      IFD3: {
        GPSLatitudeRef: 'N',
        GPSLatitude: `${48 + (i % 5)}/1 30/1 0/1`,
        GPSLongitudeRef: 'E',
        GPSLongitude: `${2 + (i % 7)}/1 20/1 0/1`,
      },
    })
    .toBuffer();
}

/**
 * The media pipeline on this CPU: photos/s through memex.ingest (EXIF, identity) and the media
 * service (thumbnail and preview, orientation applied, place) until every one is analysed; the
 * thumbnails alone; OCR pages/s of scanned PDFs through memex.ingest (pdftoppm and PP-OCRv4),
 * with the ONNX execution provider that ran; faces (detection and embedding) and object tags per
 * second in process on the faces test set (Debian's public-domain portraits, see
 * @memex/media/testing), with the backend named.
 */
export async function run(): Promise<BenchResult[]> {
  const photos = await Promise.all(Array.from({ length: PHOTOS }, (_, i) => phonePhoto(i)));
  const load = () => `load ${os.loadavg()[0]!.toFixed(1)}`;
  const results: BenchResult[] = [];

  let started = performance.now();
  for (const photo of photos) await makeRenditions(photo, 'jpeg');
  const renditionSeconds = (performance.now() - started) / 1000;
  results.push({
    suite: 'media',
    name: `thumbnail + preview of ${PHOTOS} 12-MP JPEGs (sharp, one at a time)`,
    value: Math.round((PHOTOS / renditionSeconds) * 10) / 10,
    unit: 'photos/s',
    notes: `${renditionSeconds.toFixed(1)} s; ${load()}`,
  });

  const noFaceSet = faceTestSetSkip();
  if (noFaceSet) console.warn(`faces not measured: ${noFaceSet}`);
  else {
    const set = await faceTestSet();
    const pictures = await Promise.all(
      set.map(async (p) => {
        const { data, info } = await sharp(p.jpeg).removeAlpha().raw().toBuffer({ resolveWithObject: true });
        return { data, width: info.width, height: info.height };
      }),
    );
    const faces = await HumanFaceModel.load();
    await faces.detect(pictures[0]!); // the first run compiles the WASM kernels
    started = performance.now();
    let found = 0;
    for (const picture of pictures) found += (await faces.detect(picture)).length;
    const faceSeconds = (performance.now() - started) / 1000;
    results.push({
      suite: 'media',
      name: `faces found and embedded in ${pictures.length} photos of up to 1400×1000 (${faces.name}, one at a time)`,
      value: Math.round((found / faceSeconds) * 10) / 10,
      unit: 'faces/s',
      notes: `${found} faces, ${(pictures.length / faceSeconds).toFixed(1)} photos/s, ${faceSeconds.toFixed(1)} s, backend ${faces.provider}; ${load()}`,
    });
    const tagger = await ObjectTagger.load();
    await tagger.tag(pictures[0]!);
    started = performance.now();
    for (const picture of pictures) await tagger.tag(picture);
    const tagSeconds = (performance.now() - started) / 1000;
    results.push({
      suite: 'media',
      name: `object tags of ${pictures.length} photos (${tagger.name}, one at a time)`,
      value: Math.round((pictures.length / tagSeconds) * 10) / 10,
      unit: 'photos/s',
      notes: `${tagSeconds.toFixed(1)} s, backend wasm; ${load()}`,
    });
  }

  // Metadata and thumbnails: OCR off (set before ingest starts its parse workers, which copy the
  // environment), faces and object tags off (measured above), so the figure is what every photo costs.
  const settings = { MEMEX_OCR: 'off', MEMEX_FACE_MODEL: 'off', MEMEX_OBJECT_TAGS: 'off' };
  const saved = Object.fromEntries(Object.keys(settings).map((name) => [name, process.env[name]]));
  Object.assign(process.env, settings);
  await withServices(true, async (call) => {
    started = performance.now();
    const ids: string[] = [];
    // Two per request: a request is one NATS message (8 MB at most).
    for (let i = 0; i < photos.length; i += 2) {
      const { results: answered } = await call(Ingest, {
        items: photos.slice(i, i + 2).map((photo, j) => ({
          type: 'image/jpeg',
          data: photo.toString('base64'),
          source: { kind: 'folder', id: 'bench' },
          external_id: `IMG_${i + j}.jpg`,
          attributes: { filename: `IMG_${i + j}.jpg` },
        })),
      });
      ids.push(...answered.map((r) => r.id!));
    }
    await waitUntil(
      async () =>
        (await Promise.all(ids.map((id) => call(MediaGet, { item_id: id }).catch(() => undefined)))).every(
          (p) => p?.status === 'analyzed',
        ),
      'every photo analysed',
      { timeoutMs: 600_000, everyMs: 200 },
    );
    const endToEnd = (performance.now() - started) / 1000;
    results.push({
      suite: 'media',
      name: `${PHOTOS} 12-MP photos through memex.ingest and the media service to analysed (EXIF, thumbnail, preview, place)`,
      value: Math.round((PHOTOS / endToEnd) * 100) / 100,
      unit: 'photos/s',
      notes: `${endToEnd.toFixed(1)} s, 2 media workers, OCR, faces and object tags off; ${load()}`,
    });
  });
  for (const [name, value] of Object.entries(saved)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }

  // OCR: scanned pages through memex.ingest (pdftoppm renders, PP-OCRv4 reads).
  await withServices(false, async (call) => {
    const page = Array.from(
      { length: 24 },
      (_, i) => `Line ${i + 1} of a scanned letter about the quarterly accounts and the garden.`,
    );
    const pdfs = await Promise.all(Array.from({ length: PAGES }, async () => imageOnlyPdf(await scannedPage(page))));
    started = performance.now();
    const { results: scanned, seq } = await call(Ingest, {
      items: pdfs.map((pdf, i) => ({
        type: 'application/pdf',
        data: pdf.toString('base64'),
        source: { kind: 'folder', id: 'bench' },
        external_id: `scan-${i}.pdf`,
      })),
    });
    const ocrSeconds = (performance.now() - started) / 1000;
    const first = await call(ItemsGet, { id: scanned[0]!.id!, min_seq: seq });
    const warnings = ((first.meta['warnings'] as string[] | undefined) ?? []).join('; ');
    const provider = /PP-OCRv4 on (\w+)/.exec(warnings)?.[1];
    if (!provider || !first.text.includes('quarterly'))
      throw new Error(`the scanned page was not read by OCR: ${warnings}`);
    results.push({
      suite: 'media',
      name: `OCR of ${PAGES} scanned A4 pages at 150 dpi through memex.ingest (pdftoppm + PP-OCRv4)`,
      value: Math.round((PAGES / ocrSeconds) * 100) / 100,
      unit: 'pages/s',
      notes: `${ocrSeconds.toFixed(1)} s, ONNX provider ${provider}; ${load()}`,
    });
  });
  return results;
}
