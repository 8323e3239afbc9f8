import type { Command } from 'commander';
import { RulesAdd, RulesList, RulesRemove, RulesTest } from '@memex/contracts';
import { client, output } from '../context.js';

interface ActionOptions {
  label?: string[];
  archive?: boolean;
  star?: boolean;
  read?: boolean;
  forward?: string;
}

function actionsOf(options: ActionOptions) {
  return {
    ...(options.label?.length ? { add_labels: options.label } : {}),
    ...(options.archive ? { archive: true } : {}),
    ...(options.star ? { star: true } : {}),
    ...(options.read ? { mark_read: true } : {}),
    ...(options.forward ? { forward_to: options.forward } : {}),
  };
}

function withActions(command: Command): Command {
  return command
    .option('--label <label...>', 'add these labels')
    .option('--archive', 'take it out of the inbox')
    .option('--star', 'star it')
    .option('--read', 'mark it read')
    .option('--forward <address>', 'forward it to this address');
}

export function registerRules(program: Command): void {
  const rules = program
    .command('rules')
    .description(
      'mail rules: new synced mail matching a query is labelled, archived, starred, marked read or forwarded, once',
    );
  withActions(
    rules
      .command('add <query>')
      .description(
        'add a rule (the query is search syntax: words, "phrases", from:, to:, label:, before:, after:, -word)',
      ),
  )
    .option('--name <name>', 'a name to recognise it by')
    .option('--dry-run', 'only show what it would do to existing mail')
    .action(async (query: string, options: ActionOptions & { name?: string; dryRun?: boolean }) => {
      const actions = actionsOf(options);
      if (options.dryRun) {
        const { matches, scanned } = await client().call(RulesTest, { query, actions });
        console.log(`${matches.length} of ${scanned} messages read would match:`);
        for (const m of matches)
          console.log(`${m.date.slice(0, 10)}  ${m.from}  ${m.subject}  → ${m.would_change.join(', ') || 'no change'}`);
        return;
      }
      const { id } = await client().call(RulesAdd, { query, actions, ...(options.name ? { name: options.name } : {}) });
      console.log(`added rule ${id}`);
    });
  rules
    .command('list')
    .option('--json', 'print JSON')
    .action(async (options: { json?: boolean }) => {
      const { rules: list } = await client().call(RulesList, {});
      output(Boolean(options.json), list, () =>
        list.length === 0
          ? 'no rules'
          : list
              .map(
                (r) => `${r.id}  ${r.name || '-'}  "${r.query}"  ${JSON.stringify(r.actions)}  applied ${r.applied}×`,
              )
              .join('\n'),
      );
    });
  rules.command('remove <id>').action(async (id: string) => {
    await client().call(RulesRemove, { id });
    console.log(`removed rule ${id}`);
  });
}
