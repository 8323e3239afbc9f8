import { sql } from 'kysely';
import type { ResultOf, EntityGet, Scope } from '@memex/contracts';
import { itemVisible, linkVisible, summaries, type Db } from './access.js';

type Card = ResultOf<typeof EntityGet>;
type SessionUse = Card['sessions'][number];

const SESSIONS_ON_A_CARD = 10;
const PRODUCED_PER_SESSION = 10;

/** SQL: the active links (alias l) at thing `entity`, either end, that `scope` may see. */
function linksAt(scope: Scope, entity: number, l = 'l') {
  const ref = (column: string) => sql.ref(`${l}.${column}`);
  return sql`(${ref('src_entity')} = ${entity} or ${ref('dst_entity')} = ${entity}) and ${ref('status')} = 'active' and ${linkVisible(scope, l)}`;
}

/**
 * The head's sessions (seed §3.2) that touched a thing — linked to it themselves (about,
 * decided, involved) or through one of their items (a note about it, a digest naming it) — most
 * touching first, each with what it produced (its items: digest, outputs, web pages, notes) and
 * the workflows it ran or decided on; all within the caller's scope.
 */
export async function sessionsAbout(db: Db, scope: Scope, entity: number): Promise<SessionUse[]> {
  const rows = await sql<{ session: string; n: number }>`
    select session, count(*)::int as n from (
      select case when l.src_entity = ${entity} then l.dst_entity else l.src_entity end as session
      from links l where ${linksAt(scope, entity)}
      union all
      select p.dst_entity as session
      from links l join links p on p.rel = 'part_of' and p.status = 'active'
        and p.src_item = coalesce(l.src_item, l.dst_item) and p.dst_entity is not null
      where ${linksAt(scope, entity)} and ${linkVisible(scope, 'p')}
    ) touched join entities s on s.id = touched.session
    where s.kind = 'session' and s.id <> ${entity}
    group by session order by n desc, session limit ${SESSIONS_ON_A_CARD}`.execute(db);
  const ids = rows.rows.map((r) => Number(r.session));
  const found = await summaries(db, scope, ids);
  const uses: SessionUse[] = [];
  for (const id of ids) {
    const session = found.get(id);
    if (!session) continue;
    const produced = await sql<{ id: string; kind: string; title: string; occurred_at: Date | null }>`
      select i.id, i.kind, i.title, i.occurred_at from links p join items i on i.id = p.src_item
      where p.dst_entity = ${id} and p.rel = 'part_of' and p.status = 'active' and ${itemVisible(scope)}
      order by i.occurred_at desc nulls last, i.id limit ${PRODUCED_PER_SESSION}`.execute(db);
    const workflows = await sql<{ entity: string }>`
      select distinct l.dst_entity as entity from links l join entities w on w.id = l.dst_entity
      where l.src_entity = ${id} and w.kind = 'workflow' and l.status = 'active' and ${linkVisible(scope)}`.execute(db);
    const workflowSummaries = await summaries(
      db,
      scope,
      workflows.rows.map((r) => Number(r.entity)),
    );
    uses.push({
      session,
      produced: produced.rows.map((r) => ({
        id: r.id,
        kind: r.kind,
        title: r.title,
        occurred_at: r.occurred_at?.toISOString() ?? null,
      })),
      workflows: [...workflowSummaries.values()],
    });
  }
  return uses;
}

/**
 * What a session touched: the things it is linked to and those its items are linked to (other
 * than itself and the items' own part_of), most touched first, within the caller's scope.
 */
export async function touchedBySession(db: Db, scope: Scope, session: number): Promise<Card['touched']> {
  const rows = await sql<{ entity: string }>`
    select entity from (
      select case when l.src_entity = ${session} then l.dst_entity else l.src_entity end as entity
      from links l where ${linksAt(scope, session)}
      union all
      select coalesce(l.dst_entity, l.src_entity) as entity
      from links p join links l on coalesce(l.src_item, l.dst_item) = p.src_item and l.id <> p.id and l.status = 'active'
      where p.dst_entity = ${session} and p.rel = 'part_of' and p.status = 'active'
        and ${linkVisible(scope, 'p')} and ${linkVisible(scope)}
    ) t where entity is not null and entity <> ${session}
    group by entity order by count(*) desc, entity limit 100`.execute(db);
  const found = await summaries(
    db,
    scope,
    rows.rows.map((r) => Number(r.entity)),
  );
  return rows.rows.flatMap((r) => found.get(Number(r.entity)) ?? []);
}
