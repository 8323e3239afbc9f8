import { Inject, Injectable, Logger } from '@nestjs/common';
import type { Kysely } from 'kysely';
import {
  MailFlags,
  MemexError,
  MailThread,
  OWNER_SCOPE,
  RuleApplied,
  rpcSubject,
  type Actor,
  type ParamsOf,
  type ResultOf,
} from '@memex/contracts';
import { callRpc, EventPublisher, type Bus } from '@memex/bus';
import type { MemexConfig } from '@memex/config';
import { BUS, CONFIG, DATABASE } from '@memex/runtime';
import { OutgoingCommands } from '../commands/outgoing.commands.js';
import { derivedId } from '../domain/ids.js';
import { matches, parseRule } from '../domain/rules.js';
import type { MailSyncDatabase } from '../projection/schema.js';

/**
 * Applies the user's rules to new mail, once per rule and message, in rule order. The actions
 * are the user's own kinds of change (mail.flags through ingest, so they reach Gmail like any
 * memex change; a forward through the outbox); `rule.applied` records each after its actions.
 */
@Injectable()
export class RuleEngine {
  private readonly logger = new Logger('memex:mail-sync');

  constructor(
    @Inject(DATABASE) private readonly db: Kysely<MailSyncDatabase>,
    @Inject(BUS) private readonly bus: Bus,
    @Inject(CONFIG) private readonly config: MemexConfig,
    private readonly publisher: EventPublisher,
    private readonly outgoing: OutgoingCommands,
  ) {}

  async applyToNew(account: string, itemIds: string[]): Promise<void> {
    if (itemIds.length === 0) return;
    const rules = await this.db.selectFrom('rules').selectAll().orderBy('position').orderBy('id').execute();
    if (rules.length === 0) return;
    const done = new Set(
      (
        await this.db
          .selectFrom('rule_applications')
          .select(['rule_id', 'item_id'])
          .where('item_id', 'in', itemIds)
          .execute()
      ).map((r) => `${r.rule_id}/${r.item_id}`),
    );
    const parsed = new Map(rules.map((rule) => [rule.id, parseRule(rule.query)]));
    const minSeq = await this.bus.lastSeq();
    for (const itemId of itemIds) {
      const thread = await this.ask(MailThread, { id: itemId, min_seq: minSeq });
      const message = thread.messages.find((m) => m.id === itemId);
      // Rules act on mail received: the user's own (a rule's forward among them) would loop.
      if (!message || message.labels.includes('SENT') || message.labels.includes('DRAFT')) continue;
      for (const rule of rules) {
        if (done.has(`${rule.id}/${itemId}`) || !matches(parsed.get(rule.id)!, message)) continue;
        const actor: Actor = { kind: 'system', id: `rule:${rule.id}` };
        const { add_labels, archive, star, mark_read, forward_to } = rule.actions;
        const flags = {
          ...(add_labels?.length ? { add_labels } : {}),
          ...(archive ? { archived: true } : {}),
          ...(star ? { starred: true } : {}),
          ...(mark_read ? { read: true } : {}),
        };
        if (Object.keys(flags).length > 0) await this.ask(MailFlags, { ids: [itemId], ...flags }, actor);
        if (forward_to) {
          // Under an id of its own, so a cycle redone after a crash does not forward twice.
          const forward = {
            account,
            mode: 'forward' as const,
            message: itemId,
            to: [forward_to],
            text: '',
            undo_seconds: 0,
          };
          await this.outgoing
            .queue(forward, actor, derivedId('rule-forward', rule.id, itemId))
            .catch((error: unknown) => {
              if (!(error instanceof MemexError && error.code === 'conflict')) throw error;
            });
        }
        await this.publisher.publish(RuleApplied, {
          subject: `item:${itemId}`,
          actor,
          kind: 'email',
          data: { rule_id: rule.id, item_id: itemId, actions: rule.actions },
        });
        this.logger.log(`rule ${rule.name || rule.id} acted on ${itemId}`);
      }
    }
  }

  private ask<M extends typeof MailThread | typeof MailFlags>(
    method: M,
    params: ParamsOf<M>,
    caller: Actor = { kind: 'system', id: 'mail-sync' },
  ): Promise<ResultOf<M>> {
    return callRpc<ResultOf<M>>(
      this.bus,
      rpcSubject(method),
      { method: method.name, params, scope: OWNER_SCOPE, caller },
      this.config.rpcTimeoutMs,
    );
  }
}
