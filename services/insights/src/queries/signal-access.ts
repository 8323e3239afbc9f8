import { sql, type Kysely, type Selectable, type SqlBool } from 'kysely';
import { MemexError, type Scope } from '@memex/contracts';
import { visibleTo } from '@memex/db';
import type { InsightsDatabase, SignalsTable } from '../projection/schema.js';

/**
 * A signal is visible to a scope when every note it cites is (a note that no longer exists is
 * visible to the owner only): its evidence never reveals what the caller may not see.
 */
export function signalVisibleTo(scope: Scope) {
  const visible = visibleTo(scope, { kind: 'n.kind', labels: 'n.labels', spam: 'n.spam' });
  return sql<SqlBool>`not exists (select 1 from unnest(signals.note_ids) as x(id) left join notes n on n.id = x.id
    where not coalesce(${visible}, false))`;
}

/** A signal by its number or key, within the caller's scope (out of scope reads as absent). */
export async function findSignal(
  db: Kysely<InsightsDatabase>,
  ref: string,
  scope: Scope,
): Promise<Selectable<SignalsTable>> {
  const row = await db
    .selectFrom('signals')
    .selectAll()
    .where(/^\d+$/.test(ref) ? sql<SqlBool>`id = ${Number(ref)}` : sql<SqlBool>`key = ${ref}`)
    .where(signalVisibleTo(scope))
    .executeTakeFirst();
  if (!row) throw new MemexError('not_found', `no signal ${ref}`);
  return row;
}
