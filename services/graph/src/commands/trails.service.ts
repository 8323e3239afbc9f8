import { Inject, Injectable } from '@nestjs/common';
import { sql } from 'kysely';
import {
  MemexError,
  type ParamsOf,
  type ResultOf,
  type Scope,
  TrailAppended,
  TrailCommented,
  TrailCreated,
  TrailReordered,
  TrailsAppend,
  TrailsComment,
  TrailsCreate,
  TrailsGet,
  TrailsList,
  TrailsMove,
} from '@memex/contracts';
import { EventPublisher, newId } from '@memex/bus';
import { visibleTo } from '@memex/db';
import { DATABASE, RpcMethod, type CallContext } from '@memex/runtime';
import { entityVisible, itemVisible, resolveEntity, summaries, type Db } from '../queries/access.js';
import { anyWord } from '../domain/keys.js';
import { Consistent } from './consistent.js';
import { storedRef } from './links.service.js';

type Summary = ResultOf<typeof TrailsList>['trails'][number];
type Step = ResultOf<typeof TrailsGet>['steps_list'][number];

/** SQL: trail `t` is visible to the scope (trails are scoped like notes, by their labels). */
export function trailVisible(scope: Scope, t = 't') {
  return visibleTo(scope, { kind: `${t}.kind`, labels: `${t}.labels`, spam: `${t}.spam` });
}

/**
 * SQL: trail step `s` shows to the scope (its thing is visible, or its item exists and is):
 * what `trails.get` lists, and so what every count of steps counts.
 */
export function stepVisible(scope: Scope, s = 's') {
  const step = (column: string) => sql.ref(`${s}.${column}`);
  return sql<boolean>`((${step('target_entity')} is not null and ${entityVisible(scope, sql`${step('target_entity')}`)})
    or exists (select 1 from items si where si.id = ${step('target_item')} and ${itemVisible(scope, 'si')}))`;
}

/** Named paths through items and things, with commentary (Bush's trails, seed §1). */
@Injectable()
export class TrailsService {
  constructor(
    private readonly publisher: EventPublisher,
    private readonly consistent: Consistent,
    @Inject(DATABASE) private readonly db: Db,
  ) {}

  @RpcMethod(TrailsCreate)
  async create(params: ParamsOf<typeof TrailsCreate>, call: CallContext): Promise<ResultOf<typeof TrailsCreate>> {
    const trailId = newId();
    const labels = [...new Set(params.labels ?? (call.scope.kind === 'agent' ? call.scope.labels : []))].sort();
    const { seq } = await this.publisher.publish(TrailCreated, {
      subject: `trail:${trailId}`,
      actor: call.caller,
      labels,
      kind: 'note',
      data: { trail_id: trailId, name: params.name.trim(), description: params.description ?? '' },
    });
    return { trail_id: trailId, seq };
  }

  @RpcMethod(TrailsAppend)
  async append(params: ParamsOf<typeof TrailsAppend>, call: CallContext): Promise<ResultOf<typeof TrailsAppend>> {
    const [labels, target] = await this.consistent.read(
      async () =>
        [
          await this.visibleTrail(call.scope, params.trail_id),
          await storedRef(this.db, call.scope, params.target),
        ] as const,
    );
    const stepId = newId();
    const { seq } = await this.publisher.publish(TrailAppended, {
      subject: `trail:${params.trail_id}`,
      actor: call.caller,
      labels,
      kind: 'note',
      data: {
        trail_id: params.trail_id,
        step_id: stepId,
        target,
        ...(params.comment ? { comment: params.comment } : {}),
      },
    });
    return { step_id: stepId, seq };
  }

  @RpcMethod(TrailsComment)
  async comment(params: ParamsOf<typeof TrailsComment>, call: CallContext): Promise<ResultOf<typeof TrailsComment>> {
    const labels = await this.consistent.read(async () => {
      const found = await this.visibleTrail(call.scope, params.trail_id);
      if (params.step_id) {
        const step =
          await sql`select 1 from trail_steps s where s.step_id = ${params.step_id} and s.trail_id = ${params.trail_id}
            and ${stepVisible(call.scope)}`.execute(this.db);
        if (step.rows.length === 0)
          throw new MemexError('not_found', `trail ${params.trail_id} has no step ${params.step_id}`);
      }
      return found;
    });
    const { seq } = await this.publisher.publish(TrailCommented, {
      subject: `trail:${params.trail_id}`,
      actor: call.caller,
      labels,
      kind: 'note',
      data: {
        trail_id: params.trail_id,
        ...(params.step_id ? { step_id: params.step_id } : {}),
        comment: params.comment,
      },
    });
    return { seq };
  }

