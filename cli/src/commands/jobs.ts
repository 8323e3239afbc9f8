import type { Command } from 'commander';
import { JobsFailed, JobsRetry, JobsStatus, type ResultOf } from '@memex/contracts';
import { client, listLimitOption, output, seqsOption } from '../context.js';

/** `memex jobs`: the pipelines backlog; `jobs failed` and `jobs retry`: the jobs set aside after their retries. */
export function registerJobs(program: Command): void {
  const jobs = program
    .command('jobs')
    .description('the pipelines backlog by priority, jobs that failed, and tier 2')
    .option('--json', 'print JSON')
    .action(async (options: { json?: boolean }) => {
      const status = await client().call(JobsStatus, {});
      output(Boolean(options.json), status, () => jobsText(status));
    });
  jobs
    .command('failed')
    .description('jobs that failed every retry and were set aside, with why (their items miss passages or vectors)')
    .option('--limit <n>', 'list at most this many', '100')
    .option('--json', 'print JSON')
    .action(async (options: { limit: string; json?: boolean }) => {
      const failed = await client().call(JobsFailed, { limit: listLimitOption(options.limit) });
      output(Boolean(options.json), failed, () => failedText(failed));
      if (failed.total > 0) process.exitCode = 1;
    });
  jobs
    .command('retry')
    .description('queue the failed jobs again (after a fix); one that fails again is set aside again')
    .option('--seq <seqs...>', 'only these (the seq `memex jobs failed` shows)')
    .option('--json', 'print JSON')
    .action(async (options: { seq?: string[]; json?: boolean }) => {
      const seqs = seqsOption(options.seq, "a job's seq");
      const result = await client().call(JobsRetry, seqs ? { seqs } : {});
      output(Boolean(options.json), result, () =>
        [
          `queued ${result.retried.length} failed job(s) again; \`memex jobs\` shows them run`,
          ...(result.gone.length > 0 ? [`not failed jobs (retried already?): ${result.gone.join(', ')}`] : []),
        ].join('\n'),
      );
    });
}

export function jobsText(status: ResultOf<typeof JobsStatus>): string {
  return [
    ...status.queues.map((q) => `${q.priority.padEnd(10)} ${q.waiting} waiting, ${q.in_progress} in progress`),
    ...(status.failed > 0
      ? [`failed     ${status.failed} set aside after every retry: memex jobs failed, memex jobs retry`]
      : []),
    `${status.workers} workers in the answering process`,
    ...tier2Lines(status.tier2),
  ].join('\n');
}

export function failedText(failed: ResultOf<typeof JobsFailed>): string {
  if (failed.total === 0) return 'no failed jobs';
  return [
    `${failed.total} job(s) failed every retry and were set aside; after a fix, run: memex jobs retry`,
    ...failed.jobs.map(
      (j) =>
        `  seq ${j.seq} ${j.task}${j.item_id ? ` of item ${j.item_id}` : ''} (${j.priority}) at ${j.failed_at}, ${j.attempts} attempts, worker ${j.worker}\n    ${j.reason}`,
    ),
    ...(failed.jobs.length < failed.total ? [`  … and ${failed.total - failed.jobs.length} more (--limit)`] : []),
  ].join('\n');
}

/** Tier 2 in `memex jobs`: its backlog, each chat model's spend against its budget, re-runs. */
export function tier2Lines(tier2: ResultOf<typeof JobsStatus>['tier2']): string[] {
  if (!tier2 || tier2.models.length === 0) return [];
  return [
    `tier 2     ${tier2.waiting} waiting, ${tier2.in_progress} in progress, ${tier2.done} done, ${tier2.failed} failed${tier2.last_failure ? ` (last: ${tier2.last_failure})` : ''}`,
    ...tier2.models.map((m) => {
      const limits = [
        m.budget.requests_per_minute !== undefined ? `${m.budget.requests_per_minute} req/min` : '',
        m.budget.tokens_per_day !== undefined ? `${m.budget.tokens_per_day} tokens/day` : '',
        m.budget.cost_per_day !== undefined ? `${m.budget.cost_per_day} cost/day` : '',
      ].filter(Boolean);
      const paused = m.paused_until ? `; PAUSED until ${m.paused_until}: ${m.paused_because}` : '';
      return `  ${m.model} (${m.tasks.join(', ')}): today ${m.spent_today.requests} requests, ${m.spent_today.tokens} tokens, cost ${m.spent_today.cost.toFixed(2)}; budget ${limits.join(', ') || 'none'}${paused}`;
    }),
    ...tier2.reruns.map(
      (r) => `  re-run ${r.rerun_id} with ${r.model}: ${r.done + r.failed}/${r.jobs} (${r.failed} failed)`,
    ),
  ];
}
