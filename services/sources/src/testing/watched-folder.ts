import { after, before } from 'node:test';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Kysely } from 'kysely';
import type { MemexConfig } from '@memex/config';
import { createDatabase } from '@memex/db';
import { startSourcesHarness, type SourcesHarness } from './harness.js';

/** A watched folder's tests: the harness, the folder, ingest's schema to read, and writes as a client makes them. */
export interface WatchedFolder {
  h: SourcesHarness;
  dir: string;
  ingestDb: Kysely<Record<string, never>>;
  /** Writes a file in place, with a time later than any before, as a client's writes would have. */
  write(relative: string, content: string | Buffer): Promise<void>;
  /**
   * A file as it is next, written beside and moved into place with its time set: a scan never
   * sees it written but with its old time (it would read it twice, the second time from its end).
   */
  replace(relative: string, content: string | Buffer): Promise<void>;
  /** Sets a file's time later than any before (a file written by another tool). */
  touch(relative: string): Promise<void>;
}

/**
 * Ingest and sources running, a folder to watch and ingest's schema to read, around the tests of
 * a `describe` (set by its `before`, so read them in the tests).
 */
export function watchedFolder(prefix: string, config: Partial<MemexConfig> = {}): WatchedFolder {
  const t = {} as WatchedFolder;
  before(async () => {
    t.h = await startSourcesHarness({ config });
    t.dir = await fs.mkdtemp(path.join(os.tmpdir(), prefix));
    t.ingestDb = createDatabase(t.h.env.config.databaseUrl, { schema: 'ingest' });
  });
  after(async () => {
    await t.ingestDb.destroy();
    await t.h.stop();
    await fs.rm(t.dir, { recursive: true, force: true });
  });
  let clock = Date.now() / 1000;
  const later = async (file: string) => {
    clock += 10;
    await fs.utimes(file, clock, clock);
  };
  return Object.assign(t, {
    async write(relative: string, content: string | Buffer) {
      const file = path.join(t.dir, relative);
      await fs.mkdir(path.dirname(file), { recursive: true });
      await fs.writeFile(file, content);
      await later(file);
    },
    async replace(relative: string, content: string | Buffer) {
      const next = path.join(t.dir, '..', `${path.basename(t.dir)}-next`);
      await fs.writeFile(next, content);
      await later(next);
      await fs.rename(next, path.join(t.dir, relative));
    },
    touch: (relative: string) => later(path.join(t.dir, relative)),
  });
}
