import type { Command } from 'commander';
import { CommitmentsList, CommitmentsSet, Rerun, Summarize, type ResultOf } from '@memex/contracts';
import { client, output } from '../context.js';

const TASKS = ['summary', 'topics', 'entities', 'commitments', 'claims'];
const STATUSES = ['open', 'done', 'dropped'] as const;

/** `memex rerun`, `memex summarize`, `memex commitments`: tiers 2 and 3 (seed §5, §5.1). */
export function registerUnderstanding(program: Command): void {
  program
    .command('rerun')
    .description(
      "re-run tier 2 with a registered chat model version (low priority); each output replaces only the same task's earlier one",
    )
    .requiredOption('--tier <n>', 'the tier (2)')
    .requiredOption('--model <NAME@VERSION>', 'a chat model from `memex models add URL --task …`')
    .option('--kind <kind>', 'only items of this kind (email, document, paper…)')
    .option('--since <date>', 'only items that happened from this date on')
    .option('--tasks <list>', `comma-separated, of ${TASKS.join(', ')} (default: all the model serves)`)
    .option('--dry-run', 'estimate jobs, tokens and cost against the budget; queue nothing')
    .option('--json', 'print JSON')
    .action(
      async (options: {
        tier: string;
        model: string;
        kind?: string;
        since?: string;
        tasks?: string;
        dryRun?: boolean;
        json?: boolean;
      }) => {
        if (options.tier !== '2')
          throw new Error(
            `only tier 2 can be re-run (tier 0 re-runs with its rules' version), got --tier ${options.tier}`,
          );
        const since = options.since ? new Date(options.since) : undefined;
        if (since && Number.isNaN(since.getTime())) throw new Error(`--since "${options.since}" is not a date`);
        const tasks = options.tasks?.split(',').map((t) => t.trim());
        const unknown = tasks?.filter((t) => !TASKS.includes(t)) ?? [];
        if (unknown.length > 0) throw new Error(`unknown task ${unknown.join(', ')}; tasks are ${TASKS.join(', ')}`);
        const result = await client().call(Rerun, {
          tier: 2,
          model: options.model,
          ...(options.kind ? { kind: options.kind } : {}),
          ...(since ? { since: since.toISOString() } : {}),
          ...(tasks ? { tasks: tasks as Array<'summary'> } : {}),
          ...(options.dryRun ? { dry_run: true } : {}),
        });
        output(Boolean(options.json), result, () => rerunText(result));
      },
    );
  program
    .command('summarize <thing>')
    .description('what the memex knows about a thing (topic:…, project:…, person:…), every sentence citing its items')
    .option('--budget <bytes>', 'bytes of the brief the model reads', '8192')
    .option('--json', 'print JSON')
    .action(async (thing: string, options: { budget: string; json?: boolean }) => {
      const result = await client().call(Summarize, { thing, budget_bytes: Number(options.budget) });
      output(Boolean(options.json), result, () =>
        [
          ...result.sentences.map((s) => `${s.text} [${s.sources.map((id) => `item:${id}`).join(', ')}]`),
          `— ${result.made_by}${result.dropped ? `; ${result.dropped} sentence(s) without a source left out` : ''}`,
        ].join('\n'),
      );
    });
  const commitments = program.command('commitments').description('who promised what to whom, by when');
  commitments
    .command('list', { isDefault: true })
    .description('commitments, due first')
    .option('--status <status>', STATUSES.join(' | '))
    .option('--json', 'print JSON')
    .action(async (options: { status?: string; json?: boolean }) => {
      if (options.status && !STATUSES.includes(options.status as 'open'))
        throw new Error(`--status must be ${STATUSES.join(', ')}, got "${options.status}"`);
      const result = await client().call(CommitmentsList, options.status ? { status: options.status as 'open' } : {});
      output(
        Boolean(options.json),
        result,
        () =>
          result.commitments
            .map((c) => {
              const who = c.by.map((p) => p.name ?? p.address).join(', ') || 'someone';
              const to = c.to.length > 0 ? ` to ${c.to.map((p) => p.name ?? p.address).join(', ')}` : '';
              return `${c.id}  [${c.status}] ${who}: ${c.what}${to}${c.due ? ` by ${c.due}` : ''}  (item:${c.item_id}, ${c.made_by})`;
            })
            .join('\n') || 'no commitments',
      );
    });
  commitments
    .command('set <id> <status>')
    .description(`mark a commitment ${STATUSES.join(', ')} (kept when its maker is re-run)`)
    .action(async (id: string, status: string) => {
      if (!STATUSES.includes(status as 'open'))
        throw new Error(`status must be ${STATUSES.join(', ')}, got "${status}"`);
      await client().call(CommitmentsSet, { id, status: status as 'open' });
      console.log(`commitment ${id} is ${status}`);
    });
}

/** What `memex rerun` prints: the jobs, the estimate and what the budget leaves. */
export function rerunText(result: ResultOf<typeof Rerun>): string {
  const left = [
    result.budget.tokens_left_today !== null ? `${result.budget.tokens_left_today} tokens` : '',
    result.budget.cost_left_today !== null ? `${result.budget.cost_left_today.toFixed(2)} cost` : '',
  ].filter(Boolean);
  return [
    `${result.rerun_id ? `queued re-run ${result.rerun_id}: ` : 'would queue '}${result.jobs} task runs, about ${result.tokens} tokens, cost ${result.cost.toFixed(2)}`,
    `budget left today: ${left.join(', ') || 'no daily limit'}; ${result.budget.days} day(s) at the daily limits`,
    ...(result.rerun_id ? ['progress: `memex jobs`'] : []),
  ].join('\n');
}
