import { Inject, Injectable } from '@nestjs/common';
import type { Kysely } from 'kysely';
import { ImapFlow } from 'imapflow';
import nodemailer, { type Transporter } from 'nodemailer';
import { MemexError, type Actor } from '@memex/contracts';
import type { Bus } from '@memex/bus';
import type { MemexConfig } from '@memex/config';
import { credentialsProvider, type CredentialsProvider } from '@memex/credentials';
import { TokenStore } from '@memex/google';
import { BUS, CONFIG, DATABASE } from '@memex/runtime';
import type { ImapAccountsTable, MailSyncDatabase } from '../projection/schema.js';

export type ImapServers = Omit<ImapAccountsTable, 'account' | 'seq'>;

export function imapActor(account: string): Actor {
  return { kind: 'connector', id: `imap:${account}` };
}

/** A login the server refused: the account needs its password again. */
export class ImapLoginRefused extends Error {}

/** An IMAP session for these servers; the login is refused with ImapLoginRefused. */
export async function imapSession(servers: ImapServers, password: string): Promise<ImapFlow> {
  const client = new ImapFlow({
    host: servers.host,
    port: servers.port,
    secure: servers.tls,
    auth: { user: servers.user, pass: password },
    logger: false,
    // A cycle reads and leaves; new mail is found by the next poll.
    disableAutoIdle: true,
  });
  // A dropped connection is an 'error' event; the command in flight fails with it.
  client.on('error', () => undefined);
  try {
    await client.connect();
  } catch (error) {
    if ((error as { authenticationFailed?: boolean }).authenticationFailed)
      throw new ImapLoginRefused(`the IMAP server ${servers.host} refused the login of ${servers.user}`);
    throw error;
  }
  return client;
}

/**
 * The IMAP accounts' secrets and sessions. A password given to `memex accounts add imap` is kept
 * encrypted under MEMEX_HOME (the token store libs/google keeps Google's grants in, a folder of
 * its own); without one the credentials provider is asked for imap:<account> (MEMEX_CREDENTIAL_IMAP_…
 * or the enrolled head).
 */
@Injectable()
export class ImapAccounts {
  readonly store: TokenStore<{ account: string; password: string }>;
  private readonly credentials: CredentialsProvider;

  constructor(
    @Inject(CONFIG) config: MemexConfig,
    @Inject(DATABASE) private readonly db: Kysely<MailSyncDatabase>,
    @Inject(BUS) bus: Bus,
  ) {
    this.store = new TokenStore(config.home, 'imap');
    this.credentials = credentialsProvider(bus);
  }

  async password(account: string): Promise<string> {
    return this.store.get(account)?.password ?? (await this.credentials.get(`imap:${account}`)).secret;
  }

  async servers(account: string): Promise<ImapServers> {
    const row = await this.db.selectFrom('imap_accounts').selectAll().where('account', '=', account).executeTakeFirst();
    if (!row) throw new MemexError('not_found', `no IMAP account ${account} (memex accounts list)`);
    const { account: _account, seq: _seq, ...servers } = row;
    return servers;
  }

  async session(account: string): Promise<ImapFlow> {
    return imapSession(await this.servers(account), await this.password(account));
  }

  /** nodemailer's SMTP transport for the account (same user and password as IMAP). */
  async smtp(account: string): Promise<Transporter> {
    const servers = await this.servers(account);
    return nodemailer.createTransport({
      host: servers.smtp_host,
      port: servers.smtp_port,
      secure: servers.smtp_tls,
      auth: { user: servers.user, pass: await this.password(account) },
    });
  }
}
