import type { Command } from 'commander';
import { AdminFailures, AdminFailuresRetry, ServiceNames, type ResultOf, type ServiceName } from '@memex/contracts';
import { client, output, seqsOption } from '../context.js';

type Failure = ResultOf<typeof AdminFailures>['failures'][number];

function projectorOption(value: string | undefined): ServiceName | undefined {
  if (value === undefined) return undefined;
  if (!(ServiceNames as readonly string[]).includes(value))
    throw new Error(`unknown projector "${value}": one of ${ServiceNames.join(', ')}`);
  return value as ServiceName;
}

function describe(failure: Failure): string {
  const tries = failure.attempts > 1 ? `, ${failure.attempts} attempts` : '';
  return `  ${failure.projector} seq ${failure.seq} ${failure.event_type}${failure.subject ? ` (${failure.subject})` : ''} at ${failure.failed_at}${tries}\n    ${failure.error}`;
}

/** `memex failures`: events a projector recorded as failed and skipped; `memex failures retry` applies them again. */
export function registerFailures(program: Command): void {
  const failures = program
    .command('failures')
    .description('events the read models failed to apply (their data is missing until retried), with the reason')
    .option('--projector <service>', `only this service's projector (${ServiceNames.join(', ')})`)
    .option('--json', 'print JSON')
    .action(async (options: { projector?: string; json?: boolean }) => {
      const projector = projectorOption(options.projector);
      const result = await client().call(AdminFailures, projector ? { projector } : {});
      output(Boolean(options.json), result, () =>
        result.failures.length === 0
          ? 'no failed events'
          : [
              `${result.failures.length} failed event(s); after a fix, run: memex failures retry`,
              ...result.failures.map(describe),
            ].join('\n'),
      );
      if (result.failures.length > 0) process.exitCode = 1;
    });
  failures
    .command('retry')
    .description('apply the failed events again (after a fix); what still fails stays listed with the new reason')
    .option('--projector <service>', 'only this service’s projector')
    .option('--seq <seqs...>', 'only these sequences')
    .option('--json', 'print JSON')
    .action(async (options: { projector?: string; seq?: string[]; json?: boolean }) => {
      const projector = projectorOption(options.projector);
      const seqs = seqsOption(options.seq, 'a log sequence');
      const result = await client().call(AdminFailuresRetry, {
        ...(projector ? { projector } : {}),
        ...(seqs ? { seqs } : {}),
      });
      const still = result.results.flatMap((r) => r.failing);
      output(
        Boolean(options.json),
        result,
        () =>
          [
            ...result.results
              .filter((r) => r.retried > 0)
              .map(
                (r) =>
                  `${r.projector}: retried ${r.retried}, applied ${r.fixed.length}, gone from the log ${r.gone.length}, still failing ${r.failing.length}`,
              ),
            ...(still.length > 0 ? ['still failing:', ...still.map(describe)] : []),
          ].join('\n') || 'no failed events',
      );
      if (still.length > 0) process.exitCode = 1;
    });
}
