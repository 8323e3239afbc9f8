import { Inject, Injectable } from '@nestjs/common';
import type { Kysely } from 'kysely';
import {
  MailList,
  MemexError,
  OWNER_SCOPE,
  RulesList,
  RulesTest,
  rpcSubject,
  type ParamsOf,
  type ResultOf,
} from '@memex/contracts';
import { callRpc, type Bus } from '@memex/bus';
import type { MemexConfig } from '@memex/config';
import { BUS, CONFIG, DATABASE, RpcMethod } from '@memex/runtime';
import { matches, parseRule, wouldChange } from '../domain/rules.js';
import type { MailSyncDatabase } from '../projection/schema.js';

/** How many existing messages a dry run reads at most (newest first). */
const DRY_RUN_SCAN = 20_000;

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

  /** Reads the mail views newest first (up to 20,000 messages) and answers what would match; changes nothing. */
  @RpcMethod(RulesTest)
  async test(params: ParamsOf<typeof RulesTest>): Promise<ResultOf<typeof RulesTest>> {
    let terms: ReturnType<typeof parseRule>;
    try {
      terms = parseRule(params.query);
    } catch (error) {
      throw new MemexError('invalid_params', `params.query: ${(error as Error).message}`);
    }
    const limit = params.limit ?? 50;
    const found: ResultOf<typeof RulesTest>['matches'] = [];
    let scanned = 0;
    let cursor: string | null = null;
    // Everything logged so far is in the views read (read-your-writes).
    const minSeq = await this.bus.lastSeq();
    do {
      const page: ResultOf<typeof MailList> = await callRpc<ResultOf<typeof MailList>>(
        this.bus,
        rpcSubject(MailList),
        {
          method: MailList.name,
          params: { view: 'all', limit: 500, min_seq: minSeq, ...(cursor ? { cursor } : {}) },
          scope: OWNER_SCOPE,
          caller: { kind: 'system', id: 'mail-sync' },
        },
        this.config.rpcTimeoutMs,
      );
      for (const message of page.messages) {
        scanned++;
        if (found.length < limit && matches(terms, message)) {
          const from = message.from[0];
          found.push({
            id: message.id,
            subject: message.subject,
            from: from ? from.address : '',
            date: message.date,
            would_change: params.actions ? wouldChange(params.actions, message) : [],
          });
        }
      }
      cursor = page.next_cursor;
    } while (cursor && found.length < limit && scanned < DRY_RUN_SCAN);
    return { matches: found, scanned };
  }
}
