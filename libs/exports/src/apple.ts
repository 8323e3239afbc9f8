import { files } from './files.js';
import path from 'node:path';
import { readXmp, type XmpReading } from './xmp.js';

/**
 * What Apple Photos (and Lightroom, digiKam, darktable…) say about a photo in an XMP sidecar
 * written beside it on export (`IMG_1234.xmp` or `IMG_1234.JPG.xmp`), as the photo handler's
 * attributes, with its keywords (which become the item's labels). The XMP and IPTC inside the
 * file are the photo handler's own reading, however the photo arrives.
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

/** An XMP date with its zone as ISO; a date without a zone says no instant, so none. */
function instantOf(text: string): string | undefined {
  if (!/(Z|[+-]\d{2}:?\d{2})$/.test(text)) return undefined;
  const ms = Date.parse(text);
  return Number.isNaN(ms) ? undefined : new Date(ms).toISOString();
}

/** The attributes an XMP reading gives the photo handler. */
export function xmpAttributes(reading: XmpReading): XmpAttributes {
  const out: XmpAttributes = {};
  if (reading.title) out.title = reading.title;
  if (reading.description) out.description = reading.description;
  const taken = reading.dates.map(instantOf).find((date) => date !== undefined);
  if (taken) out.taken_at = taken;
  if (reading.latitude !== undefined && reading.longitude !== undefined) {
    out.latitude = reading.latitude;
    out.longitude = reading.longitude;
  }
  if (reading.people.length > 0) out.people = reading.people;
  if (reading.keywords.length > 0) out.keywords = reading.keywords;
  return out;
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
      const reading = readXmp((await files.readFile(file)).toString('utf8'));
      found.set(photo, { sidecar, attributes: xmpAttributes(reading) });
    } catch (error) {
      warn(`${file}: not an XMP sidecar (${error instanceof Error ? error.message : String(error)})`);
    }
  }
  return found;
}
