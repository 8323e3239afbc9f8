/** Image container formats told apart by their first bytes (the declared type is only a hint). */
export type ImageFormat = 'jpeg' | 'png' | 'gif' | 'webp' | 'avif' | 'heic' | 'tiff' | 'raw';

const ascii = (bytes: Buffer, start: number, end: number) => bytes.subarray(start, end).toString('latin1');

/** ISO-BMFF (`ftyp`) brands: AVIF is AV1 in HEIF; the rest are HEVC-coded HEIF. */
const AVIF_BRANDS = new Set(['avif', 'avis']);
const HEIF_BRANDS = new Set(['heic', 'heix', 'hevc', 'hevx', 'heim', 'heis', 'mif1', 'msf1']);

/** A TIFF-based RAW names itself early: Canon CR2 writes `CR` at byte 8; the others are told by their type. */
function tiffOrRaw(bytes: Buffer, declared: ImageFormat): ImageFormat {
  if (ascii(bytes, 8, 10) === 'CR') return 'raw';
  return declared === 'raw' ? 'raw' : 'tiff';
}

/** The format the bytes are, or null when they are none of the images we read. */
export function sniffImage(bytes: Buffer, declared: ImageFormat): ImageFormat | null {
  if (bytes.length < 12) return null;
  if (bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return 'jpeg';
  if (bytes.readUInt32BE(0) === 0x89504e47) return 'png';
  if (ascii(bytes, 0, 4) === 'GIF8') return 'gif';
  if (ascii(bytes, 0, 4) === 'RIFF' && ascii(bytes, 8, 12) === 'WEBP') return 'webp';
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
