/**
 * Windows bitmaps (.bmp), which this sharp build does not read: decoded here to raw pixels for
 * sharp. Every header Windows and OS/2 wrote (12, 40, 52, 56, 64, 108 and 124 bytes); 1-, 4- and
 * 8-bit palettes, 16- and 32-bit pixels by their masks (BI_BITFIELDS, BI_ALPHABITFIELDS) or the
 * default 5-5-5 and 8-8-8, 24-bit, RLE8 and RLE4; a JPEG or PNG inside (BI_JPEG, BI_PNG) is handed
 * on as it is. What a file cannot be (a size no bitmap has, pixels past its end, more than the
 * decoder takes) is a `BmpError` saying which, found before anything is allocated for its pixels.
 */

/** The most pixels decoded: 100 megapixels (300 MB of RGB). */
export const BMP_MAX_PIXELS = 100_000_000;

/** Pixels an RLE-compressed byte may stand for at the most (a run of 255 in two bytes is 128): more is no bitmap. */
const RLE_PIXELS_PER_BYTE = 1024;

export class BmpError extends Error {}

export type DecodedBmp =
  | { width: number; height: number; channels: 3 | 4; data: Buffer }
  /** A JPEG or PNG the bitmap holds whole (BI_JPEG, BI_PNG). */
  | { encoded: Buffer };

const HEADER_SIZES = new Set([12, 40, 52, 56, 64, 108, 124]);

/** The compressions (`biCompression`) read: none, RLE8, RLE4, bit fields, JPEG, PNG, bit fields with alpha. */
const [BI_RGB, BI_RLE8, BI_RLE4, BI_BITFIELDS, BI_JPEG, BI_PNG, BI_ALPHABITFIELDS] = [0, 1, 2, 3, 4, 5, 6] as const;

/** A channel's mask: where its bits sit and how many there are, to be scaled to 8 bits. */
interface Channel {
  mask: number;
  shift: number;
  max: number;
}

function channel(mask: number): Channel {
  if (mask === 0) return { mask: 0, shift: 0, max: 0 };
  let shift = 0;
  while (((mask >>> shift) & 1) === 0) shift++;
  return { mask, shift, max: mask >>> shift };
}

const value = (pixel: number, c: Channel) =>
  c.max === 0 ? 0 : Math.round((((pixel & c.mask) >>> c.shift) * 255) / c.max);

/** Rejects input in words for a person: the BMP and what is wrong with it. */
const fail = (reason: string): never => {
  throw new BmpError(reason);
};

