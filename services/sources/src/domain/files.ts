import { createHash } from 'node:crypto';
import { MEDIA_FILE_TYPES, type MboxTail } from '@memex/contracts';
import type { Settings } from '../projection/schema.js';
import type { PassedOverList } from '../watch/passed-over.js';

/** A file on disk, as a scan saw it. */
export interface DiskFile {
  path: string;
  size: number;
  modifiedAt: Date;
}

/** What the events about a file of a source say of it (`FileFacts` of contracts/src/events/sources.ts). */
export function fileFacts(sourceId: string, file: DiskFile) {
  return { source_id: sourceId, path: file.path, size: file.size, modified_at: file.modifiedAt.toISOString() };
}

/** What the read model says a path is. */
export interface KnownFile {
  path: string;
  item_id: string | null;
  external_id: string | null;
  sha256: string | null;
  in_place: boolean;
  size: number;
  modified_at: Date;
  rejected: string | null;
  /** An mbox, whose messages are rows of their own (see mailboxes.ts). */
  mailbox: boolean;
  /** Where a read of the mbox grown may start (null: read it through). */
  mbox_tail: MboxTail | null;
  /** It went (from the disk, or from its mbox): since when its item waits to be deleted. */
  leaving_since: Date | null;
  /** A zip or an Evernote export read as its members (see archives.ts). */
  archive?: 'zip' | 'enex' | null;
  /** What of that archive its last read passed over, by why. */
  archive_passed_over?: PassedOverList | null;
}

/** How the files a scan looked at differ from what the memex holds. */
export interface Differences {
  /** On disk, not known. */
  fresh: DiskFile[];
  /** Known, on disk, with another size or time (or back after it went). */
  changed: Array<{ disk: DiskFile; known: KnownFile }>;
  /** Known, no longer on disk. */
  gone: KnownFile[];
}

/** Compares the paths looked at (all of them on a full scan) on disk and in the read model. */
export function differences(
  paths: Iterable<string>,
  disk: ReadonlyMap<string, DiskFile>,
  known: ReadonlyMap<string, KnownFile>,
): Differences {
  const out: Differences = { fresh: [], changed: [], gone: [] };
  for (const path of new Set(paths)) {
    const file = disk.get(path);
    const row = known.get(path);
    if (file && !row) out.fresh.push(file);
    else if (!file && row) out.gone.push(row);
    // A file back where it was after it went is read again (and recorded: it stays).
    else if (
      file &&
      row &&
      (file.size !== row.size || file.modifiedAt.getTime() !== row.modified_at.getTime() || row.leaving_since)
    )
      out.changed.push({ disk: file, known: row });
  }
  return out;
}

const MEDIA_TYPES = new Set(Object.values(MEDIA_FILE_TYPES));

/** Whether a file is read in place (a location) or copied into the blob store, by the source's settings. */
export function readsInPlace(settings: Settings, type: string, size: number): boolean {
  if (settings.media === 'in-place') return true;
  if (settings.media === 'copy') return false;
  return MEDIA_TYPES.has(type) || (settings.in_place_over_bytes !== null && size >= settings.in_place_over_bytes);
}

/**
 * The external_id a new file's item gets: from where it was first seen and what it held, so a
 * scan interrupted after ingest finds the same item again, and a new file later written at a
 * moved file's old path is another item. Kept for the item when the file moves or changes.
 */
export function externalIdOf(path: string, sha256: string): string {
  return createHash('sha256').update(`${path}\0${sha256}`).digest('hex').slice(0, 32);
}

/** A source id from a folder's name (`My Papers` → `my-papers`), unique among `taken` (`my-papers-2`). */
export function sourceIdFor(name: string, taken: ReadonlySet<string>): string {
  const base =
    name
      .normalize('NFKD')
      .toLowerCase()
      .replace(/[^a-z0-9._-]+/g, '-')
      .replace(/^[-._]+|-+$/g, '')
      .slice(0, 56) || 'folder';
  if (!taken.has(base)) return base;
  for (let n = 2; ; n++) if (!taken.has(`${base}-${n}`)) return `${base}-${n}`;
}
