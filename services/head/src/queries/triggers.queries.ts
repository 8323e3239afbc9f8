import { Inject, Injectable } from '@nestjs/common';
import { sql, type Kysely } from 'kysely';
import { TriggersList, type ResultOf } from '@memex/contracts';
import { DATABASE, RpcMethod, type CallContext } from '@memex/runtime';
import { sameScope } from '../commands/triggers.commands.js';
import type { HeadDatabase } from '../projection/schema.js';

@Injectable()
export class TriggersQueries {
  constructor(@Inject(DATABASE) private readonly db: Kysely<HeadDatabase>) {}

  @RpcMethod(TriggersList)
  async list(_params: unknown, call: CallContext): Promise<ResultOf<typeof TriggersList>> {
    const rows = await this.db
      .selectFrom('triggers as t')
      .leftJoin('trigger_fires as f', 'f.trigger_id', 't.id')
      .select([
        't.id',
        't.name',
        't.on',
        't.filter',
        't.action',
        't.scope_labels',
        sql<string>`count(f.event_id)`.as('fired'),
        sql<Date | null>`max(f.fired_at)`.as('last_fired_at'),
      ])
      .where('t.removed', '=', false)
      .groupBy('t.id')
      .orderBy('t.id')
      .execute();
    return {
      triggers: rows
        .filter((row) => sameScope(row.scope_labels, call.scope))
        .map((row) => ({
          id: row.id,
          name: row.name,
          on: row.on,
          filter: row.filter,
          action: row.action,
          scope_labels: row.scope_labels,
          fired: Number(row.fired),
          last_fired_at: row.last_fired_at ? new Date(row.last_fired_at).toISOString() : null,
        })),
    };
  }
}
