import fs from 'node:fs/promises';
import path from 'node:path';
import { INGEST_REQUEST_LIMIT_BYTES, MEDIA_FILE_TYPES, Types } from '@memex/contracts';
import type { MemexClient } from '@memex/client';
import { listFolder, type FolderFile } from './folder.js';
import { listMaildir, type SkippedFile } from './maildir.js';
import { readSidecars, type TakeoutAttributes } from './takeout.js';
import { readMbox } from './mbox.js';
import { ImportReport, type Summary } from './report.js';
import { StateFile, type ImportState } from './state.js';
import { Uploader, type Answered, type Item, type Result } from './uploader.js';

export type ImportKind = 'mbox' | 'maildir' | 'folder' | 'photos';

export interface ImportOptions {
  kind: ImportKind;
  /** The mbox file or the directory. */
  target: string;
  /** The source id: items get source import:<kind>:<source>. */
  source: string;
  home: string;
  client: MemexClient;
  labels: string[];
  /** mbox only: the folder its messages were in (a label; Spam or Junk marks them spam). */
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

/** Where each kind of source reads from, and how its progress is recorded. */
interface Feed {
  total: { value: number; unit: 'bytes' | 'files' };
  /** Files done by earlier runs, not sent again. */
  earlier: number;
  send(uploader: Uploader, report: ImportReport): Promise<void>;
  /** Records an answered batch in the state: the mbox offset reached, or the files done. */
  commit(batch: Answered[], results: Result[]): void;
}

const tooLarge = (bytes: number) =>
  `it is ${(bytes / 1024 / 1024).toFixed(1)} MB; one memex.ingest request carries at most ${INGEST_REQUEST_LIMIT_BYTES / 1024 / 1024} MB`;

function mboxFeed(options: ImportOptions, state: ImportState, size: number): Feed {
  const base = path.basename(options.target);
  return {
    total: { value: size, unit: 'bytes' },
    earlier: 0,
    async send(uploader) {
      for await (const message of readMbox(options.target, state.offset)) {
        const key = `${base}#${message.offset}`;
        if (message.bytes.length > INGEST_REQUEST_LIMIT_BYTES) {
          await uploader.reject({ key, position: message.end }, tooLarge(message.bytes.length));
          continue;
        }
        const attributes = {
          ...(options.folder ? { folder: options.folder } : {}),
          ...(message.received ? { received: message.received } : {}),
        };
        await uploader.add({
          key,
          position: message.end,
          bytes: message.bytes.length,
          item: item(options, 'message/rfc822', message.bytes, key, attributes),
        });
      }
    },
    commit(batch) {
      state.offset = batch[batch.length - 1]!.position!;
    },
  };
}

/**
 * Maildir and folder imports: a list of files, each done once (recorded in the state's `.done`
 * file), and the files skipped with their reasons (counted every run: they were not sent). A
 * rejected file is not done: the next run sends it again (fixed, or a newer memex may read it).
 */
function filesFeed<F extends { key: string; file: string; size?: number }>(
  stateFile: StateFile,
  listed: { files: F[]; skipped: SkippedFile[] },
  doneKey: (file: F) => string,
  toItem: (file: F, bytes: Buffer) => Item,
): Feed {
  const { files, skipped } = listed;
  const done = stateFile.doneKeys();
  const byKey = new Map(files.map((f) => [f.key, f]));
  const earlier = files.filter((f) => done.has(doneKey(f))).length;
  let position = earlier;
  return {
    total: { value: files.length, unit: 'files' },
    earlier,
    async send(uploader, report) {
      for (const { key, reason } of skipped) report.skip(key, reason);
      for (const file of files) {
        if (done.has(doneKey(file))) continue;
        const size = file.size ?? (await fs.stat(file.file)).size;
        if (size > INGEST_REQUEST_LIMIT_BYTES) {
          await uploader.reject({ key: file.key }, tooLarge(size));
          continue;
        }
        const bytes = await fs.readFile(file.file);
        await uploader.add({ key: file.key, bytes: bytes.length, item: toItem(file, bytes) });
      }
    },
    commit(batch, results) {
      position += batch.length;
      const answered = batch.filter((_, i) => results[i]!.status !== 'rejected');
      stateFile.appendDone(answered.map((a) => doneKey(byKey.get(a.key)!)));
      batch.forEach((a) => (a.position = position));
    },
  };
}

/** What a file of a folder import carries besides its bytes: a message its file time and folder, a document its name and time. */
function folderAttributes(file: FolderFile): Record<string, unknown> {
  if (file.type !== 'message/rfc822') return { filename: path.basename(file.file), modified: file.modified };
  const folder = path.posix.dirname(file.key);
  // The folder a loose .eml sits in is its folder label (Junk/ marks it spam, as in a Maildir).
  return { modified: file.modified, ...(folder !== '.' ? { folder } : {}) };
}

function item(
  options: ImportOptions,
  type: string,
  bytes: Buffer,
  externalId: string,
  attributes: Record<string, unknown>,
): Item {
  return {
    type,
    data: bytes.toString('base64'),
    source: { kind: options.kind, id: options.source },
    external_id: externalId,
    attributes,
    ...(options.labels.length > 0 ? { labels: options.labels } : {}),
  };
}

async function feedFor(options: ImportOptions, state: ImportState, stateFile: StateFile): Promise<Feed> {
  switch (options.kind) {
    case 'mbox': {
      const size = (await fs.stat(options.target)).size;
      if (size < state.offset)
        throw new Error(
          `${options.target} is shorter than when it was imported (${state.offset} bytes done): use --restart`,
        );
      return mboxFeed(options, state, size);
    }
    case 'maildir': {
      const { messages, skipped } = await listMaildir(options.target);
      return filesFeed(
        stateFile,
        { files: messages, skipped },
        (m) => m.key,
        (m, bytes) =>
          item(options, 'message/rfc822', bytes, m.key, {
            folder: m.folder,
            read: m.read,
            starred: m.starred,
            ...(m.received ? { received: m.received } : {}),
          }),
      );
    }
    case 'folder': {
      // The server's registry says which types it takes.
      const { handlers } = await options.client.call(Types, {});
      const accepted = new Set(handlers.flatMap((h) => h.types));
      return filesFeed(
        stateFile,
        await listFolder(options.target, accepted),
        (f) => f.version,
        (f, bytes) => item(options, f.type, bytes, f.key, folderAttributes(f)),
      );
    }
    case 'photos': {
      // Photos and videos only, each with what its Google Takeout sidecar says (time, place, caption).
      const photoTypes = new Set(Object.values(MEDIA_FILE_TYPES));
      const listed = await listFolder(options.target, photoTypes);
      const files = listed.files;
      const sidecars = new Map<string, TakeoutAttributes>();
      for (const dir of new Set(files.map((f) => path.dirname(f.file)))) {
        const names = files.filter((f) => path.dirname(f.file) === dir).map((f) => path.basename(f.file));
        const found = await readSidecars(dir, names, (message) => options.progress?.write(`${message}\n`));
        for (const [name, attributes] of found) sidecars.set(path.join(dir, name), attributes);
      }
      return filesFeed(
        stateFile,
        listed,
        (f) => f.version,
        (f, bytes) =>
          item(options, f.type, bytes, f.key, {
            filename: path.basename(f.file),
            modified: f.modified,
            ...sidecars.get(f.file),
          }),
      );
    }
  }
}

/**
 * Imports a container through memex.ingest: streamed, batched, resumable. The state is saved
 * after every answered batch, so a run that stops (the memex went away, Ctrl-C, a crash)
 * continues where it stopped when run again, and what was already sent comes back as duplicates.
 */
export async function runImport(options: ImportOptions): Promise<ImportOutcome> {
  const target = path.resolve(options.target);
  const stateFile = new StateFile(options.home, options.kind, options.source);
  const state = stateFile.load(options.kind, options.source, target, options.restart);
  const feed = await feedFor({ ...options, target }, state, stateFile);
  const report = new ImportReport(state, feed.total, options.progress);
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
  });
  report.startProgress();
  let error: unknown;
  try {
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
  }
  const summary = report.summary(`import:${options.kind}:${options.source}`, feed.earlier);
  return error === undefined ? { summary } : { summary, error };
}
