import { setTimeout as sleep } from 'node:timers/promises';
import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { sql, type Kysely } from 'kysely';
import type { Bus } from '@memex/bus';
import { BUS, DATABASE, type HealthProblems } from '@memex/runtime';
import type { SearchDatabase } from '../schema.js';
import { listSegments, mergeSegments, SEAL_MIN, sealFresh, segmentsToMerge } from './segments.js';
import {
  allSpaces,
  cheaperToRebuild,
  ensureAnnIndexes,
  freshCount,
  moveFresh,
  onOneCore,
  rebuildIndexes,
  sealAt,
  withSpaceLock,
  type SpaceRow,
} from './vectors.js';

/** How often the mover looks at the fresh tables. */
const LOOK_EVERY_MS = 1000;
/** Vectors moved per transaction: short enough that a query or the projector never waits long. */
const CHUNK = 500;
/**
 * Looks without a new fresh vector after which a space is idle even while the log grows (a
 * service that logs an event every few seconds must not keep a few vectors out of the indexes).
 */
const IDLE_LOOKS = 10;

/**
 * Puts fresh vectors (see `freshTables`) into indexed tables, on its own connections, beside the
 * projector rather than in its way: once the space is idle — no fresh vector came since the last
 * look and nothing was logged meanwhile (an import's tail, its pipelines' backlog, is not idle:
 * indexes built then compete with it for the cores and are built again after it), or no fresh
 * vector for `IDLE_LOOKS` — or whenever `sealAt` are waiting, then on one core (`onOneCore`).
 * While a space's main tables are small beside the fresh vectors (an archive's first import) it
 * builds their indexes again over all of them (`rebuildIndexes`); else it seals them into a
 * segment with an index of its own (`sealFresh`), or, for a few left when idle, inserts them into
 * the main tables a chunk at a time. Beside that, one merge of segments at a time per space
 * (`segmentsToMerge`), so that sealing goes on during a long merge. It also builds an index a
 * crash or a cancelled build left missing, and again one its table has outgrown (`ensureAnnIndexes`).
 * None of this changes what search finds, only where a vector is kept and how fast it is found.
 */
@Injectable()
export class FreshVectorMover implements OnApplicationBootstrap, OnApplicationShutdown, HealthProblems {
  private readonly logger = new Logger('search');
  /** Fresh vectors per space after the last look: fewer or as many now means none came. */
  private readonly lastSeen = new Map<number, number>();
  /** Looks in a row, per space, in which no fresh vector came. */
  private readonly stillLooks = new Map<number, number>();
  /** The log's last sequence at the last look: the same now means nothing was logged. */
  private lastLogged: number | undefined;
  private timer: NodeJS.Timeout | undefined;
  private looking: Promise<void> = Promise.resolve();
  /** The merge under way, per space. */
  private readonly merging = new Map<number, Promise<void>>();
  private stopped = false;
  /** The Postgres backends of the connections building an index right now: cancelled at shutdown. */
  private readonly building = new Set<number>();
  /** Why the last look, or the last merge, failed, until one succeeds. */
  private failure: { since: Date; error: string } | undefined;
  private mergeFailure: { since: Date; error: string } | undefined;

  constructor(
    @Inject(DATABASE) private readonly db: Kysely<SearchDatabase>,
    @Inject(BUS) private readonly bus: Bus,
  ) {}

  onApplicationBootstrap(): void {
    this.stopped = false;
    this.schedule();
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    // An index build can take a minute: it is cancelled rather than waited for, and the next start
    // finds its index unfinished and builds it again (`ensureAnnIndexes`), or builds its segment
    // anew. Again until the work ends: a cancel that came between two statements cancelled nothing.
    const work = Promise.all([this.looking, ...this.merging.values()]);
    for (let done = false; !done && this.building.size > 0;) {
      // Postgres going away too (the whole stack stopping) ends the build as well.
      for (const backend of this.building)
        await sql`select pg_cancel_backend(${backend})`.execute(this.db).catch(() => undefined);
      done = await Promise.race([work.then(() => true), sleep(200).then(() => false)]);
    }
    await work;
  }

  healthProblems(): Promise<string[]> {
    const { failure, mergeFailure } = this;
    return Promise.resolve([
      ...(failure
        ? [
            `fresh vectors have not been moved into the ANN index since ${failure.since.toISOString()} (${failure.error}); meaning search still finds them, by exact scan`,
          ]
        : []),
      ...(mergeFailure
        ? [
            `vector segments have not been merged since ${mergeFailure.since.toISOString()} (${mergeFailure.error}); meaning search still finds their vectors, reading more indexes`,
          ]
        : []),
    ]);
  }

