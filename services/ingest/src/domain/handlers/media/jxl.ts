import { brotliDecompressSync } from 'node:zlib';
import { isoBoxes } from './containers.js';

/**
 * JPEG XL (ISO/IEC 18181) as files hold it: a bare codestream (`FF 0A`), or an ISO BMFF container
 * (its first box `JXL `) whose boxes hold the codestream (`jxlc`, or split over `jxlp` boxes, each
 * led by a 4-byte index) and the metadata: `Exif` (a 4-byte offset to the TIFF header, then TIFF)
 * and `xml ` (XMP), either possibly Brotli-compressed in a `brob` box (its inner type first). A
 * JPEG recompressed by `cjxl` keeps its EXIF there. The EXIF's orientation is not the image's:
 * the codestream's own is (decoders apply it), so the shown size comes from the codestream.
 */

const CONTAINER_SIGNATURE = Buffer.from([0, 0, 0, 0x0c, 0x4a, 0x58, 0x4c, 0x20, 0x0d, 0x0a, 0x87, 0x0a]);
/** More than this decompressed from one box is no metadata but a decompression bomb. */
const MAX_BOX_BYTES = 16 * 1024 * 1024;

export function isJxl(bytes: Buffer): boolean {
  return (bytes.length >= 2 && bytes[0] === 0xff && bytes[1] === 0x0a) || startsWith(bytes, CONTAINER_SIGNATURE);
}

function startsWith(bytes: Buffer, prefix: Buffer): boolean {
  return bytes.length >= prefix.length && bytes.subarray(0, prefix.length).equals(prefix);
}

/** The container's boxes with their payloads, a compressed one (`brob`) as the box it holds. */
function* boxes(bytes: Buffer): Generator<{ type: string; payload: Buffer }> {
  for (const box of isoBoxes(bytes)) {
    const payload = bytes.subarray(box.start, box.end);
    if (box.type !== 'brob') {
      yield { type: box.type, payload };
      continue;
    }
    if (payload.length < 4) continue;
    try {
      const inner = brotliDecompressSync(payload.subarray(4), { maxOutputLength: MAX_BOX_BYTES });
      yield { type: payload.toString('latin1', 0, 4), payload: inner };
    } catch {
      // A compressed box that does not decompress (or would be too large) holds nothing we read.
    }
  }
}

/** The TIFF bytes of the file's EXIF (what exifr reads), or null when it has none. */
export function jxlExif(bytes: Buffer): Buffer | null {
  if (!startsWith(bytes, CONTAINER_SIGNATURE)) return null;
  for (const { type, payload } of boxes(bytes)) {
    if (type !== 'Exif' || payload.length < 4) continue;
    const offset = 4 + payload.readUInt32BE(0);
    return offset < payload.length ? payload.subarray(offset) : null;
  }
  return null;
}

/** The file's XMP (its `xml ` box), or null when it has none. */
export function jxlXmp(bytes: Buffer): Buffer | null {
  if (!startsWith(bytes, CONTAINER_SIGNATURE)) return null;
  for (const { type, payload } of boxes(bytes)) if (type === 'xml ') return payload;
  return null;
}

/** The first bytes of the codestream (enough for its headers). */
function codestreamStart(bytes: Buffer): Buffer | null {
  if (!startsWith(bytes, CONTAINER_SIGNATURE)) return bytes;
  const parts: Buffer[] = [];
  for (const { type, payload } of boxes(bytes)) {
    if (type === 'jxlc') return payload;
    if (type === 'jxlp' && payload.length > 4) {
      parts.push(payload.subarray(4));
      if (Buffer.concat(parts).length >= 64) break;
    }
  }
  return parts.length > 0 ? Buffer.concat(parts) : null;
}

/** Reads a codestream's bits as JPEG XL packs them: least significant first. */
class Bits {
  private at = 0;
  constructor(private readonly bytes: Buffer) {}

  read(count: number): number {
    let value = 0;
    for (let i = 0; i < count; i++, this.at++) {
      const byte = this.bytes[this.at >> 3];
      if (byte === undefined) throw new RangeError('the codestream ends inside its header');
      value += ((byte >> (this.at & 7)) & 1) * 2 ** i;
    }
    return value;
  }

  /** U32(Bits(9), Bits(13), Bits(18), Bits(30)): a selector, then that many bits. */
  dimension(): number {
    return this.read([9, 13, 18, 30][this.read(2)]!) + 1;
  }
}

/** The aspect ratios a SizeHeader may give the width by (numerator, denominator), by its 3-bit code. */
const RATIOS: ReadonlyArray<[number, number]> = [
  [1, 1],
  [1, 1],
  [12, 10],
  [4, 3],
  [3, 2],
  [16, 9],
  [5, 4],
  [2, 1],
];

/**
 * Width and height as the image is shown (the codestream's SizeHeader, turned a quarter when its
 * orientation, 5–8 as in EXIF, says so), or null when the header cannot be read.
 */
export function jxlShownSize(bytes: Buffer): { width: number; height: number } | null {
  const stream = codestreamStart(bytes);
  if (!stream || stream[0] !== 0xff || stream[1] !== 0x0a) return null;
  try {
    const bits = new Bits(stream.subarray(2));
    const small = bits.read(1) === 1;
    const height = small ? (bits.read(5) + 1) * 8 : bits.dimension();
    const ratio = bits.read(3);
    const [num, den] = RATIOS[ratio]!;
    const width = ratio !== 0 ? Math.floor((height * num) / den) : small ? (bits.read(5) + 1) * 8 : bits.dimension();
    // ImageMetadata: all_default, then extra_fields, then the orientation (1 + 3 bits).
    const allDefault = bits.read(1) === 1;
    const orientation = !allDefault && bits.read(1) === 1 ? 1 + bits.read(3) : 1;
    return orientation >= 5 ? { width: height, height: width } : { width, height };
  } catch {
    return null;
  }
}
