import { PHOTO_FILE_TYPES } from '@memex/contracts';
import { labelOf, uniqueIgnoringCase } from '@memex/exports';
import { baseType, RejectedItem, type HandlerInput, type IngestHandler, type PhotoItem } from '../handler.js';
import { sha256Hex } from '../text.js';
import { attributePosition, mediaAttributesSchema, type MediaAttributes } from './attributes.js';
import {
  appleContentIdentifier,
  exifLocalTime,
  exifOffset,
  gpsUtc,
  offsetBetween,
  readExif,
  type ExifTags,
} from './exif.js';
import { OCR_ENGINE, ocrEnabled, recognizeText } from './ocr.js';
import type { PhotoMeta } from './media-item.js';
import { gifSize, heifSize, webpSize, type Size } from './containers.js';
import { jxlShownSize } from './jxl.js';
import { readEmbedded, type EmbeddedMetadata } from './embedded.js';
import { fujiPreview, sniffImage, type ImageFormat } from './sniff.js';
import { readBmp } from './bmp.js';

/** The largest photo taken: a 100-megapixel RAW fits. */
export const PHOTO_LIMIT_BYTES = 200 * 1024 * 1024;

/** Accepted types and the container each should be: every RAW type PHOTO_FILE_TYPES names is `raw`. */
const TYPES: Record<string, ImageFormat> = {
  'image/jpeg': 'jpeg',
  'image/png': 'png',
  'image/gif': 'gif',
  'image/webp': 'webp',
  'image/avif': 'avif',
  'image/heic': 'heic',
  'image/heif': 'heic',
  'image/jxl': 'jxl',
  'image/tiff': 'tiff',
  // Windows bitmaps: mime-db's name, and those older software sends.
  'image/bmp': 'bmp',
  'image/x-ms-bmp': 'bmp',
  'image/x-bmp': 'bmp',
  ...Object.fromEntries(
    Object.values(PHOTO_FILE_TYPES)
      .filter((type) => type.startsWith('image/x-'))
      .map((type) => [type, 'raw' as const]),
  ),
};

/** Descriptions cameras write by themselves, which say nothing about the photo. */
const CAMERA_BOILERPLATE =
  /^\s*((OLYMPUS|(KONICA )?MINOLTA|SAMSUNG|PENTAX|LEICA|NIKON|CASIO|SANYO|ASUS) DIGITAL CAMERA|SONY DSC|DIGITAL CAMERA|KODAK Digital Still Camera|Exif_JPEG_PICTURE|JPEG Exif)?\s*$/i;

const text = (value: unknown): string | null =>
  typeof value === 'string' && value.trim() !== '' ? value.replace(/\0+$/, '').trim() : null;

type TimeFields = Pick<PhotoMeta, 'takenAt' | 'offset' | 'offsetSource' | 'timeSource'> & { occurredAt: string | null };

/** The wall-clock capture time the file states and its own zone: EXIF's, else its XMP's or IPTC's. */
function statedTime(
  tags: ExifTags,
  embedded: EmbeddedMetadata,
): { local: string; zone: string | null; source: 'exif' | 'xmp' | 'iptc'; zoneSource?: 'xmp' | 'iptc' } | null {
  const stated = embedded.dates.flatMap(({ value, source }) => {
    const read = exifLocalTime(value);
    return read ? [{ ...read, source }] : [];
  });
  const exif = exifLocalTime(tags.DateTimeOriginal) ?? exifLocalTime(tags.CreateDate);
  if (!exif) return stated[0] ?? null;
  const zone = exifOffset(tags.OffsetTimeOriginal) ?? exifOffset(tags.OffsetTime) ?? exif.zone;
  if (zone) return { local: exif.local, zone, source: 'exif' };
  // Lightroom and Photoshop copy the time into XMP with its zone: the same wall-clock time gives it.
  const same = stated.find((date) => date.local === exif.local && date.zone !== null);
  return { local: exif.local, zone: same?.zone ?? null, source: 'exif', ...(same ? { zoneSource: same.source } : {}) };
}

/**
 * When the photo was taken. EXIF gives the wall-clock time (else the XMP or IPTC in the file: a
 * WebP, a PNG or a HEIF often carries only XMP); its offset comes from the file (OffsetTime*, the
 * XMP date's own zone), else from the GPS clock, else from a Takeout time for the same instant.
 * Without any, the wall-clock time is read as UTC (said in a warning) rather than dropped.
 */
