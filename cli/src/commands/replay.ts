import type { Command } from 'commander';
import { AdminReplay, ServiceNames, type ResultOf, type ServiceName } from '@memex/contracts';
import { client, output } from '../context.js';

export function registerReplay(program: Command): void {
  program
    .command('replay <projector>')
    .description(`rebuild a read model from the log beside the live one, then switch (${ServiceNames.join(', ')})`)
    .option('--json', 'print JSON')
    .action(async (projector: string, options: { json?: boolean }) => {
      if (!(ServiceNames as readonly string[]).includes(projector)) {
        throw new Error(`unknown projector "${projector}": one of ${ServiceNames.join(', ')}`);
      }
      const result = await client().call(AdminReplay, { projector: projector as ServiceName });
      output(
        Boolean(options.json),
        result,
        () =>
          `rebuilt ${result.projector}: ${result.events} events in ${result.seconds} s (${result.events_per_second} events/s), up to seq ${result.last_seq}; ${phasesText(result.phases)}`,
      );
    });
}

/** Where a replay's seconds went. */
function phasesText(phases: ResultOf<typeof AdminReplay>['phases']): string {
  return `bulk load ${phases.bulk_load} s, indexes built again ${phases.indexes} s, catch-up and switch ${phases.switch} s`;
}
