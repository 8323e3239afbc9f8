import fs from 'node:fs/promises';
import path from 'node:path';
import { MEDIA_FILE_TYPES } from '@memex/contracts';
import { listFolder, MBOX_TYPE, ZIP_FILE, type FolderFile, type SkippedFile } from './folder.js';
import { withKeepNotes, type TakeoutDocument } from './keep.js';
import { listPhotos, type PhotoFile } from './photos.js';
import { ZipArchives } from './zip.js';

/** An mbox of a Takeout's Mail folder. */
export interface TakeoutMbox {
  key: string;
  file: string;
  size: number;
}

/** Everything in a Google Takeout folder: its mail, its photos and videos, its other files, and what is not read (with why). */
export interface TakeoutListing {
  mboxes: TakeoutMbox[];
  photos: PhotoFile[];
  /** Documents, calendars, contacts (Drive, Calendar, Contacts…), read as a folder import reads them; Keep's notes with their labels. */
  documents: TakeoutDocument[];
  skipped: SkippedFile[];
}

/** An archive of a Takeout export, left among the unpacked files. */
const TAKEOUT_ARCHIVE = /(^|\/)takeout-[^/]*\.(zip|tgz|tar\.gz)$/i;
const TAKEOUT_ARCHIVE_READ =
  'a Takeout archive: memex import takeout reads the .zip parts of an export as they are (a .tgz must be unpacked)';

/**
 * A file's key as from the `Takeout` folder, whether the folder read is that one or the one it was
 * unpacked in (or its zips): an export's photos and files keep their keys however it is read, so a
 * newer export read another way sends only what is new.
 */
const fromTakeout = (key: string) => key.replace(/^Takeout\//, '');

/** Takeout's own pages about the archive, not part of anyone's data. */
const TAKEOUT_INDEX = /(^|\/)archive_browser\.html$/;

/**
 * A Google Takeout folder (the `Takeout` folder of the unpacked archives, or one above it): the
 * mbox files of Mail, Google Photos with its sidecars and albums, and every other file a handler
 * of the memex takes; the rest is skipped with the reason, so the summary accounts for every file.
 */
export async function listTakeout(
  root: string,
  accepted: ReadonlySet<string>,
  warn: (message: string) => void,
): Promise<TakeoutListing> {
  const listed = await listFolder(root, new Set([...accepted, MBOX_TYPE]));
  const media = new Set<string>(Object.values(MEDIA_FILE_TYPES));
  const mboxes: TakeoutMbox[] = [];
  const skipped: SkippedFile[] = [];
  const documents: FolderFile[] = [];
  const photoFiles: FolderFile[] = [];
  for (const { key, reason } of listed.skipped)
    skipped.push({ key, reason: TAKEOUT_ARCHIVE.test(key) ? TAKEOUT_ARCHIVE_READ : reason });
  for (const file of listed.files) {
    if (file.type === MBOX_TYPE) mboxes.push({ key: file.key, file: file.file, size: file.size });
    else if (TAKEOUT_INDEX.test(file.key))
      skipped.push({ key: file.key, reason: "Takeout's index of the archive (not your data)" });
    else if (media.has(file.type)) photoFiles.push(file);
    else documents.push(file);
  }
  const photos = await listPhotos(photoFiles, skipped, root, warn);
  const keep = await withKeepNotes(documents, photos.skipped, warn);
  const keyed = <T extends { key: string }>(files: T[]) =>
    files.map((file) => ({ ...file, key: fromTakeout(file.key) }));
  return {
    mboxes: keyed(mboxes),
    photos: keyed(photos.files),
    documents: keyed(keep.documents),
    skipped: keyed(keep.skipped),
  };
}

/** A Takeout to list: its folder (unpacked, or its zip archives mounted), what its archives cannot give, and how to let it go. */
export interface OpenedTakeout {
  root: string;
  /** The archives read (none for a folder). */
  parts: string[];
  skipped: SkippedFile[];
  close(): void;
}

/** A part of a split Takeout export: `takeout-20261201T101010Z-001.zip`, its siblings `-002.zip`… */
const ZIP_PART = /^(.*)-\d+\.zip$/i;
const TAR = /\.(tgz|tar\.gz|tar)$/i;

/**
 * A Google Takeout as it was downloaded or unpacked: a folder; a `.zip` with the other parts of its
 * export beside it (read as one folder, without unpacking: a photo's sidecar may be in another
 * part); the given zips; or a folder holding only an export's zips. A `.tgz` export is refused,
 * saying how to read it: a tar has no index, and a photo is read with its sidecar and albums.
 */
export async function openTakeout(paths: string[]): Promise<OpenedTakeout> {
  const folder = (root: string): OpenedTakeout => ({ root, parts: [], skipped: [], close: () => undefined });
  const tar = paths.find((file) => TAR.test(file));
  if (tar)
    throw new Error(
      `${tar}: a Takeout in .tgz cannot be read packed (a tar has no index to find a photo's sidecar by): unpack it (tar xzf) and import the folder, or export as .zip`,
    );
  const zips = paths.length === 1 ? await zipsOf(paths[0]!) : paths;
  if (zips.length === 0) return folder(paths[0]!);
  const archives = await ZipArchives.open(zips);
  const skipped = archives.skipped.map(({ key, reason }) => ({ key: fromTakeout(key), reason }));
  return { root: archives.path, parts: zips, skipped, close: () => archives.close() };
}

/** The zip parts a single path names: a zip and its export's other parts, or a folder's only zips; none for a Takeout folder. */
async function zipsOf(target: string): Promise<string[]> {
  if (!(await fs.stat(target)).isDirectory()) {
    const stem = ZIP_PART.exec(path.basename(target))?.[1];
    if (stem === undefined) return [target];
    const dir = path.dirname(target);
    const siblings = (await fs.readdir(dir)).filter((name) => ZIP_PART.exec(name)?.[1] === stem);
    return siblings.sort().map((name) => path.join(dir, name));
  }
  const names = (await fs.readdir(target)).filter((name) => !name.startsWith('.'));
  const zips = names.filter((name) => ZIP_FILE.test(name));
  return zips.length > 0 && zips.length === names.length ? zips.sort().map((name) => path.join(target, name)) : [];
}