  private schedule(): void {
    this.timer = setTimeout(() => {
      this.looking = this.look()
        .then(() => {
          this.failure = undefined;
        })
        // A replay swapping the schema, or Postgres restarting: the next look tries again.
        .catch((error: unknown) => {
          this.failure = this.failed(this.failure, 'moving fresh vectors into the ANN index', error);
        })
        .finally(() => {
          if (!this.stopped) this.schedule();
        });
    }, LOOK_EVERY_MS);
  }

  /** A failure to report: logged once (a look comes every second), health says it until work succeeds. */
  private failed(last: { since: Date; error: string } | undefined, doing: string, error: unknown) {
    if (this.stopped) return last;
    if (!last) this.logger.warn(`${doing}: ${String(error)}`);
    return last ?? { since: new Date(), error: error instanceof Error ? error.message : String(error) };
  }

  private async look(): Promise<void> {
    const logged = await this.bus.lastSeq();
    const quiet = logged === this.lastLogged;
    this.lastLogged = logged;
    for (const space of await allSpaces(this.db)) {
      const { ord } = space;
      // Counted up to what makes a seal due: a count is a scan.
      const seal = sealAt(space.dims);
      const waiting = await freshCount(this.db, ord, seal);
      const still = waiting <= (this.lastSeen.get(ord) ?? 0) ? (this.stillLooks.get(ord) ?? 0) + 1 : 0;
      this.stillLooks.set(ord, still);
      const idle = still > 0 && (quiet || still >= IDLE_LOOKS);
      const due = waiting > 0 && (idle || waiting >= seal);
      // Another replica's mover holds the space: it moves them.
      await withSpaceLock(this.db, ord, 'indexes', (conn, backend) =>
        this.cancellable(backend, () =>
          this.withCores(conn, idle, async () => {
            // Not while a merge runs: its segment joins the main tables, which a rebuild drops the indexes of.
            if (due && !this.merging.has(ord) && (await cheaperToRebuild(conn, ord, waiting)))
              await rebuildIndexes(conn, ord);
            else {
              await ensureAnnIndexes(conn, ord);
              if (due && waiting >= SEAL_MIN) await sealFresh(conn, space);
              else if (due) await this.moveChunks(space, waiting);
            }
          }),
        ),
      );
      const left = await freshCount(this.db, ord, seal);
      this.lastSeen.set(ord, left);
      this.startMerge(space, idle && left === 0);
    }
  }

  /** Runs `work` with every core Postgres gives a build once the memex is idle, on one while it is busy. */
  private withCores<T>(conn: Kysely<SearchDatabase>, idle: boolean, work: () => Promise<T>): Promise<T> {
    return idle ? work() : onOneCore(conn, work);
  }

  /** Runs `work` on the connection of `backend`, which shutdown cancels while it does. */
  private async cancellable(backend: number, work: () => Promise<unknown>): Promise<void> {
    this.building.add(backend);
    try {
      await work();
    } finally {
      this.building.delete(backend);
    }
  }

  /** Starts merging a space's segments, if none is under way and some should be. */
  private startMerge(space: SpaceRow, idle: boolean): void {
    if (this.stopped || this.merging.has(space.ord)) return;
    const merge = withSpaceLock(this.db, space.ord, 'merges', async (conn, backend) => {
      const segments = segmentsToMerge(await listSegments(conn, space.ord), idle);
      if (segments)
        await this.cancellable(backend, () => this.withCores(conn, idle, () => mergeSegments(conn, space, segments)));
    })
      .then(() => {
        this.mergeFailure = undefined;
      })
      .catch((error: unknown) => {
        this.mergeFailure = this.failed(this.mergeFailure, 'merging vector segments', error);
      })
      .finally(() => this.merging.delete(space.ord));
    this.merging.set(space.ord, merge);
  }

  /** Inserts a few fresh vectors into the main tables a chunk at a time, until none are left or the projector writes again. */
  private async moveChunks({ ord, dims }: SpaceRow, waiting: number): Promise<void> {
    while (!this.stopped && waiting > 0) {
      const moved = await moveFresh(this.db, ord, CHUNK);
      const now = await freshCount(this.db, ord, sealAt(dims));
      // More than the move left: the projector is writing again, and the next look decides anew.
      const arriving = now > waiting - moved;
      waiting = now;
      if (moved === 0 || arriving) break;
    }
  }
}
