import fs from 'node:fs';
import readline from 'node:readline/promises';
import { Writable } from 'node:stream';
import type { Command } from 'commander';
import { AccountsAdd, AccountsAddImap, AccountsList, AccountsRemove, AccountsSync } from '@memex/contracts';
import { ALL_GOOGLE_SCOPES, authorizeInstalledApp, googleEndpoints, readClientSecrets } from '@memex/google';
import { client, output } from '../context.js';

interface ImapOptions {
  host?: string;
  port?: string;
  user?: string;
  tls: boolean;
  passwordFile?: string;
  smtpHost?: string;
  smtpPort?: string;
}

/** The IMAP password: from --password-file, MEMEX_IMAP_PASSWORD, or asked for without echo. */
async function imapPassword(options: ImapOptions): Promise<string> {
  if (options.passwordFile) {
    const password = fs.readFileSync(options.passwordFile, 'utf8').trim();
    if (!password) throw new Error(`${options.passwordFile} is empty`);
    return password;
  }
  if (process.env.MEMEX_IMAP_PASSWORD) return process.env.MEMEX_IMAP_PASSWORD;
  if (!process.stdin.isTTY)
    throw new Error('no password: give --password-file <file>, set MEMEX_IMAP_PASSWORD, or run in a terminal');
  process.stdout.write(`password for ${options.user}: `);
  const silent = new Writable({ write: (_chunk, _encoding, done) => done() });
  const prompt = readline.createInterface({ input: process.stdin, output: silent, terminal: true });
  const password = await prompt.question('');
  prompt.close();
  process.stdout.write('\n');
  return password;
}

async function addImap(options: ImapOptions): Promise<void> {
  if (!options.host || !options.user) throw new Error('an IMAP account needs --host and --user');
  const added = await client().call(AccountsAddImap, {
    host: options.host,
    user: options.user,
    tls: options.tls,
    password: await imapPassword(options),
    ...(options.port ? { port: Number(options.port) } : {}),
    ...(options.smtpHost ? { smtp_host: options.smtpHost } : {}),
    ...(options.smtpPort ? { smtp_port: Number(options.smtpPort) } : {}),
  });
  console.log(`connected ${added.account}; its folders start syncing now (memex accounts list shows how far it is)`);
}

export function registerAccounts(program: Command): void {
  const accounts = program
    .command('accounts')
    .description(
      'connected mail accounts: Google (Gmail, and the calendar and contacts of the same grant) and plain IMAP/SMTP',
    );
  accounts
    .command('add <provider>')
    .description(
      'connect an account. google: prints a consent URL, waits for the browser to come back to 127.0.0.1; one consent grants mail, calendar and contacts. imap: logs in with --host and --user (password from --password-file, MEMEX_IMAP_PASSWORD or a prompt)',
    )
    .option(
      '--client-secret <file>',
      'google: the client_secret_….json of your own Google Cloud OAuth client (Desktop app)',
    )
    .option(
      '--refresh-token-file <file>',
      'google, headless: a file holding a refresh token granted elsewhere, instead of the browser flow',
    )
    .option('--host <host>', 'imap: the IMAP server')
    .option('--port <port>', 'imap: its port (993, or 143 with --no-tls)')
    .option('--user <user>', 'imap: the login (usually the address)')
    .option('--no-tls', 'imap: no TLS from the start (STARTTLS when the server offers it)')
    .option('--password-file <file>', 'imap: a file holding the password')
    .option('--smtp-host <host>', 'imap: the SMTP server (default: the IMAP host)')
    .option('--smtp-port <port>', 'imap: its port (465, or 587 with --no-tls)')
    .action(async (provider: string, options: { clientSecret?: string; refreshTokenFile?: string } & ImapOptions) => {
      if (provider === 'imap') return addImap(options);
      if (provider !== 'google' && provider !== 'gmail')
        throw new Error(`unknown provider ${JSON.stringify(provider)}: google or imap`);
      if (!options.clientSecret) throw new Error('a Google account needs --client-secret <file>');
      const secrets = readClientSecrets(options.clientSecret);
      let refreshToken: string;
      let scopes: string[] | undefined;
      if (options.refreshTokenFile) {
        refreshToken = fs.readFileSync(options.refreshTokenFile, 'utf8').trim();
        if (!refreshToken) throw new Error(`${options.refreshTokenFile} is empty`);
      } else {
        const grant = await authorizeInstalledApp({
          client: secrets,
          endpoints: googleEndpoints(),
          scopes: ALL_GOOGLE_SCOPES,
          onUrl: (url) =>
            console.log(
              `Open this URL in a browser on this machine and allow access:\n\n  ${url}\n\nWaiting for Google to send the browser back…`,
            ),
        });
        refreshToken = grant.refreshToken;
        scopes = grant.scopes;
      }
      const added = await client().call(AccountsAdd, {
        provider: 'google',
        client_id: secrets.clientId,
        client_secret: secrets.clientSecret,
        refresh_token: refreshToken,
        ...(scopes ? { scopes } : {}),
      });
      console.log(`connected ${added.account}; its mail starts syncing now (memex accounts list shows how far it is)`);
    });
  accounts
    .command('list')
    .option('--json', 'print JSON')
    .action(async (options: { json?: boolean }) => {
      const { accounts: list } = await client().call(AccountsList, {});
      output(Boolean(options.json), list, () =>
        list.length === 0
          ? 'no accounts (memex accounts add google --client-secret <file>)'
          : list
              .map((a) => {
                const status =
                  a.status === 'active'
                    ? 'active'
                    : `NEEDS REAUTH (${a.reason ?? 'grant refused'}): run memex accounts add ${a.provider} again`;
                const failing = a.sync.failing
                  ? `; FAILING since ${a.sync.failing.since}: ${a.sync.failing.reason} (tried again each poll)`
                  : '';
                return `${a.account}  ${a.provider}  ${status}  sync: ${a.sync.phase}, ${a.sync.messages} messages${a.sync.last_progress_at ? `, last ${a.sync.last_progress_at}` : ''}${failing}`;
              })
              .join('\n'),
      );
    });
  accounts
    .command('remove <account>')
    .description('disconnect an account: its stored grant is erased, its sync stops; mail already synced stays')
    .action(async (account: string) => {
      await client().call(AccountsRemove, { account });
      console.log(
        `removed ${account}; its stored grant or password was erased (for Google, revoke it at https://myaccount.google.com/permissions too)`,
      );
    });
  accounts
    .command('sync [account]')
    .description('poll Gmail and the IMAP servers now instead of at the next interval')
    .action(async (account: string | undefined) => {
      const { synced } = await client().call(AccountsSync, account ? { account } : {});
      console.log(synced.length === 0 ? 'no active accounts' : `synced ${synced.join(', ')}`);
    });
}
