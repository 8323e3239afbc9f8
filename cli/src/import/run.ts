import fs from 'node:fs/promises';
import path from 'node:path';
import type { MemexClient } from '@memex/client';
import { FolderArchives, openTakeout, ZIP_FILE, type SkippedFile } from '@memex/exports';
import { feedFor, warn } from './feeds.js';
import { ImportReport, type Summary } from './report.js';
import { StateFile } from './state.js';
import { ReadModelWatch } from './read-model-watch.js';
import { Uploader, type Answered, type Result } from './uploader.js';

export type ImportKind = 'mbox' | 'maildir' | 'folder' | 'photos' | 'takeout' | 'pst' | 'olm';

export interface ImportOptions {
  kind: ImportKind;
  /** What is imported: a folder, or a file (an mbox, an Outlook file or archive, a zip read as a folder). */
  target: string;
  /** takeout: further zip archives of the export, beside `target` (see `openTakeout`). */
  parts?: string[];
  /** The source id: items get source import:<kind>:<source>. */
  source: string;
  home: string;
  client: MemexClient;
  labels: string[];
  /** mbox, pst and olm: the folder their messages were in (a label; Spam or Junk marks them spam). */
  folder?: string;
  batchItems: number;
  batchBytes: number;
  inFlight: number;
  retries: number;
  restart: boolean;
  /** Draws progress on this stream when it is a terminal. */
  progress?: NodeJS.WriteStream;
}

/** What a run did; `error` is set when it stopped early (its state is saved: run again to continue). */
export interface ImportOutcome {
  summary: Summary;
  error?: unknown;
}

/**
 * Imports a container through memex.ingest: streamed, batched, resumable. The state is saved
 * after every answered batch, so a run that stops (the memex went away, Ctrl-C, a crash)
 * continues where it stopped when run again, and what was already sent comes back as duplicates.
 */
export async function runImport(options: ImportOptions): Promise<ImportOutcome> {
  if (options.kind !== 'takeout') {
    // A zip named as what is imported (a folder of photos, a Maildir, mboxes) is read as the folder it unpacks to.
    const target = path.resolve(options.target);
    const archives = new FolderArchives();
    try {
      // An .olm is a zip too.
      const zipped =
        options.kind === 'olm' || (options.kind !== 'pst' && ZIP_FILE.test(target) && (await fs.stat(target)).isFile());
      return await importFrom({ ...options, target }, zipped ? (await archives.open(target)).skipped : []);
    } finally {
      archives.close();
    }
  }
  // A Takeout's zips are read as the folder they unpack to, at their own path (see openTakeout).
  const names = (parts: string[]) => parts.map((part) => path.basename(part)).join(', ');
  const takeout = await openTakeout(
    [options.target, ...(options.parts ?? [])].map((part) => path.resolve(part)),
    (parts, into) => warn(options)(`unpacking ${names(parts)} into ${into} (removed when the import ends)`),
  );
  if (takeout.parts.length > 0) warn(options)(`reading ${names(takeout.parts)} as one Takeout`);
  try {
    return await importFrom({ ...options, target: takeout.root }, takeout.skipped);
  } finally {
    takeout.close();
  }
}

/** Imports what `options` name; `unreadable`: what the zip archives it is read from hold that cannot be read. */
async function importFrom(options: ImportOptions, unreadable: SkippedFile[]): Promise<ImportOutcome> {
  const { target } = options;
  const stateFile = new StateFile(options.home, options.kind, options.source);
  const state = stateFile.load(options.kind, options.source, target, options.restart, options.kind === 'takeout');
  const feed = await feedFor(options, state, stateFile);
  const report = new ImportReport(state, feed.total, options.progress);
  const readModels = new ReadModelWatch(options.client.options.url);
  const uploader = new Uploader({
    client: options.client,
    batchItems: options.batchItems,
    batchBytes: options.batchBytes,
    inFlight: options.inFlight,
    retries: options.retries,
    onBatch(batch: Answered[], results: Result[]) {
      feed.commit(batch, results);
      report.record(batch, results, batch[batch.length - 1]!.position ?? 0);
      stateFile.save(state);
    },
    async catchingUp() {
      const { busy, lag } = await readModels.catchingUp();
      if (busy)
        warn(options)(`waiting: the memex's read models are ${lag!.toLocaleString('en')} events behind, catching up`);
      return busy;
    },
  });
  report.startProgress();
  let error: unknown;
  try {
    for (const { key, reason } of unreadable) report.skip(key, reason);
    await feed.send(uploader, report);
    await uploader.finish();
  } catch (failure) {
    error = failure;
    // What was answered before the failure is recorded; let the batches in flight land.
    await uploader.finish().catch(() => undefined);
  } finally {
    report.stopProgress();
    stateFile.save(state);
    stateFile.close();
    feed.close?.();
  }
  const summary = report.summary(`import:${options.kind}:${options.source}`, feed.earlier);
  return error === undefined ? { summary } : { summary, error };
}
