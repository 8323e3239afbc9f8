import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import type { BlobStore } from '@memex/blobs';

const run = promisify(execFile);

/** Flushes the file system holding `dir` to disk (syncfs(2) through coreutils' `sync -f`). */
async function syncFileSystem(dir: string): Promise<void> {
  await run('sync', ['--file-system', dir]);
}

let syncfsWorks: Promise<boolean> | undefined;

/**
 * Stores many blobs with two flushes of the file system instead of an fsync per file: temp files
 * are written, flushed, renamed into place, and the renames flushed, before any event names them.
 * (BlobStore.put fsyncs each file; at thousands of small blobs a second those fsyncs fill the
 * thread pool that every other file read of the process waits on.) Same layout, same guarantee.
 * Where `sync -f` is missing, each blob goes through BlobStore.put.
 */
export async function putBlobs(store: BlobStore, blobs: Map<string, Buffer>): Promise<void> {
  const fresh = [...blobs].filter(([hash]) => !existsSync(store.pathOf(hash)));
  if (fresh.length === 0) return;
  mkdirSync(store.root, { recursive: true });
  syncfsWorks ??= syncFileSystem(store.root).then(
    () => true,
    () => false,
  );
  if (!(await syncfsWorks)) {
    await Promise.all(fresh.map(([, bytes]) => store.put(bytes)));
    return;
  }
  const written = fresh.map(([hash, bytes]) => {
    const target = store.pathOf(hash);
    mkdirSync(path.dirname(target), { recursive: true });
    const temp = `${target}.${randomBytes(6).toString('hex')}.tmp`;
    writeFileSync(temp, bytes, { mode: 0o600, flag: 'wx' });
    return { temp, target };
  });
  await syncFileSystem(store.root);
  for (const { temp, target } of written) renameSync(temp, target);
  await syncFileSystem(store.root);
}
