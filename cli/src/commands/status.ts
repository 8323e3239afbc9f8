import type { Command } from 'commander';
import { loadConfig } from '@memex/config';
import { gatewayUrl, output } from '../context.js';

export function registerStatus(program: Command): void {
  program
    .command('status')
    .description("the gateway's /healthz: each service and the log's last sequence")
    .option('--json', 'print JSON')
    .action(async (options: { json?: boolean }) => {
      const url = gatewayUrl(loadConfig());
      const response = await fetch(`${url}/healthz`).catch(() => {
        throw new Error(`no gateway at ${url}: start it with npm start`);
      });
      const body = (await response.json()) as {
        status: string;
        log: { last_seq: number | null };
        services: { service: string; ready: boolean; projector?: { checkpoint: number; lag: number } }[];
      };
      output(Boolean(options.json), body, () =>
        [
          `${body.status} at ${url}, log at seq ${body.log.last_seq ?? '?'}`,
          ...body.services.map(
            (s) =>
              `  ${s.ready ? '✓' : '✗'} ${s.service}${s.projector ? `  applied ${s.projector.checkpoint}, lag ${s.projector.lag}` : ''}`,
          ),
        ].join('\n'),
      );
      if (response.status !== 200) process.exitCode = 1;
    });
}