function captureTime(
  tags: ExifTags,
  embedded: EmbeddedMetadata,
  attrs: MediaAttributes,
  warnings: string[],
): TimeFields {
  const read = statedTime(tags, embedded);
  const takeoutMs = attrs.taken_at ? Date.parse(attrs.taken_at) : null;
  if (read) {
    const local = read.local;
    const gpsMs = gpsUtc(tags);
    const fromGps = gpsMs === null ? null : offsetBetween(local, gpsMs);
    const fromTakeout = takeoutMs === null ? null : offsetBetween(local, takeoutMs);
    const offset = read.zone ?? fromGps ?? fromTakeout;
    const offsetSource = read.zone
      ? (read.zoneSource ?? read.source)
      : fromGps
        ? 'gps'
        : fromTakeout
          ? 'takeout'
          : null;
    if (!offset) warnings.push('the capture time has no zone offset; it is read as UTC');
    return {
      takenAt: local,
      offset,
      offsetSource,
      timeSource: read.source,
      occurredAt: new Date(`${local}${offset ?? 'Z'}`).toISOString(),
    };
  }
  if (takeoutMs !== null) {
    const at = new Date(takeoutMs).toISOString();
    return { takenAt: null, offset: null, offsetSource: null, timeSource: 'takeout', occurredAt: at };
  }
  if (attrs.modified) {
    const at = new Date(attrs.modified).toISOString();
    return { takenAt: null, offset: null, offsetSource: null, timeSource: 'file', occurredAt: at };
  }
  return { takenAt: null, offset: null, offsetSource: null, timeSource: null, occurredAt: null };
}

/** Where it was taken: EXIF's GPS, else the caller's position, else the XMP's. */
function position(
  tags: ExifTags,
  attrs: MediaAttributes,
  embedded: EmbeddedMetadata,
): Pick<PhotoMeta, 'gps' | 'gpsSource'> {
  const { latitude, longitude } = tags;
  if (typeof latitude === 'number' && typeof longitude === 'number' && Number.isFinite(latitude + longitude)) {
    const below =
      tags.GPSAltitudeRef === 1 || (tags.GPSAltitudeRef instanceof Uint8Array && tags.GPSAltitudeRef[0] === 1);
    const altitude = typeof tags.GPSAltitude === 'number' ? (below ? -tags.GPSAltitude : tags.GPSAltitude) : null;
    return { gps: { latitude, longitude, altitude }, gpsSource: 'exif' };
  }
  const given = attributePosition(attrs);
  if (given) return { gps: given, gpsSource: 'takeout' };
  const { latitude: lat, longitude: lon } = embedded;
  return lat !== undefined && lon !== undefined && !(lat === 0 && lon === 0)
    ? { gps: { latitude: lat, longitude: lon, altitude: null }, gpsSource: 'xmp' }
    : { gps: null, gpsSource: null };
}

/**
 * Width and height as the photo is shown: orientations 5–8 turn it a quarter. A JPEG XL's are its
 * codestream's, as is the orientation decoders apply (its EXIF's is not the image's).
 */
function shownSize(
  tags: ExifTags,
  format: ImageFormat,
  bytes: Buffer,
): { width: number | null; height: number | null } {
  if (format === 'jxl') return jxlShownSize(bytes) ?? { width: null, height: null };
  const width = tags.ExifImageWidth ?? tags.ImageWidth ?? null;
  const height = tags.ExifImageHeight ?? tags.ImageHeight ?? null;
  // Without them in the EXIF, the container's own: a HEIF's turned by its irot (decoders apply it, not EXIF's).
  if (width === null || height === null) return containerSize(format, bytes) ?? { width: null, height: null };
  return (tags.Orientation ?? 1) >= 5 ? { width: height, height: width } : { width, height };
}

/** The size a container states (WebP's canvas, a GIF's screen, a HEIF's `ispe`), when EXIF states none. */
function containerSize(format: ImageFormat, bytes: Buffer): Size | null {
  if (format === 'webp') return webpSize(bytes);
  if (format === 'gif') return gifSize(bytes);
  if (format === 'avif' || format === 'heic') return heifSize(bytes);
  return null;
}

/** Formats whose pixels sharp decodes here (HEVC HEIC and RAW sensor data it does not). */
const DECODABLE = new Set<ImageFormat>(['jpeg', 'png', 'gif', 'webp', 'avif', 'tiff']);

/**
 * The text in the photo (a sign, a page, a slide), so search finds the photo by it. Read here, with
 * the item's own text, because search indexes an item's text; a photo whose pixels cannot be
 * decoded keeps its metadata, with a warning.
 */
