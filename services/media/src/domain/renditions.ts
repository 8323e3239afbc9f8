import { execFile } from 'node:child_process';
import sharp, { type Sharp } from 'sharp';
import type { Rendition } from '@memex/contracts';

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
 * WebP renditions of a photo with its EXIF orientation applied (so a portrait shot turned by the
 * camera shows upright). HEVC-coded HEIC is refused with the reason: this sharp build's libheif
 * decodes AVIF only.
 */
export async function makeRenditions(bytes: Buffer, format: string): Promise<MadeRendition[]> {
  const source = format === 'raw' ? await rawPreview(bytes) : bytes;
  if (format === 'heic') {
    throw new NoRendition(
      'HEIC/HEIF coded with HEVC cannot be decoded here (sharp decodes AVIF only); its metadata is kept',
    );
  }
  let upright: Sharp;
  try {
    // One decode, rotated once; each size is resized from that.
    const { data, info } = await sharp(source, { failOn: 'truncated', limitInputPixels: 300_000_000 })
      .rotate()
      .raw()
      .toBuffer({ resolveWithObject: true });
    upright = sharp(data, { raw: { width: info.width, height: info.height, channels: info.channels } });
  } catch (error) {
    throw new NoRendition(`the image could not be decoded: ${error instanceof Error ? error.message : String(error)}`);
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
