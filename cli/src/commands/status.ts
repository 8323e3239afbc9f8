import type { Command } from 'commander';
import { loadConfig } from '@memex/config';
import { gatewayUrl, output } from '../context.js';

export function registerStatus(program: Command): void {
  program
    .command('status')
    .description("the gateway's /healthz: each service, the log's last sequence and events that failed to project")
    .option('--json', 'print JSON')
    .action(async (options: { json?: boolean }) => {
      const url = gatewayUrl(loadConfig());
      const response = await fetch(`${url}/healthz`).catch(() => {
        throw new Error(`no gateway at ${url}: start it with npm start`);
      });
      const body = (await response.json()) as {
        status: string;
        log: { last_seq: number | null };
        failures?: number;
        services: { service: string; ready: boolean; projector?: { checkpoint: number; lag: number; failures?: number } }[];
      };
      const failed = (s: (typeof body.services)[number]) => (s.projector?.failures ?? 0) > 0;
      output(Boolean(options.json), body, () =>
        [
          `${body.status} at ${url}, log at seq ${body.log.last_seq ?? '?'}`,
          ...body.services.map(
            (s) =>
              `  ${s.ready && !failed(s) ? '✓' : '✗'} ${s.service}${s.projector ? `  applied ${s.projector.checkpoint}, lag ${s.projector.lag}` : ''}` +
              (failed(s) ? `, ${s.projector!.failures} failed event(s)` : ''),
          ),
          ...(body.failures ? [`  events failed to project: memex failures shows them, memex failures retry applies them again`] : []),
        ].join('\n'),
      );
      if (response.status !== 200 || body.status !== 'ok') process.exitCode = 1;
    });
}
