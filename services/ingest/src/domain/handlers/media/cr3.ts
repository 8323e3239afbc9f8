import { isoBoxes } from './containers.js';
import type { ExifTags } from './exif.js';

/**
 * Canon's CR3 (ISO base media, as its cameras have written since 2018) keeps its EXIF in no place
 * exifr looks: in `moov`, a box of Canon's UUID holds `CMT1` (the TIFF IFD0: camera, orientation),
 * `CMT2` (the EXIF IFD: capture time, zone, lens, size) and `CMT4` (the GPS IFD), each a TIFF of its
 * own (https://github.com/lclevy/canon_cr3). They are read here into the tags exifr gives for
 * other files.
 */

const CANON_UUID = Buffer.from('85c0b687820f11e08111f4ce462b6a48', 'hex');

/** Whether the bytes are a CR3 (its `ftyp` brand). */
export function isCr3(bytes: Buffer): boolean {
  return bytes.length >= 12 && bytes.toString('latin1', 4, 12) === 'ftypcrx ';
}

/** The value sizes of TIFF field types: BYTE, ASCII, SHORT, LONG, RATIONAL, SBYTE, UNDEFINED, SSHORT, SLONG, SRATIONAL. */
const TYPE_SIZE: Record<number, number> = { 1: 1, 2: 1, 3: 2, 4: 4, 5: 8, 6: 1, 7: 1, 8: 2, 9: 4, 10: 8 };

/** The first IFD of a TIFF, tag → value (a string, a number, or numbers); what it cannot read is left out. */
function ifdOf(tiff: Buffer): Map<number, string | number | number[]> {
  const tags = new Map<number, string | number | number[]>();
  if (tiff.length < 8) return tags;
  const little = tiff.toString('latin1', 0, 2) === 'II';
  const u16 = (at: number) => (little ? tiff.readUInt16LE(at) : tiff.readUInt16BE(at));
  const u32 = (at: number) => (little ? tiff.readUInt32LE(at) : tiff.readUInt32BE(at));
  const ifd = u32(4);
  if (ifd + 2 > tiff.length) return tags;
  for (let i = 0, count = u16(ifd); i < count && ifd + 2 + i * 12 + 12 <= tiff.length; i++) {
    const entry = ifd + 2 + i * 12;
    const [tag, type, n] = [u16(entry), u16(entry + 2), u32(entry + 4)];
    const size = (TYPE_SIZE[type] ?? 0) * n;
    const at = size <= 4 ? entry + 8 : u32(entry + 8);
    if (size === 0 || at + size > tiff.length) continue;
    if (type === 2)
      tags.set(
        tag,
        tiff
          .toString('latin1', at, at + size)
          .replace(/\0[\s\S]*$/, '')
          .trim(),
      );
    else if (type === 3) tags.set(tag, n === 1 ? u16(at) : Array.from({ length: n }, (_, k) => u16(at + k * 2)));
    else if (type === 4) tags.set(tag, n === 1 ? u32(at) : Array.from({ length: n }, (_, k) => u32(at + k * 4)));
    else if (type === 5)
      tags.set(
        tag,
        Array.from({ length: n }, (_, k) => u32(at + k * 8) / (u32(at + k * 8 + 4) || 1)),
      );
    else if (type === 1 || type === 7) tags.set(tag, n === 1 ? tiff[at]! : [...tiff.subarray(at, at + n)]);
  }
  return tags;
}

const str = (value: unknown) => (typeof value === 'string' && value ? value : undefined);
const num = (value: unknown) => (typeof value === 'number' ? value : Array.isArray(value) ? value[0] : undefined);

/** Degrees, minutes and seconds with their hemisphere as a signed decimal degree. */
function degrees(value: unknown, ref: unknown, negative: string): number | undefined {
  if (!Array.isArray(value) || value.length !== 3) return undefined;
  const [d, m, s] = value as [number, number, number];
  const decimal = d + m / 60 + s / 3600;
  return Number.isFinite(decimal) ? (ref === negative ? -decimal : decimal) : undefined;
}

/** A CR3's EXIF as exifr would name it; throws when the file has no Canon metadata box. */
export function cr3Exif(bytes: Buffer): ExifTags {
  const moov = [...isoBoxes(bytes)].find((box) => box.type === 'moov');
  const canon = moov
    ? [...isoBoxes(bytes, moov.start, moov.end)].find(
        (box) => box.type === 'uuid' && bytes.subarray(box.start, box.start + 16).equals(CANON_UUID),
      )
    : undefined;
  if (!canon) throw new Error("no Canon metadata box (CMT1–CMT4) in this CR3's moov");
  const tiffs = new Map(
    [...isoBoxes(bytes, canon.start + 16, canon.end)].map((box) => [box.type, bytes.subarray(box.start, box.end)]),
  );
  const ifd0 = ifdOf(tiffs.get('CMT1') ?? Buffer.alloc(0));
  const exif = ifdOf(tiffs.get('CMT2') ?? Buffer.alloc(0));
  const gps = ifdOf(tiffs.get('CMT4') ?? Buffer.alloc(0));
  const tags: ExifTags = {
    Make: str(ifd0.get(0x010f)),
    Model: str(ifd0.get(0x0110)),
    Orientation: num(ifd0.get(0x0112)),
    ImageDescription: str(ifd0.get(0x010e)),
    DateTimeOriginal: str(exif.get(0x9003)),
    CreateDate: str(exif.get(0x9004)),
    OffsetTime: str(exif.get(0x9010)),
    OffsetTimeOriginal: str(exif.get(0x9011)),
    LensModel: str(exif.get(0xa434)),
    ExifImageWidth: num(exif.get(0xa002)),
    ExifImageHeight: num(exif.get(0xa003)),
    latitude: degrees(gps.get(2), gps.get(1), 'S'),
    longitude: degrees(gps.get(4), gps.get(3), 'W'),
    GPSAltitude: num(gps.get(6)),
    GPSAltitudeRef: num(gps.get(5)),
    GPSDateStamp: str(gps.get(0x1d)),
    GPSTimeStamp: Array.isArray(gps.get(7)) ? (gps.get(7) as number[]) : undefined,
  };
  return Object.fromEntries(Object.entries(tags).filter(([, value]) => value !== undefined)) as ExifTags;
}
