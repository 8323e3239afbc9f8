import { Inject, Injectable } from '@nestjs/common';
import type { Kysely } from 'kysely';
import {
  AccountNeedsReauth,
  AccountsList,
  AccountsToken,
  MemexError,
  type ParamsOf,
  type ResultOf,
} from '@memex/contracts';
import { EventPublisher } from '@memex/bus';
import { GrantRevokedError } from '@memex/google';
import { DATABASE, RpcMethod, type HealthProblems } from '@memex/runtime';
import type { MailSyncDatabase } from '../projection/schema.js';
import { connectorActor } from '../sync/google-accounts.js';
import { GoogleAccounts } from '../sync/google-accounts.js';
import { SyncScheduler } from '../sync/scheduler.js';

/** memex.accounts.list, and the internal memex.accounts.token for other services. */
@Injectable()
export class AccountsQueries implements HealthProblems {
  constructor(
    @Inject(DATABASE) private readonly db: Kysely<MailSyncDatabase>,
    private readonly publisher: EventPublisher,
    private readonly google: GoogleAccounts,
    private readonly scheduler: SyncScheduler,
  ) {}

  /** A revoked grant shows in /healthz and `memex status`, not only in `memex accounts list`. */
  async healthProblems(): Promise<string[]> {
    const rows = await this.db
      .selectFrom('accounts')
      .select(['account', 'provider', 'reason'])
      .where('status', '=', 'needs_reauth')
      .orderBy('account')
      .execute()
      .catch(() => []); // before the schema exists
    return rows.map((row) =>
      row.provider === 'imap'
        ? `IMAP account ${row.account} cannot log in (${row.reason ?? 'login refused'}): memex accounts add imap`
        : `Google account ${row.account} needs a new consent (${row.reason ?? 'grant refused'}): memex accounts add google`,
    );
  }

  @RpcMethod(AccountsList)
  async list(): Promise<ResultOf<typeof AccountsList>> {
    const rows = await this.db.selectFrom('accounts').selectAll().orderBy('account').execute();
    return {
      accounts: rows.map((row) => ({
        account: row.account,
        provider: row.provider,
        status: row.status,
        reason: row.reason,
        scopes: row.scopes,
        connected_at: row.connected_at.toISOString(),
        sync: {
          phase: row.phase,
          messages: row.messages,
          history_id: row.history_id,
          last_progress_at: row.last_progress_at?.toISOString() ?? null,
          failing: this.failingOf(row.account),
        },
      })),
    };
  }

  private failingOf(account: string): { reason: string; since: string } | null {
    const failing = this.scheduler.failures.get(account);
    return failing ? { reason: failing.reason, since: failing.since.toISOString() } : null;
  }

  /** A revoked grant is logged (the account shows needs_reauth) and refused with that word in the error. */
  @RpcMethod(AccountsToken)
  async token(params: ParamsOf<typeof AccountsToken>): Promise<ResultOf<typeof AccountsToken>> {
    const row = await this.db
      .selectFrom('accounts')
      .select('status')
      .where('account', '=', params.account)
      .executeTakeFirst();
    if (!row) throw new MemexError('not_found', `no Google account ${params.account}`);
    if (row.status === 'needs_reauth')
      throw new MemexError(
        'forbidden',
        `needs_reauth: ${params.account} must be added again (memex accounts add google)`,
      );
    try {
      return await this.google.accessToken(params.account, params.scope);
    } catch (error) {
      if (!(error instanceof GrantRevokedError)) throw error;
      await this.publisher.publish(AccountNeedsReauth, {
        subject: `account:${params.account}`,
        actor: connectorActor(params.account),
        data: { account: params.account, reason: error.reason },
      });
      this.google.forget(params.account);
      throw new MemexError('forbidden', `needs_reauth: ${error.message}`);
    }
  }
}
