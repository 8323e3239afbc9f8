import fs from 'node:fs';
import type { Command } from 'commander';
import { AccountsAdd, AccountsList, AccountsRemove, AccountsSync } from '@memex/contracts';
import { ALL_GOOGLE_SCOPES, authorizeInstalledApp, googleEndpoints, readClientSecrets } from '@memex/google';
import { client, output } from '../context.js';

export function registerAccounts(program: Command): void {
  const accounts = program
    .command('accounts')
    .description('connected Google accounts (Gmail, and the calendar and contacts of the same grant)');
  accounts
    .command('add <provider>')
    .description(
      'connect a Google account: prints a consent URL, waits for the browser to come back to 127.0.0.1; one consent grants mail, calendar and contacts',
    )
    .requiredOption(
      '--client-secret <file>',
      'the client_secret_….json of your own Google Cloud OAuth client (Desktop app)',
    )
    .option(
      '--refresh-token-file <file>',
      'headless: a file holding a refresh token granted elsewhere, instead of the browser flow',
    )
    .action(async (provider: string, options: { clientSecret: string; refreshTokenFile?: string }) => {
      if (provider !== 'google' && provider !== 'gmail')
        throw new Error(`unknown provider ${JSON.stringify(provider)}: only google is supported`);
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
                    : `NEEDS REAUTH (${a.reason ?? 'grant refused'}): run memex accounts add google again`;
                return `${a.account}  ${status}  sync: ${a.sync.phase}, ${a.sync.messages} messages${a.sync.last_progress_at ? `, last ${a.sync.last_progress_at}` : ''}`;
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
        `removed ${account}; its grant was erased (revoke it at https://myaccount.google.com/permissions too)`,
      );
    });
  accounts
    .command('sync [account]')
    .description('poll Gmail now instead of at the next interval')
    .action(async (account: string | undefined) => {
      const { synced } = await client().call(AccountsSync, account ? { account } : {});
      console.log(synced.length === 0 ? 'no active accounts' : `synced ${synced.join(', ')}`);
    });
}
