import path from 'node:path';
import pg from 'pg';
import { configEnv, REPO_ROOT, type MemexConfig } from '@memex/config';
import { ensureOwnerToken } from '@memex/gateway';
import { MemexClient } from '@memex/client';
import { JobsStatus } from '@memex/contracts';
import { freePort, makeServerTempDir, ProcessSupervisor, startPostgres, type PostgresHandle } from '@memex/stack';
import { createTestEnv, servicesReady, waitUntil, type TestEnv, type TestNatsOptions } from '@memex/testing';
import { generateMessages, writeMbox } from '@memex/ingest/testing';
import { spawnMemex, type ImportTarget } from './mbox-import.js';
import { snapshotSchema } from './snapshot.js';

/**
 * How many messages a fault test imports: its own count, sized for the suite's time in CI, or
 * MEMEX_FAULTS_MESSAGES when set (the 10,000, run by hand).
 */
export function faultsMessages(inCi: number): number {
  return Number(process.env.MEMEX_FAULTS_MESSAGES) || inCi;
}

/** What /healthz answers (the parts the fault tests read). */
export interface Health {
  status: string;
  log: { last_seq: number | null };
  failures: number;
  services: Array<{
    service: string;
    ready: boolean;
    projector?: { name: string; checkpoint: number; lag: number; failures: number };
    problems?: string[];
  }>;
}

/**
 * Every named service (the gateway too) as its own process under the supervisor `npm start`
 * uses, which restarts whatever exits: the stack the fault tests break.
 */
export interface SupervisedStack {
  env: TestEnv;
  config: MemexConfig;
  url: string;
  token: string;
  owner: MemexClient;
  supervisor: ProcessSupervisor;
  /** /healthz, or undefined while nothing answers it. */
  health(): Promise<Health | undefined>;
  /** SIGKILLs the service's process group; resolves once the supervisor has started it again. */
  kill(service: string): Promise<void>;
  /** Resolves once every service answers ready again. */
  ready(): Promise<void>;
  /** The service's process id now. */
  pid(service: string): number;
  /** Resolves once nothing moves: every projector at lag 0, no pipeline job left, the log still. */
  settled(timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
}

export async function startSupervisedStack(
  services: string[],
  overrides: Partial<MemexConfig> = {},
  nats: TestNatsOptions = {},
): Promise<SupervisedStack> {
  // A gateway restarted by the supervisor must come back where the clients look for it.
  const env = await createTestEnv(
    {
      services,
      port: await freePort(),
      grpcPort: await freePort(),
      rpcTimeoutMs: 15_000,
      ...overrides,
    },
    nats,
  );
  const config = env.config;
  const url = `http://127.0.0.1:${config.port}`;
  const token = ensureOwnerToken(config.home);
  const supervisor = new ProcessSupervisor({ output: process.stderr, restartDelayMs: 200, stopTimeoutMs: 5_000 });
  for (const name of services) {
    supervisor.add({
      name,
      command: process.execPath,
      args: [path.join(REPO_ROOT, 'services', name, 'dist', 'main.js')],
      env: { ...configEnv(config), NO_COLOR: '1' },
      cwd: REPO_ROOT,
    });
  }
  const owner = new MemexClient({ url, token });
  const pid = (service: string) => {
    const found = supervisor.status().find((s) => s.name === service);
    if (!found?.pid) throw new Error(`${service} is not running`);
    return found.pid;
  };
  const health = async (): Promise<Health | undefined> => {
    try {
      const reply = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(5_000) });
      return (await reply.json()) as Health;
    } catch {
      return undefined;
    }
  };
  const ready = () =>
    servicesReady(
      url,
      services.filter((s) => s !== 'gateway'),
      180_000,
    );
  await ready();
  return {
    env,
    config,
    url,
    token,
    owner,
    supervisor,
    health,
    pid,
    async kill(service) {
      const before = pid(service);
      const respawned = new Promise<void>((resolve) => {
        const onSpawn = (name: string) => {
          if (name !== service) return;
          supervisor.off('spawn', onSpawn);
          resolve();
        };
        supervisor.on('spawn', onSpawn);
      });
      process.kill(-before, 'SIGKILL');
      await respawned;
    },
    ready,
    async settled(timeoutMs = 600_000) {
      let last = -1;
      await waitUntil(
        async () => {
          const now = await health();
          if (now?.status !== 'ok' || now.log.last_seq === null) return false;
          if (now.services.some((s) => (s.projector?.lag ?? 0) > 0)) return false;
          if (services.includes('pipelines')) {
            const jobs = await owner.call(JobsStatus, {}).catch(() => undefined);
            if (!jobs || jobs.queues.some((q) => q.waiting + q.in_progress > 0)) return false;
          }
          const still = now.log.last_seq === last;
          last = now.log.last_seq;
          return still;
        },
        'the stack to settle (every projector caught up, no job left, the log still)',
        { timeoutMs, everyMs: 2_000 },
      );
    },
    async stop() {
      await supervisor.stop();
      await env.stop();
    },
  };
}

/**
 * `memex replay <service>` run as a user runs it, with the read model's rows before and after:
 * a live read model equals a fresh replay of the log when the two are the same.
 */
export async function replayAndCompare(
  stack: Pick<SupervisedStack, 'config' | 'url' | 'token'>,
  service: string,
  schema: string,
): Promise<{ live: Record<string, unknown[]>; replayed: Record<string, unknown[]>; output: string }> {
  const live = await snapshotSchema(stack.config.databaseUrl, schema);
  const run = await spawnMemex({ url: stack.url, token: stack.token, home: stack.config.home }, ['replay', service])
    .done;
  if (run.code !== 0) throw new Error(`memex replay ${service} failed (exit ${run.code}): ${run.stdout}${run.stderr}`);
  const replayed = await snapshotSchema(stack.config.databaseUrl, schema);
  return { live, replayed, output: run.stdout.trim() };
}

/** A generated archive of `messages` mails in the stack's home, and how `memex import` reaches the stack. */
export async function archiveFor(stack: SupervisedStack, messages: number, seed: number): Promise<ImportTarget> {
  const mbox = path.join(stack.config.home, 'archive.mbox');
  await writeMbox(mbox, generateMessages({ messages, seed }));
  return { url: stack.url, token: stack.token, home: stack.config.home, mbox };
}

/** A Postgres cluster of the test's own, to stop and start as a fault without taking any other test's database down. */
export interface OwnPostgres {
  /** The `postgres` database, with pgvector and pg_trgm: the same before and after a restart. */
  readonly url: string;
  stop(): Promise<void>;
  /** Starts it again on the same port and data after stop(). */
  start(): Promise<void>;
}

export async function startOwnPostgres(): Promise<OwnPostgres> {
  const dataDir = path.join(makeServerTempDir('memex-faults-pg-'), 'data');
  const port = await freePort();
  const start = () => startPostgres({ dataDir, port, database: 'postgres', detached: false });
  let handle: PostgresHandle | undefined = await start();
  const setup = new pg.Client({ connectionString: handle.url });
  await setup.connect();
  await setup.query('create extension if not exists vector; create extension if not exists pg_trgm');
  await setup.end();
  return {
    url: handle.url,
    async stop() {
      await handle?.stop();
      handle = undefined;
    },
    async start() {
      handle = await start();
    },
  };
}
