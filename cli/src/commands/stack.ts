import fs from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { withoutCredentials } from '@memex/bus';
import { ensureNatsToken, loadConfig, REPO_ROOT } from '@memex/config';
import { ProcessSupervisor, stackPaths, startLocalServers, stopStack } from '@memex/stack';

const READY_TIMEOUT_MS = 120_000;

/** The compiled entry point of a service in this checkout. */
function serviceMain(name: string): string {
  const main = path.join(REPO_ROOT, 'services', name, 'dist', 'main.js');
  if (!fs.existsSync(main)) throw new Error(`${main} is missing: run \`npm run build\` (npm start does)`);
  return main;
}

async function waitUntilReady(url: string, supervisor: ProcessSupervisor): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  let last = '';
  while (Date.now() < deadline) {
    const response = await fetch(`${url}/healthz`).catch(() => undefined);
    if (response?.status === 200) return;
    if (response) {
      const body = (await response.json()) as { services: { service: string; ready: boolean }[] };
      last = body.services
        .filter((s) => !s.ready)
        .map((s) => s.service)
        .join(', ');
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  supervisor.log(
    `not ready after ${READY_TIMEOUT_MS / 1000} s${last ? `: waiting for ${last}` : ''}; see the logs above`,
  );
}

export function registerStack(program: Command): void {
  const stack = program.command('stack').description('run the whole memex on this machine');
  stack
    .command('up')
    .description('start Postgres+pgvector, NATS and every service; Ctrl-C stops them all')
    .action(async () => {
      const config = loadConfig();
      const paths = stackPaths(config.home);
      const servers = await startLocalServers({
        home: config.home,
        pgPort: config.pgPort,
        natsPort: config.natsPort,
        databaseUrl: process.env.MEMEX_DATABASE_URL || undefined,
        natsUrl: process.env.MEMEX_NATS_URL || undefined,
        // Every client of the local NATS gives this token (services get it in MEMEX_NATS_URL).
        natsToken: ensureNatsToken(config.home),
      });
      const url = `http://${config.host}:${config.port}`;
      const supervisor = new ProcessSupervisor({
        logDir: paths.logs,
        stateFile: paths.stateFile,
        info: {
          url,
          home: config.home,
          databaseUrl: servers.databaseUrl,
          // The state file is for reading; the token stays in nats-token.
          natsUrl: withoutCredentials(servers.natsUrl),
        },
      });
      for (const server of servers.servers) supervisor.addServer(server);
      supervisor.handleSignals();
      const env = {
        MEMEX_HOME: config.home,
        MEMEX_DATABASE_URL: servers.databaseUrl,
        MEMEX_NATS_URL: servers.natsUrl,
        MEMEX_SERVICES: config.services.join(','),
        // Service output goes through the supervisor's prefixes: colour codes only where a terminal shows them.
        ...(process.stdout.isTTY ? {} : { NO_COLOR: '1' }),
      };
      for (const name of config.services) {
        supervisor.add({ name, command: process.execPath, args: [serviceMain(name)], env, cwd: REPO_ROOT });
      }
      await waitUntilReady(url, supervisor);
      supervisor.log(`Memex is up at ${url} (owner token: ${paths.ownerToken}); Ctrl-C or \`npm stop\` stops it`);
    });
  stack
    .command('down')
    .description('stop a stack started by `memex stack up` (or npm start)')
    .action(async () => {
      const result = await stopStack(stackPaths(loadConfig().home).stateFile);
      console.log(
        result === 'stopped'
          ? 'stopped'
          : result === 'cleaned-up'
            ? 'the stack had exited; cleaned up after it'
            : 'no stack is running',
      );
    });
}
