import { files } from './files.js';
import path from 'node:path';
import exifr from 'exifr';

/**
 * What Apple Photos (and Lightroom, digiKam, darktable…) say about a photo in XMP — a sidecar
 * written beside it on export (`IMG_1234.xmp` or `IMG_1234.JPG.xmp`) or the XMP/IPTC inside the
 * file — as the photo handler's attributes, with its keywords (which become the item's labels).
 */
export interface XmpAttributes {
  title?: string;
  description?: string;
  taken_at?: string;
  latitude?: number;
  longitude?: number;
  /** People named in the photo: IPTC `PersonInImage` and the names of MWG face regions. */
  people?: string[];
  keywords?: string[];
}

type Parsed = Record<string, unknown>;

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

/** exifr leaves XML entities in values (`Ann &amp; Bob`). */
function unescape(value: string): string {
  return value
    .replace(/&#x([0-9a-f]+);/gi, (_, hex: string) => String.fromCodePoint(parseInt(hex, 16)))
    .replace(/&#(\d+);/g, (_, dec: string) => String.fromCodePoint(Number(dec)))
    .replace(/&(amp|lt|gt|quot|apos);/g, (_, name: string) => ENTITIES[name]!);
}

/** A text value: plain, a language alternative (`{ lang, value }`), or the first of several. */
function textOf(value: unknown): string | undefined {
  if (typeof value === 'string') return unescape(value).trim() || undefined;
  if (typeof value === 'number') return String(value);
  if (Array.isArray(value)) return value.map(textOf).find(Boolean);
  if (value && typeof value === 'object' && 'value' in value) return textOf((value as { value: unknown }).value);
  return undefined;
}

/** A bag of texts: exifr gives a one-element bag as the bare value. */
function textsOf(value: unknown): string[] {
  const list = Array.isArray(value) ? value : value === undefined || value === null ? [] : [value];
  return list.map(textOf).filter((v): v is string => v !== undefined);
}

/** `50,49.2N` or `50,49,12N` (XMP's GPSCoordinate), or a plain decimal number. */
export function xmpCoordinate(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  if (typeof value !== 'string') return undefined;
  const m = /^\s*(\d+(?:\.\d+)?)(?:,(\d+(?:\.\d+)?))?(?:,(\d+(?:\.\d+)?))?\s*([NSEW])\s*$/i.exec(value);
  if (!m) return undefined;
  const degrees = Number(m[1]) + Number(m[2] ?? 0) / 60 + Number(m[3] ?? 0) / 3600;
  return /[SW]/i.test(m[4]!) ? -degrees : degrees;
}

/** An XMP date with its zone as ISO; a date without a zone says no instant, so none. */
function instantOf(value: unknown): string | undefined {
  const text = textOf(value);
  if (!text || !/(Z|[+-]\d{2}:?\d{2})$/.test(text)) return undefined;
  const ms = Date.parse(text);
  return Number.isNaN(ms) ? undefined : new Date(ms).toISOString();
}

const section = (parsed: Parsed, name: string): Parsed => (parsed[name] as Parsed | undefined) ?? {};

/** The attributes in what exifr read (`mergeOutput: false`: one object per XMP namespace, and `iptc`). */
export function xmpAttributes(parsed: Parsed): XmpAttributes {
  const dc = section(parsed, 'dc');
  const iptc = section(parsed, 'iptc');
  const photoshop = section(parsed, 'photoshop');
  const exif = section(parsed, 'exif');
  const xmp = section(parsed, 'xmp');
  const regions = section(section(parsed, 'mwg-rs'), 'RegionInfo')['RegionList'];
  const out: XmpAttributes = {};
  const title = textOf(dc['title']) ?? textOf(photoshop['Headline']) ?? textOf(iptc['ObjectName']);
  if (title) out.title = title;
  const description = textOf(dc['description']) ?? textOf(iptc['Caption']);
  if (description) out.description = description;
  const taken =
    instantOf(photoshop['DateCreated']) ?? instantOf(exif['DateTimeOriginal']) ?? instantOf(xmp['CreateDate']);
  if (taken) out.taken_at = taken;
  const latitude = xmpCoordinate(exif['GPSLatitude']);
  const longitude = xmpCoordinate(exif['GPSLongitude']);
  if (latitude !== undefined && longitude !== undefined && Math.abs(latitude) <= 90 && Math.abs(longitude) <= 180) {
    out.latitude = latitude;
    out.longitude = longitude;
  }
  const regionNames = (Array.isArray(regions) ? regions : regions ? [regions] : []).flatMap((region) =>
    textsOf((region as Parsed)['Name']),
  );
  const people = [...new Set([...textsOf(section(parsed, 'Iptc4xmpExt')['PersonInImage']), ...regionNames])];
  if (people.length > 0) out.people = people;
  const keywords = [...new Set([...textsOf(dc['subject']), ...textsOf(iptc['Keywords'])])];
  if (keywords.length > 0) out.keywords = keywords;
  return out;
}

/** The XMP and IPTC inside a photo's bytes; nothing when it has none or they cannot be read. */
export async function embeddedXmp(bytes: Buffer): Promise<XmpAttributes> {
  const parsed = (await exifr
    .parse(bytes, { tiff: false, exif: false, gps: false, xmp: true, iptc: true, mergeOutput: false })
    .catch(() => undefined)) as Parsed | undefined;
  return parsed ? xmpAttributes(parsed) : {};
}

/** The sidecar names a photo may have: `IMG_1.xmp` (Apple Photos, Lightroom) or `IMG_1.JPG.xmp` (darktable, digiKam). */
export function xmpSidecarNames(photo: string): string[] {
  return [`${photo.slice(0, photo.length - path.extname(photo).length)}.xmp`, `${photo}.xmp`];
}

/** The XMP sidecar of each photo in a folder that has one (file name → attributes); an unreadable one is skipped with a warning. */
export async function readXmpSidecars(
  dir: string,
  photos: string[],
  warn: (message: string) => void,
): Promise<Map<string, { sidecar: string; attributes: XmpAttributes }>> {
  const names = new Map((await files.list(dir)).map(({ name }) => [name.toLowerCase(), name]));
  const found = new Map<string, { sidecar: string; attributes: XmpAttributes }>();
  for (const photo of photos) {
    const sidecar = xmpSidecarNames(photo)
      .map((candidate) => names.get(candidate.toLowerCase()))
      .find((name) => name !== undefined);
    if (!sidecar) continue;
    const file = path.join(dir, sidecar);
    try {
      const parsed = (await exifr.sidecar(await files.readFile(file), { mergeOutput: false }, 'xmp')) as
        Parsed | undefined;
      if (!parsed) throw new Error('no XMP packet in it');
      found.set(photo, { sidecar, attributes: xmpAttributes(parsed) });
    } catch (error) {
      warn(`${file}: not an XMP sidecar (${error instanceof Error ? error.message : String(error)})`);
    }
  }
  return found;
}
