/** Windows bitmaps written from scratch, as Paint, GIMP and ImageMagick lay them out. */

export type Rgba = [r: number, g: number, b: number, a?: number];

export interface BmpSpec {
  width: number;
  height: number;
  /** 1, 4 and 8 take a palette of the colours drawn; 16 is 5-5-5 (5-6-5 with bit fields); 32 is BGRX (BGRA with bit fields). */
  bits: 1 | 4 | 8 | 16 | 24 | 32;
  /** The colour at (x, y), y from the top. */
  pixel: (x: number, y: number) => Rgba;
  /** `bitfields` for 16 and 32 bits, `rle` for 4 and 8 (RLE4, RLE8: runs on even rows, absolute runs on odd ones). */
  compression?: 'rgb' | 'bitfields' | 'rle';
  /** Rows from the top (a negative height) rather than from the bottom. */
  topDown?: boolean;
  /** OS/2's 12-byte header, BITMAPINFOHEADER (40, the default) or BITMAPV5HEADER (124). */
  header?: 12 | 40 | 124;
}

const COLOURS: Rgba[] = [
  [255, 0, 0],
  [0, 255, 0],
  [0, 0, 255],
  [255, 255, 255],
];
/** Stripes of two colours (1 bit) or four, a pixel's colour by its column and row. */
export const stripes =
  (colours: number) =>
  (x: number, y: number): Rgba =>
    COLOURS[(x + 2 * (y % 2)) % colours]!;

/** Bitmaps of every depth, header and compression the photo handler reads (5 × 3 pixels: rows padded). */
export const BITMAPS: Array<{ name: string; spec: BmpSpec }> = [
  { name: '1-bit', spec: { width: 5, height: 3, bits: 1, pixel: stripes(2) } },
  { name: '4-bit', spec: { width: 5, height: 3, bits: 4, pixel: stripes(4) } },
  { name: '8-bit', spec: { width: 5, height: 3, bits: 8, pixel: stripes(4) } },
  { name: '8-bit, OS/2 header', spec: { width: 5, height: 3, bits: 8, pixel: stripes(4), header: 12 } },
  { name: '8-bit RLE8', spec: { width: 5, height: 3, bits: 8, pixel: stripes(4), compression: 'rle' } },
  { name: '4-bit RLE4', spec: { width: 5, height: 3, bits: 4, pixel: stripes(4), compression: 'rle' } },
  { name: '16-bit 5-5-5', spec: { width: 5, height: 3, bits: 16, pixel: stripes(4) } },
  {
    name: '16-bit 5-6-5 bit fields',
    spec: { width: 5, height: 3, bits: 16, pixel: stripes(4), compression: 'bitfields' },
  },
  { name: '24-bit', spec: { width: 5, height: 3, bits: 24, pixel: stripes(4) } },
  { name: '24-bit top-down', spec: { width: 5, height: 3, bits: 24, pixel: stripes(4), topDown: true } },
  { name: '32-bit', spec: { width: 5, height: 3, bits: 32, pixel: stripes(4) } },
  {
    name: '32-bit with alpha, V5 header',
    spec: { width: 5, height: 3, bits: 32, pixel: stripes(4), compression: 'bitfields', header: 124 },
  },
];

const MASKS: Record<16 | 32, number[]> = {
  16: [0xf800, 0x07e0, 0x001f, 0],
  32: [0x00ff0000, 0x0000ff00, 0x000000ff, 0xff000000],
};

