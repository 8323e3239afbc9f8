import type { Command } from 'commander';
import { JobsStatus, type ResultOf } from '@memex/contracts';
import { loadConfig } from '@memex/config';
import { client, gatewayUrl, output } from '../context.js';

interface Health {
  status: string;
  log: { last_seq: number | null };
  failures?: number;
  services: {
    service: string;
    ready: boolean;
    projector?: { checkpoint: number; lag: number; failures?: number };
    problems?: string[];
  }[];
}

const count = (n: number, one: string, many = `${one}s`) => `${n.toLocaleString('en-US')} ${n === 1 ? one : many}`;

const MEANING: Record<string, string> = {
  ok: 'ok',
  degraded: 'degraded: some events failed to project, so a read model misses data',
  starting: 'starting: not every service answers yet',
  down: 'down: a service stopped answering (below)',
};

/**
 * What a person needs: is each service up, is it caught up with the log (how many events behind,
 * not the projector's internal position), did any event fail, and how much embedding work waits.
 */
export function statusText(url: string, health: Health, backlog?: ResultOf<typeof JobsStatus>): string {
  const width = Math.max(...health.services.map((s) => s.service.length));
  const lines = [
    `memex at ${url}: ${health.status === 'degraded' && !health.failures ? 'degraded: a service needs you (below)' : (MEANING[health.status] ?? health.status)}`,
    `log: ${health.log.last_seq === null ? 'not reachable' : count(health.log.last_seq, 'event')}`,
    ...health.services.map((s) => {
      const failed = s.projector?.failures ?? 0;
      // A silent service's lag comes from the log (the gateway reads its consumer), so it shows too.
      const state = !s.ready
        ? ['not answering', ...(s.projector?.lag ? [`${count(s.projector.lag, 'event')} behind`] : [])].join(', ')
        : [
            'up',
            ...(s.projector
              ? [s.projector.lag === 0 ? 'up to date' : `${count(s.projector.lag, 'event')} behind`]
              : []),
            ...(failed > 0 ? [`${count(failed, 'event')} failed to project`] : []),
          ].join(', ');
      return `  ${s.ready && failed === 0 && !s.problems?.length ? '✓' : '✗'} ${s.service.padEnd(width)}  ${state}`;
    }),
    ...health.services.flatMap((s) => (s.problems ?? []).map((problem) => `  ! ${s.service}: ${problem}`)),
  ];
  if (backlog) {
    const waiting = backlog.queues.reduce((sum, q) => sum + q.waiting, 0);
    const running = backlog.queues.reduce((sum, q) => sum + q.in_progress, 0);
    lines.push(
      `pipelines backlog: ${waiting + running === 0 ? 'none' : `${count(waiting, 'job')} waiting, ${running.toLocaleString('en-US')} in progress (memex jobs)`}`,
    );
  }
  if (health.failures)
    lines.push('events failed to project: `memex failures` shows them, `memex failures retry` applies them again');
  return lines.join('\n');
}

export function registerStatus(program: Command): void {
  program
    .command('status')
    .description('each service up or not, how far behind the log, events that failed, the pipelines backlog')
    .option('--json', 'print JSON')
    .action(async (options: { json?: boolean }) => {
      const url = gatewayUrl(loadConfig());
      const response = await fetch(`${url}/healthz`).catch(() => {
        throw new Error(`no gateway at ${url}: start it with npm start`);
      });
      const health = (await response.json()) as Health;
      // The backlog is the owner's to see; an agent's token (or pipelines down) leaves it out.
      const pipelinesUp = health.services.some((s) => s.service === 'pipelines' && s.ready);
      const backlog = pipelinesUp
        ? await client()
            .call(JobsStatus, {})
            .catch(() => undefined)
        : undefined;
      output(Boolean(options.json), { ...health, ...(backlog ? { backlog } : {}) }, () =>
        statusText(url, health, backlog),
      );
      if (response.status !== 200 || health.status !== 'ok') process.exitCode = 1;
    });
}
