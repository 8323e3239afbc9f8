import { EventEmitter, once } from 'node:events';
import pg from 'pg';
import { sql, type QueryExecutorProvider } from 'kysely';
import { context, trace } from '@opentelemetry/api';
import { AckPolicy, DeliverPolicy, type ConsumerMessages } from '@nats-io/jetstream';
import { MemexError } from '@memex/contracts';
import {
  consumeBatches,
  EVENT_SUBJECT_ROOT,
  EVENTS_STREAM,
  extractTrace,
  isNotFound,
  loggedMessage,
  readLog,
  type Bus,
  type LoggedEvent,
} from '@memex/bus';
import { assertSchemaName, createDatabase, migrate } from '@memex/db';
import { eventsApplied } from '@memex/telemetry';
import type { BookkeepingDb, BookkeepingTables, BookkeepingTrx } from './bookkeeping.js';
import type { ProjectorOptions } from './decorators.js';
import { BulkIndexes } from './bulk-indexes.js';
import { PlannerStatistics } from './planner-statistics.js';
import { FailureTable, type ProjectorFailure, type RetryResult } from './failures.js';
import { consumerLag, projectorConsumer, projectorLeadSession } from './lag.js';

/** A read model builder. `apply` must be deterministic: every row derives from events only. */
export interface Projection {
  apply(trx: BookkeepingTrx, logged: LoggedEvent): Promise<void>;
  /**
   * Optional bulk path (multi-row SQL) for a batch, with exactly the effect of `apply` on each
   * event in order. If it throws, the batch is redone event by event with `apply`.
   */
  applyBatch?(trx: BookkeepingTrx, batch: LoggedEvent[]): Promise<void>;
  /**
   * Optional: a rebuild's bulk load (its first catch-up, while `bulkLoading` says so) is done and
   * its dropped indexes not built yet: the projection writes in `db` what it put off meanwhile.
   */
  afterBulkLoad?(db: BookkeepingDb): Promise<void>;
  /** Whether an event of this type changes the read model; a batch of none is not applied (see `skip`). */
  handles?(type: string): boolean;
  /**
   * Optional, for a rebuild's bulk load: asked before each batch (and after an event that went
   * alone), how its events may go side by side. It answers each event's lane, or undefined for an
   * event that waits for every one before it and goes alone. Events of one lane are applied in
   * order, the lanes at once on their own connections (`BULK_LANES`): a lane's events must commute
   * with every other lane's, touching rows of their own only (an item's, no counter two share).
   * No answer: the batch goes as one, as live.
   */
  bulkLanes?(db: BookkeepingDb): Promise<LaneOf | undefined>;
}

/** An event's lane in a bulk load, or undefined for one that goes alone (see `Projection.bulkLanes`). */
export type LaneOf = (logged: LoggedEvent) => string | undefined;

export interface ReplayResult {
  projector: string;
  events: number;
  seconds: number;
  events_per_second: number;
  last_seq: number;
  /** Seconds of the bulk load, of building its dropped indexes again, of the last catch-up and the switch. */
  phases: { bulk_load: number; indexes: number; switch: number };
}

const BATCH = 500;

/** Lanes of a bulk load applied at once (see `Projection.bulkLanes`): one per core here, one connection each. */
const BULK_LANES = 2;

/** The lane (0 to `BULK_LANES` - 1) of a projection's lane name: a string hash (FNV-1a). */
function laneNumber(lane: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < lane.length; i++) hash = Math.imul(hash ^ lane.charCodeAt(i), 0x01000193);
  return (hash >>> 0) % BULK_LANES;
}

/** Set for its transaction when a batch is part of a rebuild's bulk load. */
const BULK_LOAD_SETTING = 'memex.bulk_load';
const bulkLoads = new WeakMap<QueryExecutorProvider, boolean>();

async function markBulkLoad(trx: BookkeepingTrx): Promise<void> {
  await sql`select set_config(${BULK_LOAD_SETTING}, 'on', true)`.execute(trx);
}

/**
 * Whether `trx` applies a batch of a rebuild's bulk load, whose schema no query reads yet: a
 * projection may put off rows derived for queries (a sort key to keep in step) and write them all
 * at once in `Projection.afterBulkLoad`. Asked once per transaction.
 */

