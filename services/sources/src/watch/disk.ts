import { createHash } from 'node:crypto';
import { createReadStream, existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { completePartialEmlx, isPartialEmlx, partialEmlxOf, savedPageOf } from '@memex/exports';
import type { DiskFile } from '../domain/files.js';

/** Files smaller than this are read whole (hashed and, when copied, sent from the same buffer). */
const SMALL_FILE_BYTES = 1024 * 1024;

/** A Maildir folder's subfolders that hold messages (`tmp/` holds deliveries not finished). */
const MESSAGE_FOLDERS = new Set(['new', 'cur']);

/** A source's root location (`file:/abs/folder/`) as a path on this host. */
export function rootPath(root: string): string {
  return root.slice('file:'.length).replace(/\/+$/, '') || '/';
}

/**
 * Paths that are never items: hidden files and folders (`.DS_Store`, `.git/`) but a Maildir++
 * folder (`.Work/cur/…`), deliveries not finished (a Maildir's `tmp/`), and what is in the
 * folder of a web page saved complete (`Page_files/` beside `Page.html`: its images and scripts).
 */
export function isIgnored(root: string, relative: string): boolean {
  const parts = relative.split('/');
  const at = (i: number, ...more: string[]) => path.join(root, ...parts.slice(0, i), ...more);
  // A Maildir++ folder holds `cur/`; one deleted is known by the path of a message that was in it.
  const hidden = (part: string, i: number) =>
    part.startsWith('.') && !(MESSAGE_FOLDERS.has(parts[i + 1] ?? '') || existsSync(at(i + 1, 'cur')));
  if (parts.some(hidden)) return true;
  if (parts.some((part, i) => part === 'tmp' && i < parts.length - 1 && existsSync(at(i, 'cur')))) return true;
  return parts.some(
    (folder, i) =>
      savedPageOf(folder, (sibling) => existsSync(path.join(root, ...parts.slice(0, i), sibling))) !== null,
  );
}

/**
 * What a watcher passes over: what `isIgnored` does, but a hidden folder in a Maildir (beside its
 * `cur/`) is watched, as a Maildir++ folder its client is making: `.Archive` comes before the
 * `.Archive/cur/` that shows it is one, and a folder the watcher passed over it never looks into.
 */
export function isIgnoredByWatcher(root: string, relative: string): boolean {
  const parent = path.dirname(relative);
  if (path.basename(relative).startsWith('.') && existsSync(path.join(root, parent, 'cur')))
    return parent !== '.' && isIgnored(root, parent);
  return isIgnored(root, relative);
}

/** Why the root cannot be scanned now (gone, not a folder, not readable), or null. */
export async function rootProblem(dir: string): Promise<string | null> {
  try {
    const stat = await fs.stat(dir);
    if (!stat.isDirectory()) return `${dir} is no longer a folder`;
    await fs.access(dir, fs.constants.R_OK | fs.constants.X_OK);
    return null;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR')
      return `the folder ${dir} is gone (${code}): renamed, deleted, or its volume not mounted`;
    return `the folder ${dir} cannot be read (${code ?? (error as Error).message})`;
  }
}

/**
 * A root with nothing in it while the source had files is an unmounted volume's empty mount
 * point far more often than a folder emptied on purpose: it is treated as away, not as deleted.
 */
export async function emptyRoot(dir: string, known: number): Promise<string | null> {
  const entries = await fs.readdir(dir);
  if (entries.length > 0) return null;
  return `the folder ${dir} is empty while it had ${known} files: its volume is probably not mounted (its items are kept; put a file back, or memex sources remove it)`;
}

/** Every regular, visible file under `dir` (relative to `root`, `/`-separated), saved pages' resources left out. */
export async function walk(
  root: string,
  dir = root,
  into = new Map<string, DiskFile>(),
): Promise<Map<string, DiskFile>> {
  let entries;
  try {
    entries = await fs.readdir(dir, { withFileTypes: true });
  } catch (error) {
    // A subfolder removed during the walk has no files; the root's own absence is checked first.
    if (dir !== root && (error as NodeJS.ErrnoException).code === 'ENOENT') return into;
    throw error;
  }
  const names = new Set(entries.map((entry) => entry.name));
  const maildir = names.has('cur') || names.has('new');
  for (const entry of entries) {
    const full = path.join(dir, entry.name);
    // Hidden, but a Maildir++ folder (`.Work`, holding `cur/`); a Maildir's `tmp/` holds deliveries under way.
    if (entry.name.startsWith('.') && !(entry.isDirectory() && existsSync(path.join(full, 'cur')))) continue;
    if (entry.isDirectory()) {
      if (maildir && entry.name === 'tmp') continue;
      if (!savedPageOf(entry.name, (sibling) => names.has(sibling))) await walk(root, full, into);
    } else if (entry.isFile()) {
      const file = await statFile(root, full);
      if (file) into.set(file.path, file);
    }
  }
  return into;
}

/** A file's size and time, or null when it is not (or no longer) a regular file. */
export async function statFile(root: string, full: string): Promise<DiskFile | null> {
  try {
    const stat = await fs.stat(full);
    if (!stat.isFile()) return null;
    return { path: relativeOf(root, full), size: stat.size, modifiedAt: stat.mtime };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}

export function relativeOf(root: string, full: string): string {
  return path.relative(root, full).split(path.sep).join('/');
}

/** A file's sha256, and its bytes when it is small; null when it vanished meanwhile. */
export async function readFile(full: string, size: number): Promise<{ sha256: string; bytes: Buffer | null } | null> {
  try {
    if (size < SMALL_FILE_BYTES) {
      const bytes = await fs.readFile(full);
      return { sha256: createHash('sha256').update(bytes).digest('hex'), bytes };
    }
    const hash = createHash('sha256');
    for await (const chunk of createReadStream(full)) hash.update(chunk as Buffer);
    return { sha256: hash.digest('hex'), bytes: null };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}

/**
 * A file's content as the memex takes it: its sha256 and, when small, its bytes; for Apple Mail's
 * `.partial.emlx`, the message with the parts Mail keeps apart put back. Null when it vanished
 * meanwhile.
 */
export async function readContent(
  root: string,
  file: DiskFile,
): Promise<{ sha256: string; bytes: Buffer | null } | null> {
  const full = path.join(root, file.path);
  if (!isPartialEmlx(file.path)) return readFile(full, file.size);
  const bytes = await fs.readFile(full).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return null;
    throw error;
  });
  if (!bytes) return null;
  const whole = (await completePartialEmlx(bytes, full)).bytes;
  return { sha256: createHash('sha256').update(whole).digest('hex'), bytes: whole };
}

/**
 * The files of `looked` that Apple Mail keeps apart from a `.partial.emlx` that is there
 * (`Attachments/123/2/report.pdf`): they are no items, but parts of that message.
 */
export function keptApart(root: string, looked: Iterable<DiskFile>): Set<string> {
  const apart = new Set<string>();
  for (const { path: key } of looked) {
    const message = partialEmlxOf(key);
    if (message !== null && existsSync(path.join(root, message))) apart.add(key);
  }
  return apart;
}
