import { Inject, Injectable } from '@nestjs/common';
import {
  AccountConnected,
  AccountRemoved,
  AccountsAdd,
  AccountsAddImap,
  ImapAccountConnected,
  AccountsRemove,
  AccountsSync,
  MemexError,
  type ParamsOf,
  type ResultOf,
} from '@memex/contracts';
import { EventPublisher, type Bus } from '@memex/bus';
import { ALL_GOOGLE_SCOPES, gmailApi, grantRefusal, oauthClient } from '@memex/google';
import { BUS, RpcMethod, type CallContext } from '@memex/runtime';
import { ImapAccounts, imapSession } from '../imap/imap-accounts.js';
import { GoogleAccounts } from '../sync/google-accounts.js';
import { SyncScheduler } from '../sync/scheduler.js';

/** memex.accounts.add|remove|sync. */
@Injectable()
export class AccountsCommands {
  constructor(
    @Inject(BUS) private readonly bus: Bus,
    private readonly publisher: EventPublisher,
    private readonly google: GoogleAccounts,
    private readonly imap: ImapAccounts,
    private readonly scheduler: SyncScheduler,
  ) {}

  /**
   * Checks the grant with Google (which also names the account: the profile's address), stores
   * it encrypted, then logs the connection without any secret.
   */
  @RpcMethod(AccountsAdd)
  async add(params: ParamsOf<typeof AccountsAdd>, call: CallContext): Promise<ResultOf<typeof AccountsAdd>> {
    const client = { clientId: params.client_id, clientSecret: params.client_secret };
    const oauth = oauthClient(client, this.google.endpoints, params.refresh_token);
    let account: string;
    try {
      const profile = await gmailApi(oauth, this.google.endpoints).users.getProfile({ userId: 'me' });
      account = profile.data.emailAddress ?? '';
    } catch (error) {
      const refusal = grantRefusal(error);
      throw new MemexError('invalid_params', `Google did not accept the grant: ${refusal ?? (error as Error).message}`);
    }
    if (!account) throw new MemexError('invalid_params', 'Google did not say which address the grant belongs to');
    const scopes = params.scopes ?? ALL_GOOGLE_SCOPES;
    this.google.store.put({ account, client, refreshToken: params.refresh_token, scopes });
    this.google.forget(account);
    const { seq } = await this.publisher.publish(AccountConnected, {
      subject: `account:${account}`,
      actor: call.caller,
      data: { account, provider: 'google', scopes, client_id: params.client_id },
    });
    void this.scheduler.now(account).catch(() => undefined);
    return { account, seq };
  }

  /**
   * Logs in to the IMAP server first (a refused login is a clear error, nothing is stored), keeps
   * the password encrypted (or leaves it to the credentials provider), then logs the connection.
   */
  @RpcMethod(AccountsAddImap)
  async addImap(
    params: ParamsOf<typeof AccountsAddImap>,
    call: CallContext,
  ): Promise<ResultOf<typeof AccountsAddImap>> {
    const tls = params.tls ?? true;
    const smtpTls = params.smtp_tls ?? tls;
    const servers = {
      host: params.host,
      port: params.port ?? (tls ? 993 : 143),
      tls,
      user: params.user,
      smtp_host: params.smtp_host ?? params.host,
      smtp_port: params.smtp_port ?? (smtpTls ? 465 : 587),
      smtp_tls: smtpTls,
    };
    const account = params.account ?? params.user;
    const password = params.password ?? (await this.imap.password(account).catch(() => undefined));
    if (!password)
      throw new MemexError(
        'invalid_params',
        `params.password: none given, and no credential imap:${account} is configured`,
      );
    try {
      const session = await imapSession(servers, password);
      await session.logout();
    } catch (error) {
      throw new MemexError(
        'invalid_params',
        `could not log in to ${servers.host}:${servers.port}: ${(error as Error).message}`,
      );
    }
    if (params.password) this.imap.store.put({ account, password: params.password });
    const { seq } = await this.publisher.publish(ImapAccountConnected, {
      subject: `account:${account}`,
      actor: call.caller,
      data: { account, ...servers },
    });
    void this.scheduler.now(account).catch(() => undefined);
    return { account, seq };
  }

  /** Erases the grant first: once this answers, nothing can act for the account. */
  @RpcMethod(AccountsRemove)
  async remove(params: ParamsOf<typeof AccountsRemove>, call: CallContext): Promise<ResultOf<typeof AccountsRemove>> {
    const hadImap = await this.imap.servers(params.account).then(
      () => true,
      () => false,
    );
    const had = this.google.store.remove(params.account) || this.imap.store.remove(params.account) || hadImap;
    this.google.forget(params.account);
    if (!had)
      throw new MemexError('not_found', `no account ${params.account} (memex accounts list shows the connected ones)`);
    const { seq } = await this.publisher.publish(AccountRemoved, {
      subject: `account:${params.account}`,
      actor: call.caller,
      data: { account: params.account },
    });
    return { seq };
  }

  @RpcMethod(AccountsSync)
  async sync(params: ParamsOf<typeof AccountsSync>): Promise<ResultOf<typeof AccountsSync>> {
    const synced = await this.scheduler.now(params.account);
    if (params.account && !synced.includes(params.account)) {
      throw new MemexError('not_found', `no active account ${params.account} to sync (memex accounts list)`);
    }
    return { synced, seq: await this.bus.lastSeq() };
  }
}