export async function bulkLoading(trx: QueryExecutorProvider): Promise<boolean> {
  let bulk = bulkLoads.get(trx);
  if (bulk === undefined) {
    const { rows } = await sql<{ on: boolean }>`
      select current_setting(${BULK_LOAD_SETTING}, true) is not distinct from 'on' as on`.execute(trx);
    bulk = rows[0]!.on;
    bulkLoads.set(trx, bulk);
  }
  return bulk;
}
/** How long the checkpoint past a run of events the projection has no handler for may go unwritten. */
const SKIPPED_CHECKPOINT_MS = 1000;
const tracer = trace.getTracer('memex-projection');

/** Checkpoint and failure tables that every projected schema has beside its own. */
async function ensureBookkeeping(db: BookkeepingDb, schema: string, failures: FailureTable): Promise<void> {
  await db.schema
    .createTable(`${schema}.projector_checkpoint`)
    .ifNotExists()
    .addColumn('projector', 'text', (c) => c.primaryKey())
    .addColumn('seq', 'bigint', (c) => c.notNull())
    .execute();
  await failures.ensure(db, schema);
}

async function readCheckpoint(db: BookkeepingDb, name: string): Promise<number> {
  const row = await db
    .selectFrom('projector_checkpoint')
    .select('seq')
    .where('projector', '=', name)
    .executeTakeFirst();
  return row ? Number(row.seq) : 0;
}

/**
 * The lanes of a bulk load (see `Projection.bulkLanes`): each applies its parts in order, each in
 * a transaction of its own, one after the other without waiting for the other lanes'.
 */
class Lanes {
  private tails: Promise<void>[] = Array.from({ length: BULK_LANES }, () => Promise.resolve());

  /** Queues each lane's part behind its earlier ones; resolves once every lane has applied what was queued before. */
  async queue(parts: LoggedEvent[][], apply: (part: LoggedEvent[]) => Promise<void>): Promise<void> {
    const before = this.drained();
    this.tails = this.tails.map((tail, lane) => {
      const part = parts[lane]!;
      if (part.length === 0) return tail;
      const next = tail.then(() => apply(part));
      // Awaited by the next `queue` or `drained`; until then its failure must not count as unhandled.
      next.catch(() => undefined);
      return next;
    });
    await before;
  }

  /** Resolves once every lane has applied all it was given; rejects with a lane's failure. */
  async drained(): Promise<void> {
    await Promise.all(this.tails);
  }
}

/**
 * Applies events to a read model in Postgres transactions with the checkpoint written in the
 * same transaction, so a crash at any point neither loses nor double-applies an event. One
 * replica at a time projects (a Postgres advisory lock); the others serve queries.
 */
export class ProjectionRunner {
  private readonly events = new EventEmitter();
  private position = 0;
  private messages: ConsumerMessages | undefined;
  private loop: Promise<void> | undefined;
  private leaderClient: pg.Client | undefined;
  private stopped = false;
  /** While a rebuild catches up and swaps the schemas: a consumer made meanwhile (a retry) would apply beside it. */
  private paused = false;
  private leaderRetry: NodeJS.Timeout | undefined;
  /** Stops listening for the connection's next reconnection (see `readAgainAfterDrop`). */
  private offReconnect: (() => void) | undefined;
  /** The position past skipped batches not yet in Postgres, and the timer that writes it. */
  private skippedTo: number | undefined;
  private skippedWrite: NodeJS.Timeout | undefined;
  private readonly failureTable: FailureTable;
  private readonly statistics: PlannerStatistics;

  constructor(
    private readonly bus: Bus,
    private readonly databaseUrl: string,
    private readonly db: BookkeepingDb,
    readonly options: ProjectorOptions,
    private readonly projection: Projection,
    /** The consumer's subject filters (see `typeFilters`); default every event. */
    private readonly filters: readonly string[] = [`${EVENT_SUBJECT_ROOT}.>`],
  ) {
    assertSchemaName(options.name);
    this.events.setMaxListeners(0);
    this.failureTable = new FailureTable(bus, options.name);
    this.statistics = new PlannerStatistics(db, options.name);
  }

  get name(): string {
    return this.options.name;
  }

  get durableName(): string {
    return projectorConsumer(this.options.name);
  }

  /** Last sequence applied, as far as this process knows. */
  get checkpoint(): number {
    return this.position;
  }

  get isLeader(): boolean {
    return this.leaderClient !== undefined;
  }

  async start(): Promise<void> {
    this.stopped = false;
    this.paused = false;
    await migrate(this.db, this.name, this.options.migrations);
    await ensureBookkeeping(this.db, this.name, this.failureTable);
    this.position = await readCheckpoint(this.db, this.name);
    await this.tryLead();
  }

