import fs from 'node:fs';
import path from 'node:path';
import type { WorkerFailure } from '@memex/locations';
import type { KnownFile } from '@memex/sources';

/** What the worker knows of one file: the item it is (or why it is none), and how it looked. */
export interface FileRecord {
  item_id: string | null;
  external_id: string | null;
  sha256: string | null;
  size: number;
  modified_at: string;
  /** Why the memex did not take it (no handler, rejected), so it is not sent again until it changes. */
  rejected: string | null;
  /** Its type is none a handler reads: skipped, not a failure. */
  unsupported?: boolean;
}

interface StateJson {
  version: 1;
  /** Folder → path relative to it → record. */
  folders: Record<string, Record<string, FileRecord>>;
}

/**
 * The worker's record of its files (`<data dir>/worker-state.json`), so that a restart sends
 * nothing twice; written atomically after each answered batch. The memex's log holds the items;
 * this only saves the worker from asking again.
 */
export class WorkerState {
  private readonly file: string;
  private readonly state: StateJson;

  constructor(dataDir: string) {
    fs.mkdirSync(dataDir, { recursive: true });
    this.file = path.join(dataDir, 'worker-state.json');
    try {
      this.state = JSON.parse(fs.readFileSync(this.file, 'utf8')) as StateJson;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT')
        throw new Error(`cannot read ${this.file}: ${(error as Error).message} (move it away to scan from scratch)`);
      this.state = { version: 1, folders: {} };
    }
  }

  /** The files of a folder as the sources scanner compares them. */
  known(folder: string): Map<string, KnownFile> {
    const records = this.state.folders[folder] ?? {};
    return new Map(
      Object.entries(records).map(([relative, r]) => [
        relative,
        {
          path: relative,
          ...r,
          in_place: true,
          mailbox: false,
          mbox_tail: null,
          leaving_since: null,
          modified_at: new Date(r.modified_at),
        },
      ]),
    );
  }

  set(folder: string, relative: string, record: FileRecord): void {
    (this.state.folders[folder] ??= {})[relative] = record;
  }

  delete(folder: string, relative: string): void {
    delete this.state.folders[folder]?.[relative];
  }

  /** Its files that are items, the distinct items they are (identical copies are one item), and its failed files. */
  counts(): { files: number; items: number; failed: number } {
    const ids = new Set<string>();
    let files = 0;
    let failed = 0;
    for (const records of Object.values(this.state.folders))
      for (const record of Object.values(records))
        if (record.item_id) {
          files++;
          ids.add(record.item_id);
        } else if (isFailure(record)) failed++;
    return { files, items: ids.size, failed };
  }

  /** The first `limit` failed files (by folder and path), with why. */
  failures(limit: number): WorkerFailure[] {
    const failures: WorkerFailure[] = [];
    for (const [folder, records] of Object.entries(this.state.folders).sort(([a], [b]) => a.localeCompare(b)))
      for (const [relative, record] of Object.entries(records).sort(([a], [b]) => a.localeCompare(b))) {
        if (failures.length >= limit) return failures;
        if (isFailure(record))
          failures.push({
            path: path.join(folder, relative),
            reason: record.rejected,
            modified_at: record.modified_at,
          });
      }
    return failures;
  }

  /** A folder's failed files (paths relative to it), which a rescan asked for reads again. */
  failedPaths(folder: string): string[] {
    return Object.entries(this.state.folders[folder] ?? {}).flatMap(([relative, record]) =>
      isFailure(record) ? [relative] : [],
    );
  }

  save(): void {
    const temp = `${this.file}.tmp`;
    fs.writeFileSync(temp, JSON.stringify(this.state));
    fs.renameSync(temp, this.file);
  }
}

/** A file the memex was sent (or read ahead) and could not take; a skipped type is none. */
function isFailure(record: FileRecord): record is FileRecord & { rejected: string } {
  return record.item_id === null && record.rejected !== null && record.unsupported !== true;
}
