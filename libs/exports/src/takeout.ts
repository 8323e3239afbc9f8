import { files } from './files.js';
import path from 'node:path';

/** What a Google Takeout sidecar says about a photo, as the photo handler's attributes. */
export interface TakeoutAttributes {
  title?: string;
  description?: string;
  taken_at?: string;
  latitude?: number;
  longitude?: number;
  altitude?: number;
}

interface Sidecar {
  title?: unknown;
  description?: unknown;
  photoTakenTime?: { timestamp?: unknown };
  geoData?: { latitude?: unknown; longitude?: unknown; altitude?: unknown };
  geoDataExif?: { latitude?: unknown; longitude?: unknown; altitude?: unknown };
}

const number = (value: unknown): number | undefined =>
  typeof value === 'number' && Number.isFinite(value) ? value : undefined;

/**
 * The names Takeout may have given a photo's sidecar: `IMG_1.jpg.json`, the newer
 * `IMG_1.jpg.supplemental-metadata.json` (cut short to fit 51 characters), the original's for an
 * `-edited` copy, and `IMG_1.jpg(1).json` for `IMG_1(1).jpg`.
 */
function sidecarMatches(photo: string, candidate: string): boolean {
  if (!candidate.endsWith('.json')) return false;
  const names = new Set([photo, photo.replace(/-edited(\.[^.]+)$/i, '$1')]);
  const copy = /^(.*)(\(\d+\))(\.[^.]+)$/.exec(photo);
  const stem = candidate.slice(0, -'.json'.length);
  for (const name of names) {
    if (stem === name) return true;
    if (stem.startsWith(`${name}.`) && 'supplemental-metadata'.startsWith(stem.slice(name.length + 1))) return true;
    // Takeout cuts whole names to 46 characters before `.json`.
    if (name.length > 46 && stem === name.slice(0, 46)) return true;
  }
  return copy !== null && stem === `${copy[1]}${copy[3]}${copy[2]}`;
}

/** The sidecar of each photo in a folder (file name → the sidecar's name and attributes); a sidecar that is not JSON is skipped with a warning. */
export async function readSidecars(
  dir: string,
  photos: string[],
  warn: (message: string) => void,
): Promise<Map<string, { sidecar: string; attributes: TakeoutAttributes }>> {
  const jsons = (await files.list(dir))
    .map((entry) => entry.name)
    .filter((name) => name.endsWith('.json') && name !== ALBUM_FILE);
  const found = new Map<string, { sidecar: string; attributes: TakeoutAttributes }>();
  for (const photo of photos) {
    const name = jsons.find((candidate) => sidecarMatches(photo, candidate));
    if (!name) continue;
    try {
      found.set(photo, {
        sidecar: name,
        attributes: attributesOf(JSON.parse((await files.readFile(path.join(dir, name))).toString('utf8')) as Sidecar),
      });
    } catch (error) {
      warn(
        `${path.join(dir, name)}: not a Takeout sidecar (${error instanceof Error ? error.message : String(error)})`,
      );
    }
  }
  return found;
}

/** Takeout's fields as attributes: its time is UTC seconds; a 0,0 position means none. */
export function attributesOf(sidecar: Sidecar): TakeoutAttributes {
  const out: TakeoutAttributes = {};
  if (typeof sidecar.title === 'string' && sidecar.title.trim()) out.title = sidecar.title.trim();
  if (typeof sidecar.description === 'string' && sidecar.description.trim())
    out.description = sidecar.description.trim();
  const seconds = Number(sidecar.photoTakenTime?.timestamp);
  if (Number.isFinite(seconds) && seconds > 0) out.taken_at = new Date(seconds * 1000).toISOString();
  for (const geo of [sidecar.geoData, sidecar.geoDataExif]) {
    const latitude = number(geo?.latitude);
    const longitude = number(geo?.longitude);
    if (latitude === undefined || longitude === undefined || (latitude === 0 && longitude === 0)) continue;
    out.latitude = latitude;
    out.longitude = longitude;
    const altitude = number(geo?.altitude);
    if (altitude !== undefined) out.altitude = altitude;
    break;
  }
  return out;
}

/** A Google Photos album folder's description of itself. */
const ALBUM_FILE = 'metadata.json';

/** Folders Google Photos names by date (`Photos from 2019`, older exports' `2019-05-03 #2`): not albums. */
const DATE_FOLDER = /^(photos from \d{4}|\d{4}-\d{2}-\d{2}(\s*#\d+)?)$/i;

/**
 * The album a folder of photos is: the title in its `metadata.json` (older exports nest it in
 * `albumData`), else — in a Google Photos folder, told by its Takeout sidecars — the folder's
 * name; none for a folder Google named by date, or any other folder. `file` is the
 * metadata.json read, if there was one.
 */
export async function albumOf(
  dir: string,
  googlePhotos: boolean,
  warn: (message: string) => void,
): Promise<{ title: string | null; file: string | null }> {
  const file = path.join(dir, ALBUM_FILE);
  const album = (title: string | null | undefined) =>
    title && title.trim() && !DATE_FOLDER.test(title.trim()) ? title.trim() : null;
  let text: string;
  try {
    text = (await files.readFile(file)).toString('utf8');
  } catch {
    return { title: googlePhotos ? album(path.basename(dir)) : null, file: null };
  }
  try {
    const parsed = JSON.parse(text) as { title?: unknown; albumData?: { title?: unknown } };
    const title = typeof parsed.title === 'string' ? parsed.title : parsed.albumData?.title;
    return { title: album(typeof title === 'string' ? title : path.basename(dir)), file };
  } catch (error) {
    warn(`${file}: not a Google Photos album description (${error instanceof Error ? error.message : String(error)})`);
    return { title: album(path.basename(dir)), file: null };
  }
}

/** A header field of a message's top header block, unfolded (latin1: what Takeout writes is ASCII or encoded words). */
function headerField(bytes: Buffer, name: string): string | null {
  const end = bytes.indexOf('\n\n') >= 0 ? bytes.indexOf('\n\n') : bytes.indexOf('\r\n\r\n');
  const head = bytes.subarray(0, end >= 0 ? end : Math.min(bytes.length, 64 * 1024)).toString('latin1');
  const match = new RegExp(`^${name}:[ \\t]*(.*(?:\\r?\\n[ \\t].*)*)`, 'im').exec(head);
  return match ? match[1]!.replace(/\r?\n[ \t]+/g, ' ').trim() : null;
}

/** What identifies a message of a Google Takeout mbox across exports, and the labels it has in this one. */
export interface TakeoutMessage {
  /** `gmail:<id>` from the `From ` line Takeout writes, else `message-id:<id>`, else null (the mbox position names it). */
  externalId: string | null;
  /** Its `X-Gmail-Labels` as written, or null when the message has none (not from a Takeout). */
  labels: string | null;
}

export function takeoutMessage(bytes: Buffer, sender: string | null): TakeoutMessage {
  const gmailId = sender ? /^(\d{6,})@xxx$/.exec(sender)?.[1] : undefined;
  const messageId = headerField(bytes, 'message-id')?.replace(/^<|>$/g, '');
  return {
    externalId: gmailId ? `gmail:${gmailId}` : messageId ? `message-id:${messageId}` : null,
    labels: headerField(bytes, 'x-gmail-labels'),
  };
}