  private async tryLead(): Promise<void> {
    if (this.stopped) return;
    const client = new pg.Client({
      connectionString: this.databaseUrl,
      application_name: projectorLeadSession(this.name),
    });
    // Postgres going away ends the session that held the lock: stop applying and lead again once
    // it is back (an unhandled 'error' here would take the whole service down).
    client.on('error', (error) => this.lostLead(client, error));
    await client.connect();
    const { rows } = await client.query<{ ok: boolean }>('select pg_try_advisory_lock(hashtext($1)) as ok', [
      `projector:${this.name}`,
    ]);
    if (!rows[0]?.ok) {
      await client.end();
      this.later(() => this.tryLead());
      return;
    }
    this.leaderClient = client;
    try {
      await this.consume();
    } catch (error) {
      // Give the lock back, or the next try (another session) could never take it.
      this.leaderClient = undefined;
      await client.end().catch(() => undefined);
      throw error;
    }
  }

  private lostLead(client: pg.Client, error: Error): void {
    reportError(this.name)(error);
    if (this.leaderClient !== client) return;
    this.leaderClient = undefined;
    this.messages?.stop();
    void client.end().catch(() => undefined);
    this.later(() => this.tryLead());
  }

  /** Runs a step of (re)starting in a second, and again after each failure, until it succeeds or the runner stops. */
  private later(step: () => Promise<void>): void {
    if (this.stopped) return;
    this.leaderRetry = setTimeout(
      () =>
        void step().catch((error) => {
          reportError(this.name)(error);
          this.later(step);
        }),
      1000,
    );
  }

  /** (Re)creates the durable consumer at the checkpoint, the only position that counts. */
  private async consume(): Promise<void> {
    if (this.paused) return;
    this.position = await readCheckpoint(this.db, this.name);
    await this.bus.jsm.consumers.delete(EVENTS_STREAM, this.durableName).catch((error) => {
      if (!isNotFound(error)) throw error;
    });
    await this.bus.jsm.consumers.add(EVENTS_STREAM, {
      durable_name: this.durableName,
      ack_policy: AckPolicy.All,
      deliver_policy: DeliverPolicy.StartSequence,
      opt_start_seq: this.position + 1,
      ...(this.filters.length === 1 ? { filter_subject: this.filters[0] } : { filter_subjects: [...this.filters] }),
      max_ack_pending: 20_000,
      ack_wait: 60_000_000_000,
    });
    this.offReconnect?.();
    this.offReconnect = this.bus.onReconnect(() => void this.readAgainAfterDrop().catch(reportError(this.name)));
    const consumer = await this.bus.js.consumers.get(EVENTS_STREAM, this.durableName);
    // A deleted consumer stops the loop (nats.js would otherwise retry it quietly for ever and the
    // read model would stall unseen); the catch below makes it again at the checkpoint.
    const messages = await consumer.consume({ max_messages: 2000, abort_on_missing_resource: true });
    // Paused while this was being made (a retry come due): `resume` makes it again.
    if (this.paused) return messages.stop();
    this.messages = messages;
    this.loop = consumeBatches(this.messages, BATCH, async (batch) => {
      await this.applyBatch(this.db, batch.map(loggedMessage), { live: true });
      await this.statistics.refresh();
    }).catch((error) => {
      // Postgres or NATS went away mid-batch: nothing was committed past the checkpoint, so
      // start over from it once things are back.
      reportError(this.name)(error);
      // Only the leader consumes: a lost lead (lostLead) leads again instead.
      if (this.leaderClient) this.later(() => this.consume());
    });
  }

