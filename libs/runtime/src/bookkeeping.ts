import type { Generated, Kysely, Transaction } from 'kysely';

/**
 * The tables the runtime keeps in every projected schema beside the service's own: where the
 * projector is in the log, and the events it could not apply (failures.ts).
 */
export interface BookkeepingTables {
  projector_checkpoint: { projector: string; seq: number };
  projector_failures: {
    seq: number;
    event_type: string;
    error: string;
    subject: string | null;
    failed_at: Generated<Date>;
    attempts: Generated<number>;
  };
}

/** A service's database as the runtime sees it: its bookkeeping tables, whatever else the schema holds. */
export type BookkeepingDb = Kysely<BookkeepingTables>;
export type BookkeepingTrx = Transaction<BookkeepingTables>;

/**
 * The runtime's view of a service's database. Kysely's types are invariant in the schema, so a
 * service's `Kysely<ServiceDb>` is converted here, in one place: the runtime touches only the
 * tables above.
 */
export function bookkeepingOf<DB>(db: Kysely<DB>): BookkeepingDb {
  return db as unknown as BookkeepingDb;
}
