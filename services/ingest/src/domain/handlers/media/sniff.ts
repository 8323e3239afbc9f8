import { isBmp } from './bmp.js';
import { isJxl } from './jxl.js';

/** Image container formats told apart by their first bytes (the declared type is only a hint). */
export type ImageFormat = 'jpeg' | 'png' | 'gif' | 'webp' | 'avif' | 'heic' | 'jxl' | 'tiff' | 'raw' | 'bmp';

const ascii = (bytes: Buffer, start: number, end: number) => bytes.subarray(start, end).toString('latin1');

/** ISO-BMFF (`ftyp`) brands: AVIF is AV1 in HEIF; the rest are HEVC-coded HEIF. */
const AVIF_BRANDS = new Set(['avif', 'avis']);
const HEIF_BRANDS = new Set(['heic', 'heix', 'hevc', 'hevx', 'heim', 'heis', 'mif1', 'msf1']);

/** A TIFF-based RAW names itself early: Canon CR2 writes `CR` at byte 8; the others are told by their type. */
function tiffOrRaw(bytes: Buffer, declared: ImageFormat): ImageFormat {
  if (ascii(bytes, 8, 10) === 'CR') return 'raw';
  return declared === 'raw' ? 'raw' : 'tiff';
}

/**
 * RAW files whose first bytes are their own: TIFF with the magic number changed (Olympus ORF
 * `IIRO`/`IIRS`/`MMOR`, Panasonic RW2 `IIU\0`), Fujifilm's RAF, Canon's CRW (CIFF) and CR3 (ISO
 * BMFF, brand `crx `).
 */
function ownRawSignature(bytes: Buffer): boolean {
  const start = ascii(bytes, 0, 4);
  return (
    ['IIRO', 'IIRS', 'MMOR', 'IIU\0'].includes(start) ||
    ascii(bytes, 0, 15) === 'FUJIFILMCCD-RAW' ||
    ascii(bytes, 6, 14) === 'HEAPCCDR' ||
    (ascii(bytes, 4, 8) === 'ftyp' && ascii(bytes, 8, 12) === 'crx ')
  );
}

/**
 * The JPEG a Fujifilm RAF carries (its offset and length at bytes 84 and 88, big-endian), which
 * holds the photo's EXIF; null for any other file or one cut short.
 */
export function fujiPreview(bytes: Buffer): Buffer | null {
  if (bytes.length < 92 || ascii(bytes, 0, 15) !== 'FUJIFILMCCD-RAW') return null;
  const offset = bytes.readUInt32BE(84);
  const length = bytes.readUInt32BE(88);
  return offset + length <= bytes.length ? bytes.subarray(offset, offset + length) : null;
}

/** The format the bytes are, or null when they are none of the images we read. */
export function sniffImage(bytes: Buffer, declared: ImageFormat): ImageFormat | null {
  if (bytes.length < 12) return null;
  if (declared === 'raw' && ownRawSignature(bytes)) return 'raw';
  if (bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return 'jpeg';
  if (bytes.readUInt32BE(0) === 0x89504e47) return 'png';
  if (ascii(bytes, 0, 4) === 'GIF8') return 'gif';
  if (ascii(bytes, 0, 4) === 'RIFF' && ascii(bytes, 8, 12) === 'WEBP') return 'webp';
  if (isJxl(bytes)) return 'jxl';
  if (isBmp(bytes)) return 'bmp';
  const order = ascii(bytes, 0, 4);
  if (order === 'II*\0' || order === 'MM\0*') return tiffOrRaw(bytes, declared);
  if (ascii(bytes, 4, 8) === 'ftyp') {
    const boxEnd = Math.min(bytes.readUInt32BE(0), bytes.length);
    const brands = [ascii(bytes, 8, 12)];
    for (let at = 16; at + 4 <= boxEnd; at += 4) brands.push(ascii(bytes, at, at + 4));
    if (brands.some((b) => AVIF_BRANDS.has(b))) return 'avif';
    if (brands.some((b) => HEIF_BRANDS.has(b))) return 'heic';
  }
  return null;
}