export function decodeBmp(bytes: Buffer): DecodedBmp {
  if (bytes.length < 26 || bytes.toString('latin1', 0, 2) !== 'BM') fail('not a BMP file: it does not start with "BM"');
  const headerSize = bytes.readUInt32LE(14);
  if (!HEADER_SIZES.has(headerSize)) fail(`its header says it is ${headerSize} bytes long, which no BMP header is`);
  if (bytes.length < 14 + headerSize) fail('the file is cut short inside its header');
  const core = headerSize === 12;
  const width = core ? bytes.readUInt16LE(18) : bytes.readInt32LE(18);
  const signedHeight = core ? bytes.readUInt16LE(20) : bytes.readInt32LE(22);
  const bitCount = bytes.readUInt16LE(core ? 24 : 28);
  const compression = core ? BI_RGB : bytes.readUInt32LE(30);
  const pixelOffset = bytes.readUInt32LE(10);
  const height = Math.abs(signedHeight);
  // Rows are stored from the bottom up unless the height is negative.
  const topDown = signedHeight < 0;
  if (width <= 0 || height <= 0) fail(`its size, ${width} × ${signedHeight} pixels, is no image`);
  if (width * height > BMP_MAX_PIXELS)
    fail(`it says it is ${width} × ${height} pixels, more than the ${BMP_MAX_PIXELS / 1e6} megapixels read here`);
  if (pixelOffset >= bytes.length)
    fail(`its pixels would start at byte ${pixelOffset}, past its end (${bytes.length})`);
  if (compression === BI_JPEG || compression === BI_PNG) return { encoded: bytes.subarray(pixelOffset) };
  // OS/2's 64-byte header gives 3 and 4 other meanings (Huffman, RLE24), which no one has written since.
  if (headerSize === 64 && compression === BI_BITFIELDS) fail('OS/2 Huffman-coded bitmaps are not read');

  const bitfields = compression === BI_BITFIELDS || compression === BI_ALPHABITFIELDS;
  const masksAt = 14 + 40;
  const maskCount = compression === BI_ALPHABITFIELDS || headerSize >= 56 ? 4 : 3;
  let masks: number[];
  if (bitfields) {
    if (bitCount !== 16 && bitCount !== 32) fail(`bit-field masks with ${bitCount}-bit pixels`);
    if (bytes.length < masksAt + maskCount * 4) fail('the file is cut short inside its colour masks');
    masks = Array.from({ length: maskCount }, (_, i) => bytes.readUInt32LE(masksAt + i * 4));
  } else masks = bitCount === 16 ? [0x7c00, 0x03e0, 0x001f, 0] : [0xff0000, 0xff00, 0xff, 0];
  const [red, green, blue, alpha = channel(0)] = masks.map(channel) as [Channel, Channel, Channel, Channel?];
  const channels = alpha.max > 0 ? 4 : 3;

  // The palette follows the header (and, after a 40-byte header, the masks).
  const paletteAt = 14 + headerSize + (headerSize === 40 && bitfields ? maskCount * 4 : 0);
  const entry = core ? 3 : 4;
  const colorsUsed = core ? 0 : bytes.readUInt32LE(46);
  const palette: Array<[number, number, number]> = [];
  if (bitCount <= 8) {
    const count = Math.min(colorsUsed || 1 << bitCount, 1 << bitCount, Math.floor((pixelOffset - paletteAt) / entry));
    for (let i = 0; i < count; i++) {
      const at = paletteAt + i * entry;
      palette.push([bytes[at + 2]!, bytes[at + 1]!, bytes[at]!]);
    }
  }

  const rle = compression === BI_RLE8 || compression === BI_RLE4;
  if (rle && bitCount !== (compression === BI_RLE8 ? 8 : 4))
    fail(`RLE${compression === BI_RLE8 ? 8 : 4} compression with ${bitCount}-bit pixels`);
  if (!rle && compression !== BI_RGB && !bitfields) fail(`its compression (${compression}) is none BMP defines`);
  if (!rle && ![1, 4, 8, 16, 24, 32].includes(bitCount)) fail(`it has ${bitCount} bits a pixel, which BMP has not`);
  const data = bytes.subarray(pixelOffset);
  const rowSize = Math.ceil((width * bitCount) / 32) * 4;
  if (!rle && rowSize * height > data.length)
    fail(
      `the file is cut short: its ${width} × ${height} pixels at ${bitCount} bits need ${rowSize * height} bytes, it holds ${data.length}`,
    );
  if (rle && width * height > data.length * RLE_PIXELS_PER_BYTE)
    fail(`it says it is ${width} × ${height} pixels, more than its ${data.length} bytes of RLE data can hold`);

  const out = Buffer.alloc(width * height * channels);
  const put = (x: number, row: number, r: number, g: number, b: number, a = 255) => {
    const y = topDown ? row : height - 1 - row;
    const at = (y * width + x) * channels;
    out[at] = r;
    out[at + 1] = g;
    out[at + 2] = b;
    if (channels === 4) out[at + 3] = a;
  };
  const indexed = (x: number, row: number, index: number) => {
    const [r, g, b] = palette[index] ?? [0, 0, 0];
    put(x, row, r, g, b);
  };

  if (rle) decodeRle(data, compression === BI_RLE8 ? 8 : 4, width, height, indexed);
  else
    for (let row = 0; row < height; row++) {
      const start = row * rowSize;
      for (let x = 0; x < width; x++) {
        if (bitCount <= 8) {
          const bit = x * bitCount;
          const index = (data[start + (bit >> 3)]! >> (8 - bitCount - (bit & 7))) & ((1 << bitCount) - 1);
          indexed(x, row, index);
        } else if (bitCount === 24) {
          const at = start + x * 3;
          put(x, row, data[at + 2]!, data[at + 1]!, data[at]!);
        } else {
          const pixel = bitCount === 16 ? data.readUInt16LE(start + x * 2) : data.readUInt32LE(start + x * 4);
          put(x, row, value(pixel, red), value(pixel, green), value(pixel, blue), value(pixel, alpha));
        }
      }
    }
  return { width, height, channels, data: out };
}

/**
 * RLE8 and RLE4 (rows from the bottom, always): runs of a colour, absolute runs padded to a
 * 16-bit boundary, ends of lines, a delta that skips, the end of the bitmap. Pixels a delta or an
 * early end skips stay black; a run past the row's end is clipped.
 */
function decodeRle(
  data: Buffer,
  bits: 4 | 8,
  width: number,
  height: number,
  indexed: (x: number, row: number, index: number) => void,
): void {
  let x = 0;
  let row = 0;
  let at = 0;
  const pixel = (index: number) => {
    if (x < width && row < height) indexed(x, row, index);
    x++;
  };
  while (row < height) {
    if (at + 2 > data.length) fail('the file is cut short inside its RLE data');
    const count = data[at]!;
    const code = data[at + 1]!;
    at += 2;
    if (count > 0) {
      for (let i = 0; i < count; i++) pixel(bits === 8 ? code : i % 2 === 0 ? code >> 4 : code & 0x0f);
    } else if (code === 0) {
      x = 0;
      row++;
    } else if (code === 1) {
      return;
    } else if (code === 2) {
      if (at + 2 > data.length) fail('the file is cut short inside its RLE data');
      x += data[at]!;
      row += data[at + 1]!;
      at += 2;
    } else {
      const length = bits === 8 ? code : Math.ceil(code / 2);
      if (at + length > data.length) fail('the file is cut short inside its RLE data');
      for (let i = 0; i < code; i++)
        pixel(bits === 8 ? data[at + i]! : (data[at + (i >> 1)]! >> (i % 2 === 0 ? 4 : 0)) & 0x0f);
      at += length + (length % 2);
    }
  }
}
