import { Inject, Injectable } from '@nestjs/common';
import type { Kysely } from 'kysely';
import {
  formatQuery,
  MailThread,
  OWNER_SCOPE,
  RulesList,
  RulesTest,
  rpcSubject,
  Search,
  type ParamsOf,
  type ResultOf,
} from '@memex/contracts';
import { callRpc, type Bus } from '@memex/bus';
import type { MemexConfig } from '@memex/config';
import { BUS, CONFIG, DATABASE, RpcMethod } from '@memex/runtime';
import { matches, parseRule, wouldChange } from '../domain/rules.js';
import type { MailSyncDatabase } from '../projection/schema.js';

/** How many of search's candidates a dry run looks at most (search pages its first 1,000 hits). */
const DRY_RUN_SCAN = 1_000;

/** memex.rules.list and the dry run, memex.rules.test. */
@Injectable()
export class RulesQueries {
  constructor(
    @Inject(DATABASE) private readonly db: Kysely<MailSyncDatabase>,
    @Inject(BUS) private readonly bus: Bus,
    @Inject(CONFIG) private readonly config: MemexConfig,
  ) {}

  @RpcMethod(RulesList)
  async list(): Promise<ResultOf<typeof RulesList>> {
    const rules = await this.db.selectFrom('rules').selectAll().orderBy('position').orderBy('id').execute();
    return { rules: rules.map(({ seq: _seq, ...rule }) => rule) };
  }

  /**
   * The rule's query goes to memex.search (mail only) for candidates; each is then judged by the
   * same matcher new mail meets, so the dry run shows exactly what the rule would act on. `label:`
   * is left to the matcher: in a rule it names a mail label, in search an item's label.
   */
  @RpcMethod(RulesTest)
  async test(params: ParamsOf<typeof RulesTest>): Promise<ResultOf<typeof RulesTest>> {
    const rule = parseRule(params.query);
    const q = formatQuery({ ...rule.parsed, filters: { ...rule.parsed.filters, label: [] } });
    const limit = params.limit ?? 50;
    const found: ResultOf<typeof RulesTest>['matches'] = [];
    let scanned = 0;
    let offset: number | null = 0;
    // Everything logged so far is in the read models asked (read-your-writes).
    const minSeq = await this.bus.lastSeq();
    while (offset !== null && found.length < limit && scanned < DRY_RUN_SCAN) {
      const page: ResultOf<typeof Search> = await this.ask(Search, {
        q,
        mode: 'keyword',
        kinds: ['email'],
        limit: 100,
        offset,
        min_seq: minSeq,
      });
      for (const hit of page.hits) {
        scanned++;
        const thread = await this.ask(MailThread, { id: hit.id, min_seq: minSeq });
        const message = thread.messages.find((m) => m.id === hit.id);
        if (found.length < limit && message && matches(rule, message)) {
          found.push({
            id: message.id,
            subject: message.subject,
            from: message.from[0]?.address ?? '',
            date: message.date,
            would_change: params.actions ? wouldChange(params.actions, message) : [],
          });
        }
      }
      offset = page.next_offset;
    }
    return { matches: found.sort((a, b) => b.date.localeCompare(a.date)), scanned };
  }

  private ask<M extends typeof Search | typeof MailThread>(method: M, params: ParamsOf<M>): Promise<ResultOf<M>> {
    return callRpc<ResultOf<M>>(
      this.bus,
      rpcSubject(method),
      { method: method.name, params, scope: OWNER_SCOPE, caller: { kind: 'system', id: 'mail-sync' } },
      this.config.rpcTimeoutMs,
    );
  }
}
