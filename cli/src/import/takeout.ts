import fs from 'node:fs/promises';
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

/** The sidecar of each photo in a folder (file name → attributes); a sidecar that is not JSON is skipped with a warning. */
export async function readSidecars(
  dir: string,
  photos: string[],
  warn: (message: string) => void,
): Promise<Map<string, TakeoutAttributes>> {
  const jsons = (await fs.readdir(dir)).filter((name) => name.endsWith('.json'));
  const found = new Map<string, TakeoutAttributes>();
  for (const photo of photos) {
    const name = jsons.find((candidate) => sidecarMatches(photo, candidate));
    if (!name) continue;
    try {
      found.set(photo, attributesOf(JSON.parse(await fs.readFile(path.join(dir, name), 'utf8')) as Sidecar));
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
