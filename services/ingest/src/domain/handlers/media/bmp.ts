import { RejectedItem } from '../handler.js';

/**
 * A Windows bitmap's header, read for the photo's size and bit depth: a bitmap has no EXIF, no XMP,
 * no date of its own (the media service decodes its pixels, services/media's bmp.ts). A header no
 * bitmap has, or one stating more pixels than any file we take could hold, is a rejection; pixels
 * cut short (what a half-copied file is) keep the photo, with a warning.
 */

/** Header lengths: OS/2 1.x (12), Windows' BITMAPINFOHEADER (40), its V2, V3 (52, 56), OS/2 2.x (64), V4 and V5. */
const HEADER_SIZES = new Set([12, 40, 52, 56, 64, 108, 124]);

const COMPRESSIONS: Readonly<Record<number, string>> = {
  0: 'uncompressed',
  1: 'RLE8',
  2: 'RLE4',
  3: 'bit fields',
  4: 'JPEG',
  5: 'PNG',
  6: 'bit fields with alpha',
};

/** The most pixels a bitmap taken may have: those the media service decodes (services/media's `BMP_MAX_PIXELS`). */
export const BMP_MAX_PIXELS = 100_000_000;

export interface BmpReading {
  width: number;
  height: number;
  bitDepth: number;
  compression: string;
  warnings: string[];
}

/** Whether the bytes start as a bitmap does: `BM`, then a header length one of them has. */
export const isBmp = (bytes: Buffer): boolean =>
  bytes.length >= 18 && bytes.toString('latin1', 0, 2) === 'BM' && HEADER_SIZES.has(bytes.readUInt32LE(14));

/** The bitmap's size, bit depth and compression, or a RejectedItem saying what is wrong with it. */
export function readBmp(bytes: Buffer, limitBytes: number): BmpReading {
  const headerSize = bytes.readUInt32LE(14);
  if (bytes.length < 14 + headerSize) throw new RejectedItem('not a readable BMP image: it ends inside its header');
  const core = headerSize === 12;
  const width = core ? bytes.readUInt16LE(18) : bytes.readInt32LE(18);
  const height = Math.abs(core ? bytes.readUInt16LE(20) : bytes.readInt32LE(22));
  const bitDepth = bytes.readUInt16LE(core ? 24 : 28);
  const code = core ? 0 : bytes.readUInt32LE(30);
  const compression = COMPRESSIONS[code];
  if (width <= 0 || height <= 0)
    throw new RejectedItem(`not a readable BMP image: its size, ${width} × ${height} pixels, is no image`);
  if (!compression) throw new RejectedItem(`not a readable BMP image: its compression (${code}) is none BMP defines`);
  if (code < 4 && ![1, 4, 8, 16, 24, 32].includes(bitDepth))
    throw new RejectedItem(`not a readable BMP image: ${bitDepth} bits a pixel is no depth BMP has`);
  if (width * height > BMP_MAX_PIXELS)
    throw new RejectedItem(
      `not a readable BMP image: it says it is ${width} × ${height} pixels, more than the ${BMP_MAX_PIXELS / 1e6} megapixels a bitmap may have here`,
    );
  const pixelBytes = Math.ceil((width * bitDepth) / 32) * 4 * height;
  const uncompressed = code === 0 || code === 3 || code === 6;
  // Uncompressed, the pixels take what the header says; run-length coded, two bytes draw 255 at the most.
  const least = uncompressed ? pixelBytes : code === 1 || code === 2 ? (width * height * 2) / 255 : 0;
  if (least > limitBytes)
    throw new RejectedItem(
      `not a readable BMP image: it says it is ${width} × ${height} pixels, more than a file of at most ${limitBytes >> 20} MB holds`,
    );
  const warnings: string[] = [];
  const held = Math.max(bytes.length - bytes.readUInt32LE(10), 0);
  if (uncompressed && held < pixelBytes)
    warnings.push(
      `the BMP image is cut short: its ${width} × ${height} pixels take ${pixelBytes} bytes, the file holds ${held}; no thumbnail can be made of it`,
    );
  return { width, height, bitDepth, compression, warnings };
}