  /**
   * Applies a batch in one transaction; on failure, event by event so one bad event can't stall the
   * rest. `live`: to the live schema, past the position; `bulk`: a rebuild's bulk load;
   * `checkpoint`: written with it (a lane of a bulk load leaves it to the rebuild: see `inLanes`).
   */
  private async applyBatch(
    db: BookkeepingDb,
    batch: LoggedEvent[],
    { live = false, bulk = false, checkpoint = true }: { live?: boolean; bulk?: boolean; checkpoint?: boolean },
  ): Promise<void> {
    const fresh = batch.filter((logged) => logged.seq > (live ? this.position : 0));
    if (fresh.length === 0) return;
    const last = fresh[fresh.length - 1]!.seq;
    if (live && this.nothingToApply(fresh)) {
      this.skip(last);
      eventsApplied.inc({ projector: this.name }, fresh.length);
      return;
    }
    const parent = extractTrace(fresh[fresh.length - 1]!.headers);
    await context.with(parent, () =>
      tracer.startActiveSpan(`project ${this.name}`, async (span) => {
        try {
          await db.transaction().execute(async (trx) => {
            // A rebuild's schema is thrown away unless the rebuild completes, so its commits need not wait for the disk.
            if (!live) await sql`set local synchronous_commit = off`.execute(trx);
            if (bulk) await markBulkLoad(trx);
            if (this.projection.applyBatch) await this.projection.applyBatch(trx, fresh);
            else for (const logged of fresh) await this.projection.apply(trx, logged);
            if (checkpoint) await this.saveCheckpoint(trx, last);
          });
        } catch (batchError) {
          const trx = await db.startTransaction().execute();
          try {
            if (bulk) await markBulkLoad(trx);
            for (const logged of fresh) {
              const savepoint = await trx.savepoint('event').execute();
              try {
                await this.projection.apply(savepoint, logged);
                await savepoint.releaseSavepoint('event').execute();
              } catch (error) {
                await savepoint.rollbackToSavepoint('event').execute();
                await this.failureTable.record(trx, logged, error);
              }
            }
            if (checkpoint) await this.saveCheckpoint(trx, last);
            await trx.commit().execute();
          } catch (error) {
            await trx.rollback().execute();
            throw error;
          }
          console.warn(
            `projector ${this.name}: batch at ${last} failed (${String(batchError)}); applied event by event`,
          );
        } finally {
          span.end();
        }
      }),
    );
    if (live) {
      this.position = last;
      this.events.emit('applied', last);
    }
    eventsApplied.inc({ projector: this.name }, fresh.length);
  }

  /** Whether the projection says no event of the batch changes its read model. */
  private nothingToApply(batch: LoggedEvent[]): boolean {
    const { handles } = this.projection;
    return (
      handles !== undefined && !batch.some((logged) => handles.call(this.projection, logged.type ?? logged.event.type))
    );
  }

  /**
   * A batch that changes nothing (on NATS 2.9 a projector of several nouns reads every event, and
   * an import's are mostly others': each service but search would otherwise commit a transaction
   * per batch for its checkpoint alone) moves the position at once and the checkpoint in Postgres
   * within SKIPPED_CHECKPOINT_MS. A crash before that reads those events again, to skip them again.
   */
  private skip(seq: number): void {
    this.skippedTo = seq;
    this.position = seq;
    this.events.emit('applied', seq);
    this.skippedWrite ??= setTimeout(
      () => void this.writeSkipped().catch(reportError(this.name)),
      SKIPPED_CHECKPOINT_MS,
    );
  }

  /** Writes the position past skipped batches, never below a checkpoint a batch wrote meanwhile. */
  private async writeSkipped(): Promise<void> {
    clearTimeout(this.skippedWrite);
    this.skippedWrite = undefined;
    const seq = this.skippedTo;
    this.skippedTo = undefined;
    if (seq === undefined) return;
    await this.db
      .insertInto('projector_checkpoint')
      .values({ projector: this.name, seq })
      .onConflict((oc) =>
        oc.column('projector').doUpdateSet({ seq: sql<number>`greatest(projector_checkpoint.seq, excluded.seq)` }),
      )
      .execute();
  }

  private async saveCheckpoint(trx: BookkeepingTrx, seq: number): Promise<void> {
    await trx
      .insertInto('projector_checkpoint')
      .values({ projector: this.name, seq })
      .onConflict((oc) => oc.column('projector').doUpdateSet({ seq }))
      .execute();
  }

  /** Events this projector recorded as failed and skipped (see failures.ts). */
  async failures(limit = 1000): Promise<ProjectorFailure[]> {
    return this.failureTable.list(this.db, limit);
  }

  async failureCount(): Promise<number> {
    return this.failureTable.count(this.db);
  }

  /** Applies failed events again (all, or the sequences given); what still fails stays recorded. */
  async retryFailures(seqs?: number[]): Promise<RetryResult> {
    return this.failureTable.retry(this.db, this.projection, seqs);
  }

  /** Events of its filter not yet applied (JetStream's count for the durable consumer). */
  async lag(): Promise<number> {
    const info = await this.bus.jsm.consumers.info(EVENTS_STREAM, this.durableName).catch(() => undefined);
    return info ? consumerLag(info) : 0;
  }

