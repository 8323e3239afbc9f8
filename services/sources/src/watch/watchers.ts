import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { watch, type FSWatcher } from 'chokidar';
import type { Kysely } from 'kysely';
import { SourceErrored } from '@memex/contracts';
import { EventPublisher } from '@memex/bus';
import { DATABASE, ServiceHost } from '@memex/runtime';
import type { Settings, SourcesDatabase } from '../projection/schema.js';
import { isIgnoredByWatcher, relativeOf, rootPath } from './disk.js';
import { FolderSync, type Reconciled, type Touched } from './folder-sync.js';

/** Changes reported within this long of each other are reconciled together. */
const SETTLE_MS = 150;
/**
 * How long after a file or folder went its reconcile waits for more: a rename is an unlink, then
 * an add reported once the file has stood still for `awaitWriteFinish` (200 ms and more). Seen
 * apart, the two would be a deletion (the item and what derives from it gone) and a new item.
 */
const MOVE_WINDOW_MS = 1_000;
/**
 * A folder that appears is looked at again this long after: chokidar lists a new folder before it
 * watches it, so a file put there in between is reported by neither (chokidar issues 1112, 1471).
 */
const NEW_FOLDER_LOOK_AGAIN_MS = 1_000;
/** How often a source whose root is away is looked at (its return is not an fs event). */
const ROOT_POLL_MS = 2_000;

/** One watched source: its watcher, the changes waiting, and its one-at-a-time queue. */
interface Watched {
  id: string;
  root: string;
  watcher: FSWatcher | null;
  touched: Map<string, boolean>;
  settle: NodeJS.Timeout | null;
  /** A path went since the last reconcile: the batch waits `MOVE_WINDOW_MS` for where it went. */
  unlinked: boolean;
  next: NodeJS.Timeout | null;
  /** A scan when the next file that went is due to take its item (`Reconciled.recheckInMs`). */
  recheck: NodeJS.Timeout | null;
  queue: Promise<unknown>;
  stopped: boolean;
}

/**
 * Runs the watched folders of the replica that leads the projection: each active source has a
 * chokidar watcher (changes as they happen) and a periodic full rescan (the safety net for what
 * a watcher misses: changes while the service was down, a volume coming back). Work on one
 * source is serialized; a paused source has no watcher and no rescans.
 */
