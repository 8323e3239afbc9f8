import type { ConsumerInfo } from '@nats-io/jetstream';
import { sql, type Kysely } from 'kysely';
import { EVENTS_STREAM, isNotFound, type Bus } from '@memex/bus';

const PREFIX = 'proj_';
const LEAD_PREFIX = 'memex-lead-';

/** The durable consumer through which a projector reads the log. */
export function projectorConsumer(projector: string): string {
  return `${PREFIX}${projector}`;
}

/**
 * The Postgres application name of the session through which a projector's process takes (and
 * then holds) the projector's lead: it lives exactly as long as a process of the service is up.
 */
export function projectorLeadSession(projector: string): string {
  return `${LEAD_PREFIX}${projector}`;
}

/** Events of its filter a consumer has not had acknowledged: what its projector has left to apply. */
export function consumerLag(info: ConsumerInfo): number {
  return info.num_pending + info.num_ack_pending;
}

/**
 * Projectors' lags by name: of these projectors, or of every one with a consumer on the log. Read
 * consumer by consumer, by name: not the log's other consumers (media's filtered queue, a replay's
 * reader), whose state would cost NATS 2.9 a pass over the log each (see `Bus.consumerNames`).
 */
export async function projectorLags(bus: Bus, projectors?: Iterable<string>): Promise<Map<string, number>> {
  const names = projectors
    ? [...projectors]
    : (await bus.consumerNames(EVENTS_STREAM))
        .filter((name) => name.startsWith(PREFIX))
        .map((name) => name.slice(PREFIX.length))
        .sort();
  const infos = await Promise.all(
    names.map((name) =>
      bus.jsm.consumers.info(EVENTS_STREAM, projectorConsumer(name)).catch((error: unknown) => {
        // Deleted since it was named, or a projector that never ran.
        if (isNotFound(error)) return undefined;
        throw error;
      }),
    ),
  );
  return new Map(names.flatMap((name, i) => (infos[i] ? [[name, consumerLag(infos[i])] as const] : [])));
}

/**
 * The projectors some process of their service is up for: those with a lead session in this
 * database. A process that exits or is killed loses its session at once (its connection closes);
 * a paused or busy one keeps it.
 */
export async function liveProjectors<DB>(db: Kysely<DB>): Promise<Set<string>> {
  const { rows } = await sql<{ name: string }>`
    select distinct application_name as name from pg_stat_activity
    where datname = current_database() and starts_with(application_name, ${LEAD_PREFIX})`.execute(db);
  return new Set(rows.map((row) => row.name.slice(LEAD_PREFIX.length)));
}