  /**
   * Read-your-writes: resolves once the read model has applied `seq`, or fails with `timeout`.
   * A replica that is not the leader follows the checkpoint in Postgres.
   */
  async waitFor(seq: number, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (this.position < seq && !(await this.caughtUpPast(seq))) {
      const left = deadline - Date.now();
      if (left <= 0) {
        throw new MemexError(
          'timeout',
          `the ${this.name} read model has applied up to ${this.position}, not yet ${seq}, after ${timeoutMs} ms`,
        );
      }
      if (this.isLeader) {
        await once(this.events, 'applied', { signal: AbortSignal.timeout(Math.min(left, 250)) }).catch(() => undefined);
      } else {
        await new Promise((resolve) => setTimeout(resolve, Math.min(left, 50)));
        // Never backwards: this replica may have become the leader and applied past what the read saw.
        const checkpoint = await readCheckpoint(this.db, this.name);
        this.position = Math.max(this.position, checkpoint);
      }
    }
  }

  /**
   * Resolves once the read model has applied the whole log as it is now (fails with `timeout`):
   * a command that decides from the read model then sees everything written before it was called.
   */
  async caughtUp(timeoutMs: number): Promise<void> {
    await this.waitFor(await this.bus.lastSeq(), timeoutMs);
  }

  /**
   * A filtered projector never sees events outside its filter, so its checkpoint may stay below
   * `seq` forever: it has applied everything up to `seq` when the log reaches `seq` and the
   * consumer has nothing pending or unacknowledged (the log is read first, so nothing between).
   * True on every replica: the leader acknowledges only what it has committed. A consumer that is
   * not there (the leader making it again) says nothing.
   */
  private async caughtUpPast(seq: number): Promise<boolean> {
    if (this.filters[0] === `${EVENT_SUBJECT_ROOT}.>`) return false;
    if ((await this.bus.lastSeq()) < seq) return false;
    const info = await this.bus.jsm.consumers.info(EVENTS_STREAM, this.durableName).catch(() => undefined);
    return info !== undefined && consumerLag(info) === 0;
  }

  /**
   * Rebuilds the schema from sequence 1 into `<name>_next` beside the live one, then pauses the
   * live projector, catches up the rest, swaps the schemas in one transaction and resumes. The
   * first catch-up (nearly the whole log) runs without the costly indexes (see `BulkIndexes`).
   */
  async rebuild(databaseUrl: string): Promise<ReplayResult> {
    const next = `${this.name}_next`;
    const started = performance.now();
    await this.db.schema.dropSchema(next).ifExists().cascade().execute();
    // Two connections: the bulk load's lanes (BULK_LANES), then index builds side by side.
    const nextDb = createDatabase<BookkeepingTables>(databaseUrl, { schema: next, max: BULK_LANES });
    let events = 0;
    try {
      await migrate(nextDb, next, this.options.migrations);
      await ensureBookkeeping(nextDb, next, this.failureTable);
      // The bulk of the log goes in with the costly indexes dropped; they are built once after it.
      const indexes = new BulkIndexes(nextDb, next, this.options.keepIndexes, this.options.dropIndexes);
      await indexes.drop();
      let position = 0;
      const catchUp = async (bulk: boolean, afterBatch?: () => Promise<void>) => {
        let batch: LoggedEvent[] = [];
        // A batch is applied while the next is read from the log: at most one in flight, in order.
        let applying: Promise<void> = Promise.resolve();
        const lanes = bulk && this.projection.bulkLanes ? new Lanes() : undefined;
        const flush = async () => {
          const full = batch;
          batch = [];
          await applying;
          // The same projection, writing its checkpoint under the live name.
          applying = (lanes ? this.inLanes(nextDb, full, lanes) : this.applyBatch(nextDb, full, { bulk })).then(
            afterBatch,
          );
          // Awaited at the next flush or after the last; until then its failure must not count as unhandled.
          applying.catch(() => undefined);
        };
        const filter = this.filters;
        let read = position;
        for await (const logged of readLog(this.bus, { fromSeq: position + 1, filter, untilCaughtUp: true })) {
          read = logged.seq;
          events++;
          // An event of a type the projection has no handler for (NATS 2.9 takes one filter, so
          // every event for a projector of several nouns) changes nothing: not batched, not decoded.
          if (this.projection.handles?.(logged.type ?? logged.event.type) === false) continue;
          batch.push(logged);
          if (batch.length >= (this.options.rebuildBatch ?? BATCH)) await flush();
        }
        if (batch.length > 0) await flush();
        await applying;
        await lanes?.drained();
        // The checkpoint past the events read, the last of which may have been skipped.
        if (read > position) await nextDb.transaction().execute((trx) => this.saveCheckpoint(trx, read));
        position = read;
      };
      const statistics = new PlannerStatistics(nextDb, next);
      await catchUp(true, async () => {
        await indexes.drop();
        await statistics.refresh();
      });
      await this.projection.afterBulkLoad?.(nextDb);
      const loaded = performance.now();
      await indexes.restore();
      const indexed = performance.now();
      await this.pause();
      try {
        await catchUp(false);
        await this.db.transaction().execute(async (trx) => {
          await sql`alter schema ${sql.id(this.name)} rename to ${sql.id(`${this.name}_old`)}`.execute(trx);
          await sql`alter schema ${sql.id(next)} rename to ${sql.id(this.name)}`.execute(trx);
          await sql`drop schema ${sql.id(`${this.name}_old`)} cascade`.execute(trx);
        });
      } finally {
        await this.resume();
      }
      const ended = performance.now();
      const seconds = (ended - started) / 1000;
      const between = (from: number, to: number) => Math.round(to - from) / 1000;
      return {
        projector: this.name,
        events,
        seconds: Math.round(seconds * 1000) / 1000,
        events_per_second: Math.round(events / Math.max(seconds, 1e-6)),
        last_seq: position,
        phases: {
          bulk_load: between(started, loaded),
          indexes: between(loaded, indexed),
          switch: between(indexed, ended),
        },
      };
    } finally {
      await nextDb.destroy();
      await this.db.schema.dropSchema(next).ifExists().cascade().execute();
    }
  }

