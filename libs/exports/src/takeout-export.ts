import { rmSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { MEDIA_FILE_TYPES } from '@memex/contracts';
import { listFolder, MBOX_TYPE, ZIP_FILE, type FolderFile, type SkippedFile } from './folder.js';
import { withKeepNotes, type TakeoutDocument } from './keep.js';
import { listPhotos, type PhotoFile } from './photos.js';
import { TAR_FILE, unpackTar } from './tar.js';
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
const TAKEOUT_ARCHIVE_READ = 'a Takeout archive: memex import takeout reads it (name it, not the folder it is in)';

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

/** A part of a split Takeout export: `takeout-20261201T101010Z-001.zip`, its siblings `-002.zip`… (or `.tgz`). */
const PART = /^(.*)-\d+\.(zip|tgz|tar\.gz)$/i;

/**
 * A Google Takeout as it was downloaded or unpacked: a folder; a `.zip` with the other parts of its
 * export beside it (read as one folder, without unpacking: a photo's sidecar may be in another
 * part); the given zips; or a folder holding only an export's zips. A `.tgz` export (a tar has no
 * index to read a photo's sidecar by) is unpacked beside its first part, into a hidden folder that
 * `close` removes; it is refused, saying how much it needs, when its disk has less room free than
 * the parts take. `unpacking` is told before it starts.
 */
export async function openTakeout(
  paths: string[],
  unpacking: (parts: string[], into: string) => void = () => undefined,
): Promise<OpenedTakeout> {
  const folder = (root: string): OpenedTakeout => ({ root, parts: [], skipped: [], close: () => undefined });
  const parts = paths.length === 1 ? await partsOf(paths[0]!) : paths;
  if (parts.length === 0) return folder(paths[0]!);
  const tars = parts.filter((part) => TAR_FILE.test(part));
  if (tars.length === 0) {
    const archives = await ZipArchives.open(parts);
    const skipped = archives.skipped.map(({ key, reason }) => ({ key: fromTakeout(key), reason }));
    return { root: archives.path, parts, skipped, close: () => archives.close() };
  }
  if (tars.length < parts.length) throw new Error(`${parts.join(', ')}: a Takeout in .zip and .tgz parts at once`);
  const root = path.join(path.dirname(parts[0]!), `.${path.basename(parts[0]!)}.unpacked`);
  const remove = () => rmSync(root, { recursive: true, force: true });
  remove();
  await enoughRoom(parts, root);
  unpacking(parts, root);
  const skipped: SkippedFile[] = [];
  try {
    for (const part of parts) {
      for (const { key, reason } of await unpackTar(part, root))
        skipped.push({ key: fromTakeout(key), reason: `${reason} (in ${path.basename(part)})` });
    }
  } catch (error) {
    remove();
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOSPC')
      throw new Error(
        `${parts[0]}: the disk filled while unpacking it beside itself: unpack it (tar xzf) where there is room, and import that folder`,
      );
    if (code === 'EACCES' || code === 'EPERM' || code === 'EROFS')
      throw new Error(
        `${parts[0]}: a .tgz Takeout is unpacked beside it, and its folder cannot be written (${code}): unpack it (tar xzf) where you can write, and import that folder`,
      );
    throw error;
  }
  return { root, parts, skipped, close: remove };
}

/** Refuses to unpack when the disk the parts are on has less room free than they take (Takeout's photos and videos hardly compress). */
async function enoughRoom(parts: string[], root: string): Promise<void> {
  let needed = 0;
  for (const part of parts) needed += (await fs.stat(part)).size;
  const disk = await fs.statfs(path.dirname(root));
  const free = disk.bavail * disk.bsize;
  if (free < needed) {
    const gb = (bytes: number) => `${(bytes / 1e9).toFixed(1)} GB`;
    throw new Error(
      `${parts[0]}: a .tgz Takeout is unpacked beside it, which needs about ${gb(needed)}; ${gb(free)} are free there: ` +
        'unpack it (tar xzf) where there is room and import that folder, or export as .zip (read as it is)',
    );
  }
}

/** The parts a single path names: an archive and its export's other parts, or a folder's only archives; none for a Takeout folder. */
async function partsOf(target: string): Promise<string[]> {
  if (!(await fs.stat(target)).isDirectory()) {
    const stem = PART.exec(path.basename(target))?.[1];
    if (stem === undefined) return [target];
    const dir = path.dirname(target);
    const siblings = (await fs.readdir(dir)).filter((name) => PART.exec(name)?.[1] === stem);
    return siblings.sort().map((name) => path.join(dir, name));
  }
  const names = (await fs.readdir(target)).filter((name) => !name.startsWith('.'));
  const archives = names.filter((name) => ZIP_FILE.test(name) || TAR_FILE.test(name));
  return archives.length > 0 && archives.length === names.length
    ? archives.sort().map((name) => path.join(target, name))
    : [];
}
