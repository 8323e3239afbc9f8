/**
 * Where EXIF, XMP and the image size sit in containers exifr does not read (or reads only as some
 * writers lay them out): WebP's RIFF chunks, the HEIF items of an AVIF or HEIC written by libheif
 * (libavif, GIMP, ImageMagick, sharp), a GIF's screen. Each function reads what the format's
 * specification says, and returns null where the file does not hold it (or is cut short there).
 */

export interface Size {
  width: number;
  height: number;
}

/** The TIFF bytes of an EXIF block, without the `Exif\0\0` some writers put before them. */
function tiffOf(block: Buffer): Buffer | null {
  const start = block.toString('latin1', 0, 6) === 'Exif\0\0' ? 6 : 0;
  const order = block.toString('latin1', start, start + 2);
  return order === 'II' || order === 'MM' ? block.subarray(start) : null;
}

/** A WebP's chunks (RIFF: a fourcc, a little-endian size, the payload padded to an even length). */
function* webpChunks(bytes: Buffer): Generator<{ type: string; payload: Buffer }> {
  if (bytes.toString('latin1', 0, 4) !== 'RIFF' || bytes.toString('latin1', 8, 12) !== 'WEBP') return;
  for (let at = 12; at + 8 <= bytes.length;) {
    const size = bytes.readUInt32LE(at + 4);
    yield {
      type: bytes.toString('latin1', at, at + 4),
      payload: bytes.subarray(at + 8, Math.min(at + 8 + size, bytes.length)),
    };
    at += 8 + size + (size % 2);
  }
}

/** The TIFF bytes of a WebP's `EXIF` chunk, or null. */
export function webpExif(bytes: Buffer): Buffer | null {
  for (const { type, payload } of webpChunks(bytes)) if (type === 'EXIF') return tiffOf(payload);
  return null;
}

/** A WebP's `XMP ` chunk, or null. */
export function webpXmp(bytes: Buffer): Buffer | null {
  for (const { type, payload } of webpChunks(bytes)) if (type === 'XMP ') return payload;
  return null;
}

/** A WebP's canvas (`VP8X`), else its one frame's size (lossy `VP8 `, lossless `VP8L`). */
export function webpSize(bytes: Buffer): Size | null {
  for (const { type, payload: p } of webpChunks(bytes)) {
    if (type === 'VP8X' && p.length >= 10) return { width: 1 + p.readUIntLE(4, 3), height: 1 + p.readUIntLE(7, 3) };
    if (type === 'VP8 ' && p.length >= 10 && p[3] === 0x9d && p[4] === 0x01 && p[5] === 0x2a)
      return { width: p.readUInt16LE(6) & 0x3fff, height: p.readUInt16LE(8) & 0x3fff };
    if (type === 'VP8L' && p.length >= 5 && p[0] === 0x2f) {
      const bits = p.readUInt32LE(1);
      return { width: (bits & 0x3fff) + 1, height: ((bits >>> 14) & 0x3fff) + 1 };
    }
  }
  return null;
}

/** A GIF's logical screen, the size every frame is drawn in. */
export function gifSize(bytes: Buffer): Size | null {
  if (bytes.length < 10 || bytes.toString('latin1', 0, 4) !== 'GIF8') return null;
  return { width: bytes.readUInt16LE(6), height: bytes.readUInt16LE(8) };
}

/** An ISO base media box: its type, and where its payload starts and ends in the bytes read. */
export interface IsoBox {
  type: string;
  start: number;
  end: number;
}

/**
 * The boxes in `bytes` from `from` to `to` (ISO BMFF: a big-endian size, a type; size 1: a 64-bit
 * size follows; 0: to the end). A box that runs past `to` (a file cut short) ends there.
 */
export function* isoBoxes(bytes: Buffer, from = 0, to = bytes.length): Generator<IsoBox> {
  for (let at = from; at + 8 <= to;) {
    let size = bytes.readUInt32BE(at);
    let header = 8;
    if (size === 1) {
      if (at + 16 > to) return;
      size = Number(bytes.readBigUInt64BE(at + 8));
      header = 16;
    } else if (size === 0) size = to - at;
    if (size < header) return;
    yield { type: bytes.toString('latin1', at + 4, at + 8), start: at + header, end: Math.min(at + size, to) };
    at += size;
  }
}

/** The `meta` box's child boxes (meta is a full box: 4 bytes of version and flags first). */
function metaBoxes(bytes: Buffer): Map<string, Buffer> {
  const meta = [...isoBoxes(bytes)].find((box) => box.type === 'meta');
  const found = new Map<string, Buffer>();
  if (!meta) return found;
  for (const box of isoBoxes(bytes, meta.start + 4, meta.end)) found.set(box.type, bytes.subarray(box.start, box.end));
  return found;
}

/** Reads an unsigned big-endian integer of 0, 4 or 8 bytes. */
function uint(bytes: Buffer, at: number, size: number): number {
  if (size === 0) return 0;
  if (size === 4) return bytes.readUInt32BE(at);
  if (size === 8) return Number(bytes.readBigUInt64BE(at));
  throw new RangeError(`no ${size}-byte integers in iloc`);
}