  /**
   * `to` counts among the steps the caller sees, and the event names the visible step the moved
   * one goes after: a scope never learns of, or disturbs the relative order of, steps it cannot see.
   */
  @RpcMethod(TrailsMove)
  async move(params: ParamsOf<typeof TrailsMove>, call: CallContext): Promise<ResultOf<typeof TrailsMove>> {
    const [labels, seen] = await this.consistent.read(async () => {
      const found = await this.visibleTrail(call.scope, params.trail_id);
      const steps = await sql<{ step_id: string }>`select s.step_id from trail_steps s
        where s.trail_id = ${params.trail_id} and ${stepVisible(call.scope)} order by s.ordinal`.execute(this.db);
      const ids = steps.rows.map((r) => r.step_id);
      if (!ids.includes(params.step_id))
        throw new MemexError('not_found', `trail ${params.trail_id} has no step ${params.step_id}`);
      return [found, ids] as const;
    });
    if (params.to > seen.length)
      throw new MemexError(
        'invalid_params',
        `to ${params.to} is past the end: the trail has ${seen.length} step${seen.length === 1 ? '' : 's'}`,
      );
    const others = seen.filter((id) => id !== params.step_id);
    const { seq } = await this.publisher.publish(TrailReordered, {
      subject: `trail:${params.trail_id}`,
      actor: call.caller,
      labels,
      kind: 'note',
      data: { trail_id: params.trail_id, step_id: params.step_id, after_step_id: others[params.to - 2] ?? null },
    });
    return { seq };
  }

  private async visibleTrail(scope: Scope, id: string): Promise<string[]> {
    const row = (
      await sql<{
        labels: string[];
      }>`select t.labels from trails t where t.id = ${id} and ${trailVisible(scope)}`.execute(this.db)
    ).rows[0];
    if (!row) throw new MemexError('not_found', `no trail ${id}`);
    return row.labels;
  }

  @RpcMethod(TrailsList)
  async list(params: ParamsOf<typeof TrailsList>, call: CallContext): Promise<ResultOf<typeof TrailsList>> {
    const through = params.key ? (await resolveEntity(this.db, call.scope, { key: params.key })).id : null;
    return { trails: await listTrails(this.db, call.scope, { through, limit: params.limit ?? 50 }) };
  }

  @RpcMethod(TrailsGet)
  async get(params: ParamsOf<typeof TrailsGet>, call: CallContext): Promise<ResultOf<typeof TrailsGet>> {
    const [trail] = await listTrails(this.db, call.scope, { id: params.trail_id, limit: 1 });
    if (!trail) throw new MemexError('not_found', `no trail ${params.trail_id}`);
    const labels = await this.visibleTrail(call.scope, params.trail_id);
    const comments = await sql<{ comment: string; made_by: string; at: Date }>`
      select comment, made_by, at from trail_comments where trail_id = ${params.trail_id} order by at, id`.execute(
      this.db,
    );
    return {
      ...trail,
      labels,
      comments: comments.rows.map((c) => ({ comment: c.comment, made_by: c.made_by, at: c.at.toISOString() })),
      steps_list: await visibleSteps(this.db, call.scope, params.trail_id),
    };
  }
}

/** Trails the scope may see, newest first; `through` keeps those with a step on that thing. */
export async function listTrails(
  db: Db,
  scope: Scope,
  options: { through?: number | null; id?: string; limit: number; text?: string },
): Promise<Summary[]> {
  const rows = await sql<{
    id: string;
    name: string;
    description: string;
    made_by: string;
    created_at: Date;
    steps: number;
  }>`
    select t.id, t.name, t.description, t.made_by, t.created_at, (select count(*)::int from trail_steps s where s.trail_id = t.id and ${stepVisible(scope)}) as steps
    from trails t
    where ${trailVisible(scope)}
      ${options.id ? sql`and t.id = ${options.id}` : sql``}
      ${options.through != null ? sql`and exists (select 1 from trail_steps s where s.trail_id = t.id and s.target_entity = ${options.through})` : sql``}
      ${options.text && anyWord(options.text) ? sql`and to_tsvector('english', t.name || ' ' || t.description) @@ to_tsquery('english', ${anyWord(options.text)})` : sql``}
    order by t.created_at desc, t.id desc limit ${options.limit}`.execute(db);
  return rows.rows.map((r) => ({
    trail_id: r.id,
    name: r.name,
    description: r.description,
    made_by: r.made_by,
    created_at: r.created_at.toISOString(),
    steps: r.steps,
  }));
}

/** A trail's steps in order, leaving out items and things the scope may not see. */
async function visibleSteps(db: Db, scope: Scope, trailId: string): Promise<Step[]> {
  const rows = await sql<{
    step_id: string;
    ordinal: number;
    target_entity: number | null;
    target_item: string | null;
    comment: string | null;
    kind: string | null;
    title: string | null;
    occurred_at: Date | null;
    visible: boolean | null;
  }>`
    select s.step_id, s.ordinal, s.target_entity, s.target_item, s.comment, i.kind, i.title, i.occurred_at,
      ${itemVisible(scope)} as visible
    from trail_steps s left join items i on i.id = s.target_item
    where s.trail_id = ${trailId} order by s.ordinal`.execute(db);
  const things = await summaries(
    db,
    scope,
    rows.rows.flatMap((r) => (r.target_entity !== null ? [Number(r.target_entity)] : [])),
  );
  const steps: Step[] = [];
  for (const row of rows.rows) {
    const common = { step_id: row.step_id, ordinal: row.ordinal, comment: row.comment };
    if (row.target_entity !== null) {
      const entity = things.get(Number(row.target_entity));
      if (entity) steps.push({ ...common, target: { entity } });
    } else if (row.visible && row.kind !== null) {
      steps.push({
        ...common,
        target: {
          item: {
            id: row.target_item!,
            kind: row.kind,
            title: row.title!,
            occurred_at: row.occurred_at?.toISOString() ?? null,
          },
        },
      });
    }
  }
  return steps;
}
