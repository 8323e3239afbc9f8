import fs from 'node:fs';
import path from 'node:path';
import { watch, type FSWatcher } from 'chokidar';
import { connect, credsAuthenticator, type NatsConnection } from '@nats-io/transport-node';
import { natsConnectOptions } from '@memex/bus';
import {
  WORKER_FAILURES_HEARD,
  WORKER_NAME_PATTERN,
  workerSubject,
  type WorkerHeartbeat,
  type WorkerRescanReply,
} from '@memex/locations';
import { DeriveServer } from './derive.js';
import { ExtractServer } from './extract.js';
import { FileServer } from './serve.js';
import { FolderScan, type ScanCounts } from './scan.js';
import { WorkerState } from './state.js';

/** Changes reported within this long of each other are scanned together (a move is an unlink and an add). */
const SETTLE_MS = 300;

export interface WorkerOptions {
  /** The worker's name: its files are `worker:<name>:<path>`. */
  name: string;
  folders: string[];
  /** Where the worker keeps its record of the files it sent. */
  dataDir: string;
  natsUrl: string;
  /** What the operator gave it to join the bus: a token, a user and password, or a .creds file. */
  auth?: { token?: string; user?: string; pass?: string; credsFile?: string };
  heartbeatMs?: number;
  rescanMs?: number;
  /** Media's pictures of its files made here at once (default 2); 0: media reads the files through the worker instead. */
  deriveJobs?: number;
  /** Files whose text and metadata this machine reads at once for ingest (default 2); 0: ingest reads the files through the worker instead. */
  extractJobs?: number;
  log?: (line: string) => void;
}

export interface RunningWorker {
  /** Resolves after the first scan of every folder. */
  scanned: Promise<void>;
  stop(): Promise<void>;
}

/**
 * `memex worker`: a machine that keeps its files (a NAS, a laptop) joins the memex's NATS,
 * serves its folders' bytes on request, reads their text and metadata for ingest and makes
 * media's pictures of them on its own CPU (so the originals stay here), sends heartbeats (with
 * how many items its files are) (the sources service marks its items
 * unreachable when they stop), and scans its folders — at start, on every change (chokidar), and
 * every `rescanMs` — sending ingest only locations, never the files.
 */
