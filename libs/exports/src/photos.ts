import { createHash } from 'node:crypto';
import path from 'node:path';
import { files } from './files.js';
import type { FolderFile, SkippedFile } from './folder.js';
import { albumOf, readSidecars, type TakeoutAttributes } from './takeout.js';
import { readXmpSidecars, type XmpAttributes } from './apple.js';

/** A photo or video with what its sidecars say: attributes for the handler, albums and keywords as labels. */
export interface PhotoFile extends FolderFile {
  attributes: Record<string, unknown>;
  labels: string[];
}

/**
 * A scope label from an album's or keyword's name: labels are tokens (no spaces or commas), and
 * the prefix keeps them apart from session labels (`photos`, `mail`), so `Rome 2019` is
 * `album:Rome-2019` and the keyword `beach` is `keyword:beach`.
 */
export function labelOf(prefix: 'album' | 'keyword' | 'keep', name: string): string {
  return `${prefix}:${name.trim().replace(/[\s,\0]+/g, '-')}`.slice(0, 200);
}

/** Files beside photos that are read with them: they are accounted for as skipped, with what they gave. */
const SIDECAR_READ = 'a sidecar (Google Takeout .json or XMP), read with its photo';
const ALBUM_READ = "a Google Photos album's metadata.json: its title labels the album's photos";

async function sha256Of(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of files.read(file)) hash.update(chunk);
  return hash.digest('hex');
}

/** The Takeout JSON's and the XMP's fields as one set of handler attributes (keywords go to labels). */
function attributesOf(takeout: TakeoutAttributes | undefined, xmp: XmpAttributes | undefined): Record<string, unknown> {
  const { keywords: _keywords, ...fromXmp } = xmp ?? {};
  // Google's own record of a Google Photos item wins over XMP a tool wrote into it.
  return { ...fromXmp, ...takeout, ...(xmp?.keywords ? { keywords: xmp.keywords } : {}) };
}

/**
 * The photos and videos of a folder tree with what is known about each beside its bytes: the
 * Google Takeout sidecar (time, place, caption), the XMP sidecar of Apple Photos and other tools
 * (title, caption, keywords, time, place, people), and its album (a Google Photos folder's
 * `metadata.json` title or name). The same photo in several album folders (Takeout writes a copy
 * into each) is sent once, with every album as a label; the other copies, the sidecars and the
 * album files are accounted for as skipped, with the reason.
 */
export async function listPhotos(
  files: FolderFile[],
  otherFiles: SkippedFile[],
  root: string,
  warn: (message: string) => void,
): Promise<{ files: PhotoFile[]; skipped: SkippedFile[] }> {
  const photos: PhotoFile[] = [];
  const byDir = new Map<string, FolderFile[]>();
  for (const file of files) byDir.set(path.dirname(file.file), [...(byDir.get(path.dirname(file.file)) ?? []), file]);
  const used = new Map<string, string>(); // file read as a sidecar or album → the reason
  for (const [dir, inDir] of byDir) {
    const names = inDir.map((f) => path.basename(f.file));
    const takeout = await readSidecars(dir, names, warn);
    const xmp = await readXmpSidecars(dir, names, warn);
    const album = await albumOf(dir, takeout.size > 0, warn);
    if (album.file) used.set(album.file, ALBUM_READ);
    for (const file of inDir) {
      const name = path.basename(file.file);
      const sidecars = xmp.get(name);
      if (sidecars) used.set(path.join(dir, sidecars.sidecar), SIDECAR_READ);
      const json = takeout.get(name);
      if (json) used.set(path.join(dir, json.sidecar), SIDECAR_READ);
      const attributes = attributesOf(json?.attributes, sidecars?.attributes);
      photos.push({
        ...file,
        attributes: { filename: name, ...attributes },
        labels: [
          ...(album.title ? [labelOf('album', album.title)] : []),
          ...((attributes['keywords'] as string[] | undefined) ?? []).map((k) => labelOf('keyword', k)),
        ],
      });
    }
  }
  const isUsed = (skip: SkippedFile) => used.get(path.join(root, ...skip.key.split('/')));
  const merged = await oneItemPerPhoto(photos);
  return {
    files: merged.files,
    skipped: [...otherFiles.map((skip) => ({ key: skip.key, reason: isUsed(skip) ?? skip.reason })), ...merged.skipped],
  };
}

/** Copies of one photo (same size, then same bytes) become the first copy, carrying every copy's labels. */
async function oneItemPerPhoto(photos: PhotoFile[]): Promise<{ files: PhotoFile[]; skipped: SkippedFile[] }> {
  const bySize = new Map<number, PhotoFile[]>();
  for (const photo of photos) bySize.set(photo.size, [...(bySize.get(photo.size) ?? []), photo]);
  const copyOf = new Map<PhotoFile, PhotoFile>();
  for (const same of bySize.values()) {
    if (same.length < 2) continue;
    const first = new Map<string, PhotoFile>();
    for (const photo of same) {
      const hash = await sha256Of(photo.file);
      const original = first.get(hash);
      if (!original) {
        first.set(hash, photo);
        continue;
      }
      copyOf.set(photo, original);
      original.labels = [...new Set([...original.labels, ...photo.labels])];
    }
  }
  return {
    files: photos.filter((photo) => !copyOf.has(photo)),
    skipped: [...copyOf.keys()].map((copy) => ({
      key: copy.key,
      reason:
        "the same photo as another file here (Takeout copies a photo into each of its albums): sent once, with every album's label",
    })),
  };
}

/**
 * What a photo is sent with: its sidecars' attributes and labels, and its file's time. The XMP and
 * IPTC inside its bytes (Apple Photos writes title, caption and keywords there) are the photo
 * handler's own reading, which fills what no sidecar said and labels the photo by its keywords.
 */
export function photoMetadata(photo: PhotoFile): { attributes: Record<string, unknown>; labels: string[] } {
  return { attributes: { modified: photo.modified, ...photo.attributes }, labels: photo.labels };
}