@Injectable()
export class Watchers implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('memex:sources');
  private readonly watched = new Map<string, Watched>();
  private boot: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    @Inject(DATABASE) private readonly db: Kysely<SourcesDatabase>,
    private readonly sync: FolderSync,
    private readonly publisher: EventPublisher,
    private readonly host: ServiceHost,
  ) {}

  onApplicationBootstrap(): void {
    // Only the leading replica watches; it may take a moment to lead.
    const start = async () => {
      if (this.stopped) return;
      if (!this.host.projector?.isLeader) {
        this.boot = setTimeout(() => void start(), 500);
        return;
      }
      const sources = await this.db.selectFrom('sources').select('id').where('paused', '=', false).execute();
      for (const { id } of sources) await this.start(id);
    };
    this.boot = setTimeout(() => void start().catch((error) => this.logger.error(`start: ${error}`)), 0);
  }

  /** Watches a source (again) and scans it whole: catches up with whatever happened meanwhile. */
  async start(id: string): Promise<void> {
    if (this.stopped) return;
    if (this.watched.has(id)) return void this.rescan(id).catch(() => undefined);
    const source = await this.db.selectFrom('sources').select(['root']).where('id', '=', id).executeTakeFirst();
    if (!source) return;
    const entry: Watched = {
      id,
      root: rootPath(source.root),
      watcher: null,
      touched: new Map(),
      settle: null,
      unlinked: false,
      next: null,
      recheck: null,
      queue: Promise.resolve(),
      stopped: false,
    };
    this.watched.set(id, entry);
    void this.rescan(id).catch(() => undefined);
  }

  /** Files reported changed and not reconciled yet. */
  backlog(id: string): number {
    return this.watched.get(id)?.touched.size ?? 0;
  }

  /** Stops watching (paused or removed); waits for the work under way. */
  async stop(id: string): Promise<void> {
    const entry = this.watched.get(id);
    if (!entry) return;
    this.watched.delete(id);
    entry.stopped = true;
    if (entry.settle) clearTimeout(entry.settle);
    if (entry.next) clearTimeout(entry.next);
    if (entry.recheck) clearTimeout(entry.recheck);
    await entry.watcher?.close();
    await entry.queue.catch(() => undefined);
  }

  /** A full scan now (after the one running); its outcome. `retryFailures`: refused files are sent again (memex sources rescan). */
  rescan(id: string, options: { retryFailures?: boolean } = {}): Promise<Reconciled | null> {
    const entry = this.watched.get(id);
    if (!entry) return this.sync.reconcile(id, null, options);
    if (entry.next) clearTimeout(entry.next);
    entry.next = null;
    return this.enqueue(entry, async () => {
      const outcome = await this.sync.reconcile(id, null, options);
      await this.afterScan(entry, outcome);
      this.recheckLater(entry, outcome);
      return outcome;
    });
  }

  private async afterScan(entry: Watched, outcome: Reconciled | null): Promise<void> {
    if (entry.stopped) return;
    if (outcome?.rootMissing) {
      // The watcher of a vanished root sees nothing more: a new one starts when it is back.
      await entry.watcher?.close();
      entry.watcher = null;
    } else if (outcome && !entry.watcher) {
      entry.watcher = this.watcher(entry);
    }
    const row = await this.db.selectFrom('sources').select('settings').where('id', '=', entry.id).executeTakeFirst();
    const every = outcome?.rootMissing
      ? ROOT_POLL_MS
      : ((row?.settings as Settings | undefined)?.rescan_seconds ?? 300) * 1000;
    // Paused or removed while the settings were read: stop() cleared no timer yet to come.
    if (entry.stopped) return;
    // A scan queued behind another (a rescan asked for during one) set a timer too: one is kept.
    if (entry.next) clearTimeout(entry.next);
    entry.next = setTimeout(() => void this.rescan(entry.id).catch(() => undefined), every);
  }

  /**
   * Files that went keep their items until their grace is over: then a reconcile of no reported
   * paths looks at them alone (a reconcile always does), and deletes them or finds them back.
   */
  private recheckLater(entry: Watched, outcome: Reconciled | null): void {
    if (entry.stopped || !outcome || outcome.rootMissing || outcome.recheckInMs === undefined) return;
    if (entry.recheck) clearTimeout(entry.recheck);
    entry.recheck = setTimeout(() => {
      entry.recheck = null;
      void this.enqueue(entry, async () => {
        const again = await this.sync.reconcile(entry.id, []);
        this.recheckLater(entry, again);
        return again;
      }).catch(() => undefined);
    }, outcome.recheckInMs + 100);
  }

  private watcher(entry: Watched): FSWatcher {
    const watcher = watch(entry.root, {
      ignoreInitial: true,
      persistent: true,
      followSymlinks: false,
      // A file being written is reported once it stops growing, not half-written.
      awaitWriteFinish: { stabilityThreshold: 200, pollInterval: 50 },
      ignored: (full) => full !== entry.root && isIgnoredByWatcher(entry.root, relativeOf(entry.root, full)),
    });
    const touch =
      (folder: boolean, unlink = false) =>
      (full: string) => {
        if (entry.stopped) return;
        const relative = relativeOf(entry.root, full);
        // The root itself went away: a scan tells a vanished root from deleted files.
        if (relative === '' || relative.startsWith('..')) return void this.rescan(entry.id).catch(() => undefined);
        entry.touched.set(relative, folder || entry.touched.get(relative) === true);
        entry.unlinked ||= unlink;
        if (entry.settle) clearTimeout(entry.settle);
        entry.settle = setTimeout(() => this.flush(entry), entry.unlinked ? MOVE_WINDOW_MS : SETTLE_MS);
      };
    watcher.on('add', touch(false)).on('change', touch(false)).on('unlink', touch(false, true));
    const folderAdded = touch(true);
    watcher.on('addDir', (full) => {
      folderAdded(full);
      setTimeout(() => folderAdded(full), NEW_FOLDER_LOOK_AGAIN_MS).unref();
    });
    watcher.on('unlinkDir', touch(true, true));
    watcher.on('error', (error) => this.logger.warn(`${entry.id}: watcher: ${(error as Error).message}`));
    return watcher;
  }

  private flush(entry: Watched): void {
    entry.settle = null;
    entry.unlinked = false;
    const touched: Touched[] = [...entry.touched].map(([relative, folder]) => ({ path: relative, folder }));
    entry.touched.clear();
    void this.enqueue(entry, async () => {
      const outcome = await this.sync.reconcile(entry.id, touched);
      if (outcome?.rootMissing) await this.afterScan(entry, outcome);
      this.recheckLater(entry, outcome);
      return outcome;
    }).catch(() => undefined);
  }

  /** Runs work on a source after the work before it; a failure puts the source in error (the next scan retries). */
  private enqueue<T>(entry: Watched, work: () => Promise<T>): Promise<T> {
    const run = entry.queue.then(async () => {
      try {
        return await work();
      } catch (error) {
        const reason = (error as Error).message;
        this.logger.error(`${entry.id}: ${reason}`);
        await this.publisher
          .publish(SourceErrored, {
            subject: `source:${entry.id}`,
            actor: { kind: 'system', id: 'sources' },
            data: { id: entry.id, reason },
          })
          .catch(() => undefined);
        if (!entry.stopped) {
          if (entry.next) clearTimeout(entry.next);
          entry.next = setTimeout(() => void this.rescan(entry.id).catch(() => undefined), ROOT_POLL_MS * 5);
        }
        throw error;
      }
    });
    entry.queue = run.catch(() => undefined);
    return run;
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.boot);
    await Promise.all([...this.watched.keys()].map((id) => this.stop(id)));
  }
}
