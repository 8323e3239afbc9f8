import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { loadConfig, type MemexConfig } from '@memex/config';
import {
  freePort,
  startNats,
  startPostgres,
  type NatsHandle,
  type NatsOptions,
  type PostgresHandle,
} from '@memex/stack';

/** One test's world: its own database, its own NATS with JetStream, its own home and blobs. */
export interface TestEnv {
  config: MemexConfig;
  home: string;
  /** Restart NATS on the same port and store (e.g. after killing it). */
  restartNats(): Promise<void>;
  stop(): Promise<void>;
}

let sharedPostgres: Promise<{ adminUrl: string; stop?: () => Promise<void> }> | undefined;
let durable = false;

/**
 * The process's own Postgres (when `npm test` gives none) writes durably from now on, as the
 * stack's does (fsync, full-page writes, commits waiting for the disk): a bench measures what
 * `npm start` runs. Tests start theirs without, which is faster.
 */
export function durablePostgres(): void {
  if (sharedPostgres) throw new Error('durablePostgres() comes before the first test environment');
  durable = true;
}

/** The run's Postgres (from `npm test`), or one of our own when a test file runs alone. */
function postgres(): Promise<{ adminUrl: string }> {
  sharedPostgres ??= (async () => {
    if (process.env.MEMEX_TEST_PG_URL) return { adminUrl: process.env.MEMEX_TEST_PG_URL };
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'memex-test-pg-'));
    fs.chmodSync(dir, 0o755);
    const handle: PostgresHandle = await startPostgres({
      dataDir: path.join(dir, 'data'),
      port: await freePort(),
      database: 'postgres',
      detached: false,
      durable,
    });
    process.once('exit', () => void handle.stop());
    return { adminUrl: handle.url, stop: () => handle.stop() };
  })();
  return sharedPostgres;
}

function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

/** The NATS server's own settings a test may change (a monitor port, short pings). */
export type TestNatsOptions = Pick<NatsOptions, 'monitorPort' | 'ping'>;

export async function createTestEnv(
  overrides: Partial<MemexConfig> = {},
  natsOptions: TestNatsOptions = {},
): Promise<TestEnv> {
  const { adminUrl } = await postgres();
  const database = `t_${process.pid}_${Math.random().toString(36).slice(2, 10)}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`create database ${database}`);
  await admin.end();
  const databaseUrl = withDatabase(adminUrl, database);
  const setup = new pg.Client({ connectionString: databaseUrl });
  await setup.connect();
  await setup.query('create extension if not exists vector; create extension if not exists pg_trgm');
  await setup.end();

  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'memex-test-home-'));
  const natsPort = await freePort();
  const storeDir = path.join(home, 'nats');
  const startOwnNats = () => startNats({ ...natsOptions, storeDir, port: natsPort, detached: false });
  let nats: NatsHandle = await startOwnNats();
  const config: MemexConfig = {
    ...loadConfig({ MEMEX_HOME: home }),
    natsUrl: nats.url,
    natsPort,
    databaseUrl,
    port: 0,
    grpcPort: 0,
    minSeqTimeoutMs: 10_000,
    // A file that goes from a watched folder takes its item at once; the grace has tests of its own.
    goneGraceSeconds: 0,
    ...overrides,
  };
  return {
    config,
    home,
    async restartNats() {
      await nats.stop();
      nats = await startOwnNats();
    },
    async stop() {
      await nats.stop();
      const cleanup = new pg.Client({ connectionString: adminUrl });
      await cleanup.connect();
      await cleanup.query(`drop database if exists ${database} with (force)`);
      await cleanup.end();
      fs.rmSync(home, { recursive: true, force: true });
    },
  };
}
