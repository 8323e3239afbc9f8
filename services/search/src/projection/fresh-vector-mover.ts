import { setTimeout as sleep } from 'node:timers/promises';
import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { sql, type Kysely } from 'kysely';
import { DATABASE, type HealthProblems } from '@memex/runtime';
import type { SearchDatabase } from '../schema.js';
import {
  allSpaces,
  cheaperToRebuild,
  ensureGraphIndexes,
  FRESH_CAP,
  freshCount,
  moveFresh,
  rebuildGraphs,
  withGraphLock,
} from './vectors.js';

/** How often the mover looks at the fresh tables. */
const LOOK_EVERY_MS = 1000;
/** Vectors moved per transaction: short enough that a query or the projector never waits long. */
const CHUNK = 500;

/**
 * Moves fresh vectors (see `freshTables`) into the HNSW graph tables: when the projector is idle
 * (no fresh vector came since the last look), or whenever they reach half of `FRESH_CAP`, so that
 * during a long import the graph work runs beside the projector, on the other core, rather than
 * in its way. While the graph is small beside the fresh vectors (an archive's first import) it
 * builds the graphs again over all of them (`rebuildGraphs`), else it inserts a chunk at a time.
 * It also builds a graph index a crash or a cancelled build left missing. Moving changes where a
 * vector is kept, not what search finds.
 */
@Injectable()
export class FreshVectorMover implements OnApplicationBootstrap, OnApplicationShutdown, HealthProblems {
  private readonly logger = new Logger('search');
  /** Fresh vectors per space after the last look: fewer or as many now means none came. */
  private readonly lastSeen = new Map<number, number>();
  private timer: NodeJS.Timeout | undefined;
  private looking: Promise<void> = Promise.resolve();
  private stopped = false;
  /** The Postgres backend of the connection the mover holds a space's build lock on, while it does. */
  private building: number | undefined;
  /** Why the last look failed, until one succeeds: fresh vectors stay searchable, but the graph stops growing. */
  private failure: { since: Date; error: string } | undefined;

  constructor(@Inject(DATABASE) private readonly db: Kysely<SearchDatabase>) {}

  onApplicationBootstrap(): void {
    this.stopped = false;
    this.schedule();
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    // A graph build can take minutes: it is cancelled rather than waited for, and the next start
    // finds its index unfinished and builds it again (`ensureGraphIndexes`). Again until the look
    // ends: a cancel that came between two statements cancelled nothing.
    for (let done = false; !done && this.building !== undefined; ) {
      // Postgres going away too (the whole stack stopping) ends the build as well.
      await sql`select pg_cancel_backend(${this.building})`.execute(this.db).catch(() => undefined);
      done = await Promise.race([this.looking.then(() => true), sleep(200).then(() => false)]);
    }
    await this.looking;
  }

  healthProblems(): Promise<string[]> {
    const { failure } = this;
    return Promise.resolve(
      failure
        ? [
            `fresh vectors have not been moved into the HNSW graph since ${failure.since.toISOString()} (${failure.error}); meaning search still finds them, by exact scan`,
          ]
        : [],
    );
  }

  private schedule(): void {
    this.timer = setTimeout(() => {
      this.looking = this.look()
        .then(() => {
          this.failure = undefined;
        })
        // A replay swapping the schema, or Postgres restarting: the next look tries again.
        .catch((error: unknown) => {
          // Logged once per failure (a look comes every second); health says it until a look succeeds.
          if (this.stopped) return;
          if (!this.failure) this.logger.warn(`moving fresh vectors into the graph: ${String(error)}`);
          this.failure ??= { since: new Date(), error: error instanceof Error ? error.message : String(error) };
        })
        .finally(() => {
          if (!this.stopped) this.schedule();
        });
    }, LOOK_EVERY_MS);
  }

  private async look(): Promise<void> {
    for (const { ord } of await allSpaces(this.db)) {
      const waiting = await freshCount(this.db, ord);
      const idle = waiting <= (this.lastSeen.get(ord) ?? 0);
      const due = waiting > 0 && (idle || waiting >= FRESH_CAP / 2);
      // Another replica's mover holds the space: it moves them.
      await withGraphLock(this.db, ord, async (conn, backend) => {
        this.building = backend;
        try {
          if (due && (await cheaperToRebuild(conn, ord, waiting))) await rebuildGraphs(conn, ord);
          else {
            await ensureGraphIndexes(conn, ord);
            if (due) await this.moveChunks(ord, waiting);
          }
        } finally {
          this.building = undefined;
        }
      });
      this.lastSeen.set(ord, await freshCount(this.db, ord));
    }
  }

  /** Inserts fresh vectors into the graphs a chunk at a time, until none are left or the projector writes again. */
  private async moveChunks(ord: number, waiting: number): Promise<void> {
    while (!this.stopped && waiting > 0) {
      const moved = await moveFresh(this.db, ord, CHUNK);
      const now = await freshCount(this.db, ord);
      // More than the move left: the projector is writing again, and has the core until the next look.
      const arriving = now > waiting - moved;
      waiting = now;
      if (moved === 0 || (arriving && waiting < FRESH_CAP / 2)) break;
    }
  }
}
