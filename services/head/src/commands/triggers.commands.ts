import { Inject, Injectable } from '@nestjs/common';
import type { Kysely } from 'kysely';
import { EventPublisher, newId, type Bus } from '@memex/bus';
import {
  MemexError,
  TriggerRegistered,
  TriggerRemoved,
  TriggersAdd,
  TriggersRemove,
  type ParamsOf,
  type ResultOf,
  type Scope,
} from '@memex/contracts';
import { BUS, DATABASE, RpcMethod, type CallContext } from '@memex/runtime';
import { misplacedFilters } from '../domain/triggers.js';
import type { HeadDatabase } from '../projection/schema.js';

/** The labels a trigger fires within: the caller's, or null for the owner's. */
export function scopeLabels(scope: Scope): string[] | null {
  return scope.kind === 'owner' ? null : scope.labels;
}

@Injectable()
export class TriggersCommands {
  constructor(
    private readonly publisher: EventPublisher,
    @Inject(BUS) private readonly bus: Bus,
    @Inject(DATABASE) private readonly db: Kysely<HeadDatabase>,
  ) {}

  @RpcMethod(TriggersAdd)
  async add(params: ParamsOf<typeof TriggersAdd>, call: CallContext): Promise<ResultOf<typeof TriggersAdd>> {
    const misplaced = misplacedFilters(params.on, params.filter ?? {});
    if (misplaced.length > 0) {
      throw new MemexError('invalid_params', `a trigger on ${params.on} cannot filter on ${misplaced.join(', ')}`);
    }
    const id = newId();
    const { seq } = await this.publisher.publish(TriggerRegistered, {
      subject: `trigger:${id}`,
      actor: call.caller,
      data: {
        id,
        name: params.name,
        on: params.on,
        filter: params.filter ?? {},
        action: params.action,
        scope_labels: scopeLabels(call.scope),
        // Fires for what happens from now on, not for the whole archive.
        from_seq: await this.bus.lastSeq(),
      },
    });
    return { id, seq };
  }

  @RpcMethod(TriggersRemove)
  async remove(params: ParamsOf<typeof TriggersRemove>, call: CallContext): Promise<ResultOf<typeof TriggersRemove>> {
    const row = await this.db
      .selectFrom('triggers')
      .select(['id', 'scope_labels'])
      .where('id', '=', params.id)
      .where('removed', '=', false)
      .executeTakeFirst();
    // A trigger of another scope is "not found", like one that does not exist.
    if (!row || !sameScope(row.scope_labels, call.scope)) throw new MemexError('not_found', `no trigger ${params.id}`);
    const { seq } = await this.publisher.publish(TriggerRemoved, {
      subject: `trigger:${params.id}`,
      actor: call.caller,
      data: { id: params.id },
    });
    return { seq };
  }
}

/** The owner sees every trigger; a session only those registered with exactly its labels. */
export function sameScope(labels: string[] | null, scope: Scope): boolean {
  if (scope.kind === 'owner') return true;
  return labels !== null && [...labels].sort().join(',') === [...scope.labels].sort().join(',');
}
