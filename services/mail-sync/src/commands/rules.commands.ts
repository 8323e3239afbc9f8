import { Inject, Injectable } from '@nestjs/common';
import type { Kysely } from 'kysely';
import {
  MemexError,
  RuleAdded,
  RuleRemoved,
  RulesAdd,
  RulesRemove,
  type ParamsOf,
  type ResultOf,
} from '@memex/contracts';
import { EventPublisher, newId } from '@memex/bus';
import { DATABASE, RpcMethod, type CallContext } from '@memex/runtime';
import { parseRule } from '../domain/rules.js';
import type { MailSyncDatabase } from '../projection/schema.js';
import { Outbox } from '../sync/outbox.js';

/** memex.rules.add|remove. */
@Injectable()
export class RulesCommands {
  constructor(
    @Inject(DATABASE) private readonly db: Kysely<MailSyncDatabase>,
    private readonly publisher: EventPublisher,
    private readonly outbox: Outbox,
  ) {}

  @RpcMethod(RulesAdd)
  async add(params: ParamsOf<typeof RulesAdd>, call: CallContext): Promise<ResultOf<typeof RulesAdd>> {
    parseRule(params.query);
    const { add_labels, archive, star, mark_read, forward_to } = params.actions;
    if (!add_labels?.length && !archive && !star && !mark_read && !forward_to) {
      throw new MemexError(
        'invalid_params',
        'params.actions: say what the rule does (add_labels, archive, star, mark_read, forward_to)',
      );
    }
    await this.outbox.caughtUp();
    const last = await this.db
      .selectFrom('rules')
      .select((eb) => eb.fn.max('position').as('position'))
      .executeTakeFirst();
    const id = newId();
    const { seq } = await this.publisher.publish(RuleAdded, {
      subject: `rule:${id}`,
      actor: call.caller,
      data: {
        id,
        name: params.name ?? '',
        query: params.query,
        actions: params.actions,
        position: (last?.position ?? -1) + 1,
      },
    });
    return { id, seq };
  }

  @RpcMethod(RulesRemove)
  async remove(params: ParamsOf<typeof RulesRemove>, call: CallContext): Promise<ResultOf<typeof RulesRemove>> {
    await this.outbox.caughtUp();
    const rule = await this.db.selectFrom('rules').select('id').where('id', '=', params.id).executeTakeFirst();
    if (!rule) throw new MemexError('not_found', `no rule ${params.id}`);
    const { seq } = await this.publisher.publish(RuleRemoved, {
      subject: `rule:${params.id}`,
      actor: call.caller,
      data: { id: params.id },
    });
    return { seq };
  }
}
