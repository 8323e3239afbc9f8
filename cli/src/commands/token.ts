import type { Command } from 'commander';
import { TokensCreate, TokensList, TokensRevoke } from '@memex/contracts';
import { client, output } from '../context.js';

export function registerToken(program: Command): void {
  const token = program.command('token').description('manage scoped agent tokens');
  token
    .command('create')
    .description('create an agent token; the token alone is printed on the last line')
    .option('--labels <labels>', 'comma-separated session labels, e.g. mail,client:acme', '')
    .option('--name <name>', 'a name to recognise it by')
    .action(async (options: { labels: string; name?: string }) => {
      const labels = options.labels
        .split(',')
        .map((l) => l.trim())
        .filter(Boolean);
      const created = await client().call(TokensCreate, { labels, ...(options.name ? { name: options.name } : {}) });
      console.log(`created token ${created.id} with labels [${created.labels.join(', ')}]`);
      console.log(created.token);
    });
  token
    .command('list')
    .option('--json', 'print JSON')
    .action(async (options: { json?: boolean }) => {
      const { tokens } = await client().call(TokensList, {});
      output(Boolean(options.json), tokens, () =>
        tokens.length === 0
          ? 'no agent tokens'
          : tokens
              .map(
                (t) =>
                  `${t.id}  ${t.revoked_at ? 'revoked' : 'active '}  ${t.created_at}  ${t.name}  [${t.labels.join(', ')}]`,
              )
              .join('\n'),
      );
    });
  token.command('revoke <id>').action(async (id: string) => {
    await client().call(TokensRevoke, { id });
    console.log(`revoked ${id}`);
  });
}
