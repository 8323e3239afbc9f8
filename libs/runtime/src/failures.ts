import { sql } from 'kysely';
import type { EventEnvelope } from '@memex/contracts';
import { decodeJson, EVENTS_STREAM, type Bus, type LoggedEvent } from '@memex/bus';
import type { BookkeepingDb, BookkeepingTrx } from './bookkeeping.js';
import type { Projection } from './projection.js';

/** An event a projector could not apply: recorded, skipped, shown, and retried after a fix. */
export interface ProjectorFailure {
  projector: string;
  seq: number;
  event_type: string;
  /** The event's subject (`item:<id>`), so the failure names what it is about. */
  subject: string | null;
  error: string;
  /** When it failed last (ISO). */
  failed_at: string;
  /** How many times it has failed (the first apply, then each retry). */
  attempts: number;
}

export interface RetryResult {
  projector: string;
  retried: number;
  /** Sequences now applied (their failure is gone). */
  fixed: number[];
  /** Sequences no longer in the log (the item was deleted since): nothing left to apply. */
  gone: number[];
  /** What still fails, with the new reason. */
  failing: ProjectorFailure[];
}

/**
 * The `projector_failures` table of a projected schema. An event that fails is recorded here and
 * skipped, so one bad event never stalls a read model; the failures are counted in the service's
 * health (the gateway's /healthz, `memex status` and /metrics show them) and listed by `memex failures`, and `memex failures retry` applies them again (after
 * a fix: a new version of the service, a repaired database). A retried event is applied after
 * the events that followed it; projections are written to tolerate that (they upsert by id).
 */
export class FailureTable {
  constructor(
    private readonly bus: Bus,
    private readonly projector: string,
  ) {}

  /** The table, with the columns added after its first version. */
  async ensure(db: BookkeepingDb, schema: string): Promise<void> {
    await db.schema
      .createTable(`${schema}.projector_failures`)
      .ifNotExists()
      .addColumn('seq', 'bigint', (c) => c.primaryKey())
      .addColumn('event_type', 'text', (c) => c.notNull())
      .addColumn('error', 'text', (c) => c.notNull())
      .execute();
    await sql`alter table ${sql.table(`${schema}.projector_failures`)}
      add column if not exists subject text,
      add column if not exists failed_at timestamptz not null default now(),
      add column if not exists attempts integer not null default 1`.execute(db);
  }

  async record(trx: BookkeepingTrx, logged: LoggedEvent, error: unknown): Promise<void> {
    const message = error instanceof Error ? error.message : String(error);
    console.error(`projector ${this.projector}: event ${logged.seq} (${logged.event.type}) failed: ${message}`);
    await trx
      .insertInto('projector_failures')
      .values({ seq: logged.seq, event_type: logged.event.type, subject: logged.event.subject, error: message })
      .onConflict((oc) =>
        oc
          .column('seq')
          .doUpdateSet({
            error: message,
            failed_at: sql<Date>`now()`,
            attempts: sql<number>`projector_failures.attempts + 1`,
          }),
      )
      .execute();
  }

  async count(db: BookkeepingDb): Promise<number> {
    const row = await db
      .selectFrom('projector_failures')
      .select((eb) => eb.fn.countAll<string>().as('n'))
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  async list(db: BookkeepingDb, limit: number): Promise<ProjectorFailure[]> {
    const rows = await db.selectFrom('projector_failures').selectAll().orderBy('seq').limit(limit).execute();
    return rows.map((row) => ({
      projector: this.projector,
      seq: Number(row.seq),
      event_type: row.event_type,
      subject: row.subject ?? null,
      error: row.error,
      failed_at: new Date(row.failed_at).toISOString(),
      attempts: Number(row.attempts),
    }));
  }

  /**
   * Applies recorded failures again, each in its own transaction, reading the event from the log:
   * a success removes its failure, a new failure updates the reason. `seqs` limits it to those.
   */
  async retry(db: BookkeepingDb, projection: Projection, seqs?: number[]): Promise<RetryResult> {
    let query = db.selectFrom('projector_failures').select('seq').orderBy('seq');
    if (seqs) query = query.where('seq', 'in', seqs.length > 0 ? seqs : [-1]);
    const pending = (await query.execute()).map((row) => Number(row.seq));
    const result: RetryResult = {
      projector: this.projector,
      retried: pending.length,
      fixed: [],
      gone: [],
      failing: [],
    };
    for (const seq of pending) {
      const logged = await this.read(seq);
      if (!logged) {
        await db.deleteFrom('projector_failures').where('seq', '=', seq).execute();
        result.gone.push(seq);
        continue;
      }
      try {
        await db.transaction().execute(async (trx) => {
          await projection.apply(trx, logged);
          await trx.deleteFrom('projector_failures').where('seq', '=', seq).execute();
        });
        result.fixed.push(seq);
      } catch (error) {
        await db.transaction().execute((trx) => this.record(trx, logged, error));
      }
    }
    if (pending.length > 0) {
      const still = new Set(pending.filter((seq) => !result.fixed.includes(seq) && !result.gone.includes(seq)));
      result.failing = (await this.list(db, 10_000)).filter((failure) => still.has(failure.seq));
    }
    return result;
  }

  /** The event at `seq`, or null when it was erased from the log (its item deleted). */
  private async read(seq: number): Promise<LoggedEvent | null> {
    const message = await this.bus.jsm.streams.getMessage(EVENTS_STREAM, { seq }).catch((error: Error) => {
      if (/no message found|not found|deleted/i.test(error.message)) return null;
      throw error;
    });
    if (!message) return null;
    return { seq, event: decodeJson<EventEnvelope>(message.data), headers: message.header, pending: 0 };
  }
}
