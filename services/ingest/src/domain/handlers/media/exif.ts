import exifr from 'exifr';
import { cr3Exif, isCr3 } from './cr3.js';
import { heifExif, webpExif } from './containers.js';
import { jxlExif } from './jxl.js';
import type { ImageFormat } from './sniff.js';

/** The EXIF tags a photo item keeps, as exifr reads them (raw values: dates stay EXIF strings). */
export interface ExifTags {
  DateTimeOriginal?: string;
  CreateDate?: string;
  OffsetTimeOriginal?: string;
  OffsetTime?: string;
  latitude?: number;
  longitude?: number;
  GPSAltitude?: number;
  GPSAltitudeRef?: number | Uint8Array;
  GPSDateStamp?: string;
  GPSTimeStamp?: number[] | string;
  Make?: string;
  Model?: string;
  LensModel?: string;
  Orientation?: number;
  ExifImageWidth?: number;
  ExifImageHeight?: number;
  ImageWidth?: number;
  ImageHeight?: number;
  ImageDescription?: string;
  /** The maker's notes, raw: read for Apple's content identifier (`appleContentIdentifier`). */
  makerNote?: Uint8Array;
}

const OPTIONS: Parameters<typeof exifr.parse>[1] = {
  tiff: true,
  exif: true,
  gps: true,
  ifd1: false,
  // XMP and IPTC are read by us (embedded.ts), from every container: exifr is given TIFF alone
  // where we can, and its readers of other containers have hung on damaged files.
  xmp: false,
  icc: false,
  iptc: false,
  jfif: false,
  ihdr: true,
  makerNote: true,
  translateValues: false,
  reviveValues: false,
  mergeOutput: true,
};

/** The MakerNote tag Apple keeps a Live Photo's content identifier in (exiftool: MediaGroupUUID, formerly ContentIdentifier). */
const APPLE_CONTENT_IDENTIFIER = 0x0011;
const APPLE_HEADER = 'Apple iOS\0';

/**
 * The content identifier in an iPhone's MakerNote ("Apple iOS", a version, "MM", then a big-endian
 * IFD whose offsets count from the note's start), or null: a Live Photo's still and its motion clip
 * (com.apple.quicktime.content.identifier) share it.
 */
export function appleContentIdentifier(note: Uint8Array | undefined): string | null {
  if (!note || note.length < 16) return null;
  const bytes = Buffer.from(note.buffer, note.byteOffset, note.byteLength);
  if (bytes.toString('latin1', 0, 10) !== APPLE_HEADER || bytes.toString('latin1', 12, 14) !== 'MM') return null;
  const count = bytes.readUInt16BE(14);
  for (let i = 0; i < count && 16 + i * 12 + 12 <= bytes.length; i++) {
    const entry = 16 + i * 12;
    if (bytes.readUInt16BE(entry) !== APPLE_CONTENT_IDENTIFIER) continue;
    const length = bytes.readUInt32BE(entry + 4);
    const at = length <= 4 ? entry + 8 : bytes.readUInt32BE(entry + 8);
    if (at + length > bytes.length) return null;
    const value = bytes
      .toString('latin1', at, at + length)
      .replace(/\0[\s\S]*$/, '')
      .trim();
    return value || null;
  }
  return null;
}

/**
 * The EXIF of an image, or the reason it could not be read: a photo whose EXIF is damaged is still
 * a photo (its pixels may be fine), so the caller keeps the item with a warning.
 */
export async function readExif(
  bytes: Buffer,
  format: ImageFormat,
): Promise<{ tags: ExifTags; problem: string | null }> {
  const parse = async (input: Buffer | null) =>
    input ? (((await exifr.parse(input, OPTIONS)) as ExifTags | undefined) ?? {}) : {};
  try {
    // A GIF and a Windows bitmap have no EXIF; a CR3, a JPEG XL and a WebP keep theirs where exifr does not look.
    if (format === 'gif' || format === 'bmp') return { tags: {}, problem: null };
    if (isCr3(bytes)) return { tags: cr3Exif(bytes), problem: null };
    if (format === 'jxl') return { tags: await parse(jxlExif(bytes)), problem: null };
    if (format === 'webp') return { tags: await parse(webpExif(bytes)), problem: null };
    // A HEIF's (HEIC's, AVIF's) Exif item is found by us and only its TIFF given to exifr: exifr
    // misreads libheif's layout (libavif, GIMP: "Malformed EXIF data") and its box reader never
    // returns on some damaged files (a renamed `meta` box, found by fuzzing), which would hang ingest.
    if (format === 'avif' || format === 'heic') return { tags: await parse(heifExif(bytes)), problem: null };
    return { tags: await parse(bytes), problem: null };
  } catch (error) {
    return { tags: {}, problem: `EXIF unreadable (${error instanceof Error ? error.message : String(error)})` };
  }
}

/**
 * `2008:10:22 16:28:39` (EXIF) or `2013-07-05T03:18:27Z` (XMP, whose seconds may be left out) →
 * the wall-clock time `2008-10-22T16:28:39` and the zone it states (`+00:00`), or null. A date
 * without a time of day is null: it names no moment.
 */
export function exifLocalTime(value: string | undefined): { local: string; zone: string | null } | null {
  const match = value
    ? /^(\d{4})[:-](\d{2})[:-](\d{2})[ T](\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$/.exec(
        value.trim(),
      )
    : null;
  if (!match) return null;
  const [, y, mo, d, h, mi, s = '00', zone] = match;
  const local = `${y}-${mo}-${d}T${h}:${mi}:${s}`;
  if (Number.isNaN(Date.parse(`${local}Z`)) || y === '0000') return null;
  return { local, zone: zone === 'Z' ? '+00:00' : exifOffset(zone) };
}

/** `+02:00`, `-0500` → `+02:00`, `-05:00`; null when absent or malformed. */
export function exifOffset(value: string | undefined): string | null {
  const match = value ? /^([+-])(\d{2}):?(\d{2})$/.exec(value.trim()) : null;
  if (!match) return null;
  const minutes = Number(match[2]) * 60 + Number(match[3]);
  return minutes <= 14 * 60 ? `${match[1]}${match[2]}:${match[3]}` : null;
}

/** The GPS clock's UTC time of the shot (GPSDateStamp + GPSTimeStamp), ms since the epoch, or null. */
export function gpsUtc(tags: ExifTags): number | null {
  const date = tags.GPSDateStamp ? /^(\d{4}):(\d{2}):(\d{2})$/.exec(tags.GPSDateStamp.trim()) : null;
  const time = Array.isArray(tags.GPSTimeStamp) ? tags.GPSTimeStamp : null;
  if (!date || !time || time.length !== 3) return null;
  const [h, m, s] = time as [number, number, number];
  const ms = Date.UTC(Number(date[1]), Number(date[2]) - 1, Number(date[3]), h, m, 0) + s * 1000;
  return Number.isFinite(ms) ? ms : null;
}

/**
 * The zone offset that turns a wall-clock time into a known UTC instant: the difference rounded
 * to a quarter hour, when within what zones allow (±14 h) and close to a quarter hour (a camera
 * clock set a day wrong says nothing about its zone).
 */
export function offsetBetween(localIso: string, utcMs: number): string | null {
  const minutes = (Date.parse(`${localIso}Z`) - utcMs) / 60_000;
  const quarter = Math.round(minutes / 15) * 15;
  if (Math.abs(quarter) > 14 * 60 || Math.abs(minutes - quarter) > 2) return null;
  const sign = quarter < 0 ? '-' : '+';
  const abs = Math.abs(quarter);
  return `${sign}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
}