export async function runWorker(options: WorkerOptions): Promise<RunningWorker> {
  if (!WORKER_NAME_PATTERN.test(options.name))
    throw new Error(
      `worker name "${options.name}": use a-z, 0-9, _ and - (at most 48, starting with a letter or digit)`,
    );
  const folders = options.folders.map((folder) => path.resolve(folder));
  for (const folder of folders)
    if (!fs.statSync(folder, { throwIfNoEntry: false })?.isDirectory()) throw new Error(`${folder} is not a folder`);
  const log = options.log ?? ((line: string) => console.error(line));
  const heartbeatMs = options.heartbeatMs ?? 5_000;
  const rescanMs = options.rescanMs ?? 5 * 60_000;

  const nc = await connectTo(options);
  const server = new FileServer(nc, options.name, folders);
  await server.start();
  const deriveJobs = options.deriveJobs ?? 2;
  const deriver = deriveJobs > 0 ? new DeriveServer(nc, options.name, server, deriveJobs, log) : null;
  await deriver?.start();
  const extractJobs = options.extractJobs ?? 2;
  const extractor = extractJobs > 0 ? new ExtractServer(nc, options.name, server, extractJobs, log) : null;
  await extractor?.start();
  const state = new WorkerState(options.dataDir);
  const startedAt = new Date().toISOString();
  const beat = (): WorkerHeartbeat => ({
    name: options.name,
    folders,
    interval_ms: heartbeatMs,
    started_at: startedAt,
    derives: deriver !== null,
    extracts: extractor !== null,
    counts: state.counts(),
    jobs: { extract: extractor?.pending ?? 0, derive: deriver?.pending ?? 0 },
    failures: state.failures(WORKER_FAILURES_HEARD),
  });
  const heartbeat = () => nc.publish(workerSubject(options.name, 'heartbeat'), JSON.stringify(beat()));
  heartbeat();
  const beating = setInterval(heartbeat, heartbeatMs);

  const scanner = new FolderScan(nc, options.name, state, extractor);
  let stopped = false;
  let scanning: Promise<unknown> = Promise.resolve();
  /** Scans folders one after another; what they found, summed, or the first failure's reason. */
  const scanAll = async (only: string[] = folders, retryFailures = false): Promise<WorkerRescanReply> => {
    const sum = { files: 0, created: 0, updated: 0, moved: 0, removed: 0, failed: 0 };
    let failure: string | null = null;
    for (const folder of only) {
      if (stopped) break;
      try {
        const { files, ...changes } = await scanner.scan(folder, { retryFailures });
        if (Object.values(changes).some((n) => n > 0))
          log(`worker ${options.name}: ${folder}: ${files} files; ${JSON.stringify(changes)}`);
        addTo(sum, { files, ...changes });
      } catch (error) {
        // The memex may be away; the next scan tries again.
        failure ??= `${folder}: ${error instanceof Error ? error.message : String(error)}`;
        log(
          `worker ${options.name}: ${folder}: scan failed: ${error instanceof Error ? error.message : String(error)}`,
        );
      }
    }
    return failure ? { error: failure } : sum;
  };
  const scanned: Promise<void> = scanAll().then(() => undefined);
  scanning = scanned;
  const rescans = setInterval(() => {
    scanning = scanning.then(() => scanAll());
  }, rescanMs);
  // `memex sources rescan worker.<name>`: every folder now, its failed files read again; answered once done.
  const rescanRequests = nc.subscribe(workerSubject(options.name, 'rescan'), {
    queue: `memex-worker-${options.name}`,
    callback: (error, message) => {
      if (error) return;
      const done = scanning.then(() => scanAll(folders, true));
      scanning = done;
      void done.then((reply) => message.respond(JSON.stringify(reply)));
    },
  });
  // Changes as they happen: a folder with changes is scanned again once they settle (a scan
  // compares sizes and times, so it reads only what changed); the rescan is the safety net.
  const settle = new Map<string, NodeJS.Timeout>();
  const watchers: FSWatcher[] = folders.map((folder) =>
    watch(folder, {
      ignoreInitial: true,
      followSymlinks: false,
      // A file being written is reported once it stops growing, not half-written.
      awaitWriteFinish: { stabilityThreshold: 200, pollInterval: 50 },
      ignored: (full) =>
        full !== folder &&
        path
          .relative(folder, full)
          .split(path.sep)
          .some((p) => p.startsWith('.')),
    }).on('all', () => {
      clearTimeout(settle.get(folder));
      settle.set(
        folder,
        setTimeout(() => {
          scanning = scanning.then(() => scanAll([folder]));
        }, SETTLE_MS),
      );
    }),
  );

  return {
    scanned,
    async stop() {
      stopped = true;
      clearInterval(beating);
      clearInterval(rescans);
      rescanRequests.unsubscribe();
      for (const timer of settle.values()) clearTimeout(timer);
      await Promise.all(watchers.map((watcher) => watcher.close()));
      await scanning;
      await deriver?.stop();
      await extractor?.stop();
      server.stop();
      await nc.drain();
    },
  };
}

async function connectTo(options: WorkerOptions): Promise<NatsConnection> {
  const auth = options.auth ?? {};
  return connect({
    ...natsConnectOptions(options.natsUrl),
    name: `memex-worker-${options.name}`,
    maxReconnectAttempts: -1,
    reconnectTimeWait: 1_000,
    ...(auth.token ? { token: auth.token } : {}),
    ...(auth.user ? { user: auth.user, pass: auth.pass ?? '' } : {}),
    ...(auth.credsFile ? { authenticator: credsAuthenticator(fs.readFileSync(auth.credsFile)) } : {}),
  });
}

/** Adds one folder's scan to the sum of a rescan. */
function addTo(sum: Exclude<WorkerRescanReply, { error: string }>, counts: ScanCounts): void {
  sum.files += counts.files;
  sum.created += counts.created;
  sum.updated += counts.updated;
  sum.moved += counts.moved;
  sum.removed += counts.removed;
  sum.failed += counts.rejected;
}