/**
 * The ID of the HEIF item of a type (`iinf`'s `infe` entries, versions 2 and 3), or null; of a
 * `mime` item, the one of that content type (it follows the item's name, both NUL-terminated).
 */
function itemOfType(p: Buffer, type: string, contentType?: string): number | null {
  const version = p[0]!;
  const first = version === 0 ? 6 : 8;
  for (const entry of isoBoxes(p, first)) {
    if (entry.type !== 'infe') continue;
    const e = p.subarray(entry.start, entry.end);
    const v = e[0]!;
    if (v < 2) continue;
    const id = v === 2 ? e.readUInt16BE(4) : e.readUInt32BE(4);
    const typeAt = v === 2 ? 8 : 10;
    if (e.toString('latin1', typeAt, typeAt + 4) !== type) continue;
    if (contentType === undefined) return id;
    const [, content] = e.toString('latin1', typeAt + 4).split('\0');
    if (content?.trim().toLowerCase() === contentType) return id;
  }
  return null;
}

/** The bytes of a HEIF file's item of a type (and content type), as its `iloc` places them; null when absent. */
function heifItem(bytes: Buffer, type: string, contentType?: string): Buffer | null {
  const meta = metaBoxes(bytes);
  const iinf = meta.get('iinf');
  const iloc = meta.get('iloc');
  if (!iinf || !iloc) return null;
  const item = itemOfType(iinf, type, contentType);
  return item === null ? null : itemBytes(bytes, iloc, meta.get('idat'), item);
}

/** An item's bytes as `iloc` places them: in the file (construction method 0) or in `idat` (1). */
function itemBytes(bytes: Buffer, p: Buffer, idat: Buffer | undefined, item: number): Buffer | null {
  const version = p[0]!;
  const offsetSize = p[4]! >> 4;
  const lengthSize = p[4]! & 0xf;
  const baseSize = p[5]! >> 4;
  const indexSize = version === 1 || version === 2 ? p[5]! & 0xf : 0;
  let at = 6;
  const count = version < 2 ? p.readUInt16BE(at) : p.readUInt32BE(at);
  at += version < 2 ? 2 : 4;
  for (let i = 0; i < count; i++) {
    const id = version < 2 ? p.readUInt16BE(at) : p.readUInt32BE(at);
    at += version < 2 ? 2 : 4;
    const method = version === 1 || version === 2 ? p.readUInt16BE(at) & 0xf : 0;
    if (version === 1 || version === 2) at += 2;
    at += 2; // data reference index
    const base = uint(p, at, baseSize);
    at += baseSize;
    const extents = p.readUInt16BE(at);
    at += 2;
    const parts: Buffer[] = [];
    for (let e = 0; e < extents; e++) {
      at += indexSize;
      const offset = uint(p, at, offsetSize);
      at += offsetSize;
      const length = uint(p, at, lengthSize);
      at += lengthSize;
      const source = method === 1 ? idat : bytes;
      if (!source || base + offset + length > source.length) return null;
      parts.push(source.subarray(base + offset, base + offset + length));
    }
    if (id === item) return Buffer.concat(parts);
  }
  return null;
}

/**
 * The TIFF bytes of a HEIF file's (AVIF's, HEIC's) `Exif` item: its 4-byte offset to the TIFF
 * header first (ISO/IEC 23008-12 A.2.1). Null when it has none, or the boxes do not read.
 */
export function heifExif(bytes: Buffer): Buffer | null {
  try {
    const block = heifItem(bytes, 'Exif');
    if (!block || block.length < 4) return null;
    return tiffOf(block.subarray(4 + block.readUInt32BE(0)));
  } catch {
    return null;
  }
}

/** A HEIF file's XMP: its `mime` item of type `application/rdf+xml` (ISO/IEC 23008-12 A.2.2), or null. */
export function heifXmp(bytes: Buffer): Buffer | null {
  try {
    return heifItem(bytes, 'mime', 'application/rdf+xml');
  } catch {
    return null;
  }
}

/**
 * A HEIF image's shown size: its primary item's `ispe` (the largest one, for a grid's tiles have
 * their own), turned a quarter when an `irot` says so.
 */
export function heifSize(bytes: Buffer): Size | null {
  try {
    const iprp = metaBoxes(bytes).get('iprp');
    if (!iprp) return null;
    const ipco = [...isoBoxes(iprp)].find((b) => b.type === 'ipco');
    if (!ipco) return null;
    let size: Size | null = null;
    let turned = false;
    for (const property of isoBoxes(iprp, ipco.start, ipco.end)) {
      const p = iprp.subarray(property.start, property.end);
      if (property.type === 'ispe' && p.length >= 12) {
        const found = { width: p.readUInt32BE(4), height: p.readUInt32BE(8) };
        if (!size || found.width * found.height > size.width * size.height) size = found;
      }
      if (property.type === 'irot' && p.length >= 1) turned ||= (p[0]! & 0x3) % 2 === 1;
    }
    return size && turned ? { width: size.height, height: size.width } : size;
  } catch {
    return null;
  }
}