  /**
   * A bulk load's batch where the projection names lanes (`Projection.bulkLanes`): its events up
   * to the next that goes alone, split into lanes and queued behind what each lane has still to
   * apply; then, once every lane is done, that event alone; and so on. Resolves once the lanes
   * have applied what was queued before this batch. The lanes write no checkpoint (two would wait
   * on its row for each other): the rebuild writes it after the load, and a rebuild that stops
   * midway starts again from nothing.
   */
  private async inLanes(db: BookkeepingDb, batch: LoggedEvent[], lanes: Lanes): Promise<void> {
    for (let start = 0; start < batch.length;) {
      const laneOf = await this.projection.bulkLanes!(db);
      if (!laneOf) {
        await lanes.drained();
        return this.applyBatch(db, batch.slice(start), { bulk: true });
      }
      const parts: LoggedEvent[][] = Array.from({ length: BULK_LANES }, () => []);
      let end = start;
      for (; end < batch.length; end++) {
        const lane = laneOf(batch[end]!);
        if (lane === undefined) break;
        parts[laneNumber(lane)]!.push(batch[end]!);
      }
      await lanes.queue(parts, (part) => this.applyBatch(db, part, { bulk: true, checkpoint: false }));
      if (end < batch.length) {
        await lanes.drained();
        await this.applyBatch(db, [batch[end]!], { bulk: true });
      }
      start = end + 1;
    }
  }

  /**
   * Connected again after a drop (NATS closes a client that misses its pings: the process stopped
   * a while, a network cut): what the server had sent the dropped connection unacknowledged would
   * come again only after the consumer's ack wait, a minute, and with nothing newer arriving no
   * delivery gap shows it. The consumer is made again at the checkpoint at once.
   */
  private async readAgainAfterDrop(): Promise<void> {
    if (this.paused || this.stopped || !this.isLeader) return;
    this.messages?.stop();
    await this.loop;
    if (this.paused || this.stopped || !this.isLeader) return;
    await this.consume();
  }

  private async pause(): Promise<void> {
    this.paused = true;
    this.messages?.stop();
    await this.loop;
    this.messages = undefined;
    this.loop = undefined;
  }

  private async resume(): Promise<void> {
    this.paused = false;
    if (this.isLeader && !this.stopped) await this.consume();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.leaderRetry);
    this.offReconnect?.();
    await this.pause();
    await this.writeSkipped().catch(reportError(this.name));
    await this.leaderClient?.end().catch(() => undefined);
    this.leaderClient = undefined;
  }
}

function reportError(name: string): (error: unknown) => void {
  return (error) => console.error(`projector ${name}:`, error);
}
