import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** Everything a memex process reads from its environment, typed and defaulted in one place. */
export interface MemexConfig {
  /** Data directory: local Postgres and NATS data, blobs, logs, the owner token. */
  home: string;
  /** Gateway HTTP address. */
  host: string;
  port: number;
  /** Gateway gRPC port. */
  grpcPort: number;
  natsUrl: string;
  /** Port of the project's own NATS server (local stack only). */
  natsPort: number;
  databaseUrl: string;
  /** Port of the project's own Postgres server (local stack only). */
  pgPort: number;
  blobsDir: string;
  /** How long a query with `min_seq` waits for its read model before answering `timeout`. */
  minSeqTimeoutMs: number;
  /** How long the gateway waits for a service to answer a request. */
  rpcTimeoutMs: number;
  /** OTLP/HTTP traces endpoint; unset means traces stay in-process (still propagated). */
  otlpEndpoint: string | undefined;
  logLevel: 'debug' | 'info' | 'warn' | 'error';
  /** Services the stack runs and /healthz waits for (MEMEX_SERVICES, comma-separated). */
  services: string[];
}

/** Every service that has something to do today; `memex stack up` starts these. */
export const DEFAULT_SERVICES = [
  'gateway',
  'ingest',
  'pipelines',
  'search',
  'graph',
  'insights',
  'media',
  'mail-sync',
  'calendar-sync',
  'head',
  'sources',
];

/** The repository root, when running from a checkout (…/libs/config/dist/index.js). */
export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

export class ConfigError extends Error {}

function int(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0)
    throw new ConfigError(`${name} must be a non-negative integer, got "${raw}"`);
  return value;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): MemexConfig {
  const home = path.resolve(env.MEMEX_HOME || path.join(REPO_ROOT, '.memex'));
  const natsPort = int(env, 'MEMEX_NATS_PORT', 7422);
  const pgPort = int(env, 'MEMEX_PG_PORT', 7432);
  const logLevel = (env.MEMEX_LOG_LEVEL || 'info') as MemexConfig['logLevel'];
  if (!['debug', 'info', 'warn', 'error'].includes(logLevel)) {
    throw new ConfigError(`MEMEX_LOG_LEVEL must be debug, info, warn or error, got "${logLevel}"`);
  }
  return {
    home,
    host: env.MEMEX_HOST || '127.0.0.1',
    port: int(env, 'MEMEX_PORT', 7777),
    grpcPort: int(env, 'MEMEX_GRPC_PORT', 7778),
    natsUrl: env.MEMEX_NATS_URL || `nats://127.0.0.1:${natsPort}`,
    natsPort,
    databaseUrl: env.MEMEX_DATABASE_URL || `postgres://postgres@127.0.0.1:${pgPort}/memex`,
    pgPort,
    blobsDir: path.resolve(env.MEMEX_BLOBS_DIR || path.join(home, 'blobs')),
    minSeqTimeoutMs: int(env, 'MEMEX_MIN_SEQ_TIMEOUT_MS', 5000),
    rpcTimeoutMs: int(env, 'MEMEX_RPC_TIMEOUT_MS', 30000),
    otlpEndpoint: env.OTEL_EXPORTER_OTLP_ENDPOINT || undefined,
    logLevel,
    services: env.MEMEX_SERVICES
      ? env.MEMEX_SERVICES.split(',')
          .map((s) => s.trim())
          .filter(Boolean)
      : DEFAULT_SERVICES,
  };
}

/** The environment under which `loadConfig` gives back `config` (to start a service process with it). */
export function configEnv(config: MemexConfig): Record<string, string> {
  return {
    MEMEX_HOME: config.home,
    MEMEX_HOST: config.host,
    MEMEX_PORT: String(config.port),
    MEMEX_GRPC_PORT: String(config.grpcPort),
    MEMEX_NATS_URL: config.natsUrl,
    MEMEX_NATS_PORT: String(config.natsPort),
    MEMEX_DATABASE_URL: config.databaseUrl,
    MEMEX_PG_PORT: String(config.pgPort),
    MEMEX_BLOBS_DIR: config.blobsDir,
    MEMEX_MIN_SEQ_TIMEOUT_MS: String(config.minSeqTimeoutMs),
    MEMEX_RPC_TIMEOUT_MS: String(config.rpcTimeoutMs),
    ...(config.otlpEndpoint ? { OTEL_EXPORTER_OTLP_ENDPOINT: config.otlpEndpoint } : {}),
    MEMEX_LOG_LEVEL: config.logLevel,
    MEMEX_SERVICES: config.services.join(','),
  };
}