async function photoText(bytes: Buffer, format: ImageFormat, warnings: string[]): Promise<PhotoMeta['ocr']> {
  if (!ocrEnabled() || !DECODABLE.has(format)) return null;
  try {
    const read = await recognizeText(bytes);
    return {
      engine: OCR_ENGINE,
      provider: read.provider,
      lines: read.lines,
      confidence: read.confidence,
      text: read.text,
    };
  } catch (error) {
    warnings.push(`text in the image not read: ${error instanceof Error ? error.message : String(error)}`);
    return null;
  }
}

/**
 * A photo: identity by content hash (the same file from two sources is one item), metadata from
 * EXIF (exifr) and from the XMP and IPTC in the file (embedded.ts), the caller's attributes (a
 * Takeout or XMP sidecar) winning over what the file says and filling where it is silent, the
 * text in it by OCR. Its keywords label it `keyword:<word>`, as `memex import photos` labels a
 * sidecar's. Thumbnails, places and faces are the media service's work.
 */
export async function parsePhoto({ bytes, type, attributes }: HandlerInput): Promise<PhotoItem> {
  const attrs = attributes as MediaAttributes;
  const contentType = baseType(type);
  const declared = TYPES[contentType];
  if (!declared) throw new RejectedItem(`no photo reader for type "${contentType}"`);
  const format = sniffImage(bytes, declared);
  if (!format)
    throw new RejectedItem(
      `not a ${declared.toUpperCase()} image: its first bytes are no image format the memex reads`,
    );
  const warnings: string[] = [];
  if (format !== declared && !(declared === 'raw' && format === 'tiff')) {
    warnings.push(`sent as ${contentType} but the bytes are ${format.toUpperCase()}; read as ${format.toUpperCase()}`);
  }
  // A bitmap states its size and depth in its header, and nothing else (no EXIF, XMP or date).
  const bitmap = format === 'bmp' ? readBmp(bytes, PHOTO_LIMIT_BYTES) : null;
  if (bitmap) warnings.push(...bitmap.warnings);
  const { tags, problem } = await readExif(format === 'raw' ? (fujiPreview(bytes) ?? bytes) : bytes, format);
  if (problem) warnings.push(problem);
  const { metadata: embedded, problems } = readEmbedded(bytes, format);
  warnings.push(...problems);
  const { occurredAt, ...time } = captureTime(tags, embedded, attrs, warnings);
  const description =
    text(attrs.description) ??
    text(embedded.description) ??
    (CAMERA_BOILERPLATE.test(tags.ImageDescription ?? '') ? null : text(tags.ImageDescription));
  const make = text(tags.Make);
  const model = text(tags.Model);
  const meta: PhotoMeta = {
    format,
    contentType,
    size: bytes.length,
    filename: attrs.filename ?? null,
    ...(bitmap
      ? { width: bitmap.width, height: bitmap.height, bitDepth: bitmap.bitDepth }
      : shownSize(tags, format, bytes)),
    orientation:
      typeof tags.Orientation === 'number' && tags.Orientation >= 1 && tags.Orientation <= 8 ? tags.Orientation : null,
    ...time,
    ...position(tags, attrs, embedded),
    camera: make || model ? { make, model } : null,
    lens: text(tags.LensModel),
    description,
    contentIdentifier: appleContentIdentifier(tags.makerNote),
    // The caller's first (its spelling wins), then the file's.
    people: uniqueIgnoringCase([...(attrs.people ?? []), ...embedded.people]),
    keywords: uniqueIgnoringCase([...(attrs.keywords ?? []), ...embedded.keywords]),
    creator: text(embedded.creator),
    regions: embedded.regions,
    ocr: await photoText(bytes, format, warnings),
  };
  const title =
    attrs.title ?? text(embedded.title) ?? attrs.filename ?? `Photo ${time.takenAt ?? sha256Hex(bytes).slice(0, 12)}`;
  return {
    kind: 'photo',
    identity: `sha256:${sha256Hex(bytes)}`,
    title,
    // What search finds a photo by: its title, its caption, who took it and who is in it, its keywords, the text in it.
    text: [title, description, meta.creator, meta.people.join(', '), meta.keywords.join(', '), meta.ocr?.text]
      .filter(Boolean)
      .join('\n'),
    occurredAt,
    warnings,
    labels: [...new Set(meta.keywords.map((keyword) => labelOf('keyword', keyword)))],
    meta,
  };
}

export const photoHandler: IngestHandler = {
  name: 'photo',
  types: Object.keys(TYPES),
  attributesSchema: mediaAttributesSchema,
  identityRule: 'Content hash (sha256 of the bytes): the same photo from two sources is one item.',
  limitBytes: PHOTO_LIMIT_BYTES,
  produces: ['photo'],
  updatable: true,
  parse: parsePhoto,
};