/** A `.bmp` file of the spec: file header, info header, masks, palette, then the pixels. */
export function bmp(spec: BmpSpec): Buffer {
  const { width, height, bits, pixel, compression = 'rgb', topDown = false, header = 40 } = spec;
  const palette: Rgba[] = [];
  const indexOf = (color: Rgba) => {
    let index = palette.findIndex((c) => c[0] === color[0] && c[1] === color[1] && c[2] === color[2]);
    if (index < 0) index = palette.push(color) - 1;
    if (index >= 1 << bits) throw new Error(`more than ${1 << bits} colours in a ${bits}-bit bitmap`);
    return index;
  };
  // Rows as stored: from the bottom unless top-down.
  const rows = Array.from({ length: height }, (_, i) => (topDown ? i : height - 1 - i));
  const bitfields = compression === 'bitfields';
  const masks = bitfields ? MASKS[bits as 16 | 32] : [];

  let pixels: Buffer;
  if (compression === 'rle') {
    const out: number[] = [];
    for (const [r, y] of rows.entries()) {
      const indices = Array.from({ length: width }, (_, x) => indexOf(pixel(x, y)));
      if (r % 2 === 0) {
        for (let x = 0; x < width;) {
          let run = 1;
          while (x + run < width && run < 255 && indices[x + run] === indices[x]) run++;
          out.push(run, bits === 8 ? indices[x]! : (indices[x]! << 4) | indices[x]!);
          x += run;
        }
      } else {
        for (let x = 0; x < width; x += 255) {
          const chunk = indices.slice(x, x + 255);
          // An absolute run is three pixels at the least; shorter ones go as runs of one.
          if (chunk.length < 3) {
            for (const index of chunk) out.push(1, bits === 8 ? index : index << 4);
            continue;
          }
          const data =
            bits === 8 ? chunk : chunk.flatMap((index, i) => (i % 2 === 0 ? [(index << 4) | (chunk[i + 1] ?? 0)] : []));
          out.push(0, chunk.length, ...data, ...(data.length % 2 ? [0] : []));
        }
      }
      out.push(0, r === height - 1 ? 1 : 0);
    }
    pixels = Buffer.from(out);
  } else {
    const rowSize = Math.ceil((width * bits) / 32) * 4;
    pixels = Buffer.alloc(rowSize * height);
    for (const [r, y] of rows.entries()) {
      const start = r * rowSize;
      for (let x = 0; x < width; x++) {
        const [red, green, blue, alpha = 255] = pixel(x, y);
        if (bits <= 8) {
          const bit = x * bits;
          pixels[start + (bit >> 3)]! |= indexOf([red, green, blue]) << (8 - bits - (bit & 7));
        } else if (bits === 24) pixels.set([blue, green, red], start + x * 3);
        else if (bits === 16)
          pixels.writeUInt16LE(
            bitfields
              ? ((red >> 3) << 11) | ((green >> 2) << 5) | (blue >> 3)
              : ((red >> 3) << 10) | ((green >> 3) << 5) | (blue >> 3),
            start + x * 2,
          );
        else
          pixels.writeUInt32LE(
            (((bitfields ? alpha : 0) << 24) | (red << 16) | (green << 8) | blue) >>> 0,
            start + x * 4,
          );
      }
    }
  }

  const core = header === 12;
  const info = Buffer.alloc(header);
  info.writeUInt32LE(header, 0);
  if (core) {
    info.writeUInt16LE(width, 4);
    info.writeUInt16LE(height, 6);
    info.writeUInt16LE(1, 8);
    info.writeUInt16LE(bits, 10);
  } else {
    info.writeInt32LE(width, 4);
    info.writeInt32LE(topDown ? -height : height, 8);
    info.writeUInt16LE(1, 12);
    info.writeUInt16LE(bits, 14);
    info.writeUInt32LE(compression === 'rle' ? (bits === 8 ? 1 : 2) : bitfields ? 3 : 0, 16);
    info.writeUInt32LE(pixels.length, 20);
    info.writeInt32LE(2835, 24);
    info.writeInt32LE(2835, 28);
    info.writeUInt32LE(bits <= 8 ? palette.length : 0, 32);
    if (header === 124) {
      masks.forEach((mask, i) => info.writeUInt32LE(mask >>> 0, 40 + i * 4));
      info.write('BGRs', 56, 'latin1');
    }
  }
  const afterHeader =
    header === 40 && bitfields ? Buffer.concat(masks.slice(0, 3).map((m) => numberLE(m))) : Buffer.alloc(0);
  const entry = core ? 3 : 4;
  // A core bitmap's palette has every entry its depth allows.
  const colours = bits <= 8 ? (core ? 1 << bits : palette.length) : 0;
  const table = Buffer.alloc(colours * entry);
  palette.forEach(([r, g, b], i) => table.set([b, g, r], i * entry));
  const offset = 14 + header + afterHeader.length + table.length;
  const file = Buffer.alloc(14);
  file.write('BM', 0, 'latin1');
  file.writeUInt32LE(offset + pixels.length, 2);
  file.writeUInt32LE(offset, 10);
  return Buffer.concat([file, info, afterHeader, table, pixels]);
}

const numberLE = (value: number) => {
  const bytes = Buffer.alloc(4);
  bytes.writeUInt32LE(value >>> 0);
  return bytes;
};
