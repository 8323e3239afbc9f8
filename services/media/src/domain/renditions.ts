import { execFile } from 'node:child_process';
import sharp, { type Sharp } from 'sharp';
import type { Rendition } from '@memex/contracts';
import { TaskPool } from '@memex/workers';
import type { DecodedHeic } from './heic-worker.js';
import { BmpError, decodeBmp } from './bmp.js';

/** The renditions made of every photo: the long side in pixels (never enlarged). */
export const RENDITION_SIZES: ReadonlyArray<{ name: Rendition['name']; longSide: number }> = [
  { name: 'thumb', longSide: 256 },
  { name: 'preview', longSide: 1600 },
];

export interface MadeRendition extends Omit<Rendition, 'sha256'> {
  webp: Buffer;
}

/** Why a photo has no renditions, said to its owner. */
export class NoRendition extends Error {}

/**
 * A RAW file's own JPEG preview, extracted by exiftool (Debian `libimage-exiftool-perl`): the
 * largest of JpgFromRaw and PreviewImage. Decoding the sensor data itself is a RAW developer's job.
 */
async function rawPreview(bytes: Buffer): Promise<Buffer> {
  for (const tag of ['-JpgFromRaw', '-PreviewImage']) {
    const preview = await new Promise<Buffer>((resolve, reject) => {
      const child = execFile(
        'exiftool',
        ['-b', tag, '-'],
        { encoding: 'buffer', maxBuffer: 64 * 1024 * 1024 },
        (error, stdout) =>
          error ? reject(new NoRendition(`exiftool could not read the RAW file: ${error.message}`)) : resolve(stdout),
      );
      child.stdin!.end(bytes);
    });
    if (preview.length > 2 && preview[0] === 0xff && preview[1] === 0xd8) return preview;
  }
  throw new NoRendition(
    'the RAW file holds no whole embedded JPEG preview (JpgFromRaw or PreviewImage): it may be cut short',
  );
}

/**
 * HEIC as iPhones write it is HEVC-coded, which this sharp build's libheif does not decode (it
 * decodes AVIF): libheif compiled to WebAssembly (`heic-decode`) does, in a worker thread, since a
 * 12-megapixel photo takes it about half a second of CPU.
 */
const heicDecoder = new TaskPool<Uint8Array, DecodedHeic>({
  name: 'the HEIC decoder',
  script: new URL('./heic-worker.js', import.meta.url),
  threads: 1,
  heapMb: 1024,
});

/**
 * Longer than this and a HEIC or JPEG XL photo is taken for a hostile one (a 48-megapixel HEIC
 * decodes in ~3 s).
 */
const HEIC_DECODE_TIMEOUT_MS = 60_000;

/**
 * Whether a HEIF file ends inside one of its boxes (`mdat`, where the pixels are): libheif decodes
 * the tiles it has and leaves the rest grey, where sharp refuses a cut-short JPEG (`failOn`).
 */
function heifCutShort(bytes: Buffer): boolean {
  for (let at = 0; at + 8 <= bytes.length;) {
    let size = bytes.readUInt32BE(at);
    if (size === 1 && at + 16 <= bytes.length) size = Number(bytes.readBigUInt64BE(at + 8));
    // Size 0: the box runs to the end of the file, wherever that is.
    if (size === 0) return false;
    if (size < 8 || at + size > bytes.length) return true;
    at += size;
  }
  return false;
}

/** A HEIC photo's pixels, upright: libheif applies the file's own rotation and mirroring (irot, imir). */
async function decodeHeic(bytes: Buffer): Promise<Sharp> {
  if (heifCutShort(bytes)) throw new NoRendition('the HEIC photo is cut short: the file ends inside its image data');
  try {
    const { width, height, data } = await heicDecoder.run(new Uint8Array(bytes), { timeoutMs: HEIC_DECODE_TIMEOUT_MS });
    return sharp(Buffer.from(data.buffer, data.byteOffset, data.byteLength), { raw: { width, height, channels: 4 } });
  } catch (error) {
    // The pool's own failures (a timeout, out of memory) are worded for a person already.
    throw new NoRendition(
      `the HEIC photo could not be decoded: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
}

/**
 * JPEG XL, which this sharp build does not decode: jxl-oxide compiled to WebAssembly does, in a
 * worker thread, to a PNG that sharp reads.
 */
const jxlDecoder = new TaskPool<Uint8Array, Uint8Array>({
  name: 'the JPEG XL decoder',
  script: new URL('./jxl-worker.js', import.meta.url),
  threads: 1,
  heapMb: 1024,
});

/** A JPEG XL photo's pixels, upright: the decoder applies the codestream's orientation (its EXIF's is not the image's). */
async function decodeJxl(bytes: Buffer): Promise<Sharp> {
  try {
    const png = await jxlDecoder.run(new Uint8Array(bytes), { timeoutMs: HEIC_DECODE_TIMEOUT_MS });
    return await decodeUpright(Buffer.from(png.buffer, png.byteOffset, png.byteLength));
  } catch (error) {
    throw new NoRendition(
      `the JPEG XL photo could not be decoded: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
}

/** A Windows bitmap's pixels (bmp.ts; a JPEG or PNG it holds, through sharp). Bitmaps have no orientation. */
async function decodeBitmap(bytes: Buffer): Promise<Sharp> {
  let decoded;
  try {
    decoded = decodeBmp(bytes);
  } catch (error) {
    if (error instanceof BmpError) throw new NoRendition(`the BMP image could not be decoded: ${error.message}`);
    throw error;
  }
  if ('encoded' in decoded) return decodeUpright(decoded.encoded);
  const { width, height, channels, data } = decoded;
  return sharp(data, { raw: { width, height, channels } });
}

/** An image's pixels, turned upright by its EXIF orientation, decoded once: each size is resized from them. */
async function decodeUpright(source: Buffer): Promise<Sharp> {
  const { data, info } = await sharp(source, { failOn: 'truncated', limitInputPixels: 300_000_000 })
    .rotate()
    .raw()
    .toBuffer({ resolveWithObject: true });
  return sharp(data, { raw: { width: info.width, height: info.height, channels: info.channels } });
}

/**
 * WebP renditions of a photo with its orientation applied (so a portrait shot turned by the
 * camera shows upright): a RAW file's embedded preview, HEIC through sharp when it can (AVIF-coded)
 * and else through libheif's HEVC decoder, JPEG XL through jxl-oxide, a Windows bitmap through
 * bmp.ts, every other format through sharp.
 */
export async function makeRenditions(bytes: Buffer, format: string): Promise<MadeRendition[]> {
  const source = format === 'raw' ? await rawPreview(bytes) : bytes;
  let upright: Sharp;
  try {
    upright =
      format === 'jxl'
        ? await decodeJxl(bytes)
        : format === 'bmp'
          ? await decodeBitmap(bytes)
          : await decodeUpright(source);
  } catch (error) {
    if (error instanceof NoRendition) throw error;
    if (format === 'heic') upright = await decodeHeic(bytes);
    else
      throw new NoRendition(
        `the image could not be decoded: ${error instanceof Error ? error.message : String(error)}`,
      );
  }
  const made: MadeRendition[] = [];
  for (const { name, longSide } of RENDITION_SIZES) {
    const { data, info } = await upright
      .clone()
      .resize({ width: longSide, height: longSide, fit: 'inside', withoutEnlargement: true })
      .webp({ quality: 80 })
      .toBuffer({ resolveWithObject: true });
    made.push({ name, width: info.width, height: info.height, webp: data });
  }
  return made;
}
