import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
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
  /**
   * Events the slowest projector may fall behind the log before memex.ingest refuses new items as
   * `unavailable` (HTTP 503, Retry-After; clients send them again): a client faster than the
   * read models waits instead of running the log ever further ahead. 0 turns the check off.
   */
  ingestMaxLag: number;
  /**
   * How long an item whose file (or mail message) went from a watched folder is kept before it is
   * deleted, in case the file comes back or turns up elsewhere in the folder: a sync tool moving
   * mail between folders may delete it here before it writes it there. 0 deletes it at once.
   */
  goneGraceSeconds: number;
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

/** The token of the local stack's NATS, under MEMEX_HOME (written at the first `memex stack up`, 0600). */
export const natsTokenFile = (home: string) => path.join(home, 'nats-token');

/** The local NATS's token: read from MEMEX_HOME, made there the first time (a worker elsewhere joins this bus). */
export function ensureNatsToken(home: string): string {
  const existing = readNatsToken(home);
  if (existing) return existing;
  mkdirSync(home, { recursive: true });
  const token = randomBytes(24).toString('base64url');
  writeFileSync(natsTokenFile(home), `${token}\n`, { mode: 0o600 });
  return token;
}

function readNatsToken(home: string): string | undefined {
  try {
    return readFileSync(natsTokenFile(home), 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
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
    natsUrl: env.MEMEX_NATS_URL || localNatsUrl(home, natsPort),
    natsPort,
    databaseUrl: env.MEMEX_DATABASE_URL || `postgres://postgres@127.0.0.1:${pgPort}/memex`,
    pgPort,
    blobsDir: path.resolve(env.MEMEX_BLOBS_DIR || path.join(home, 'blobs')),
    minSeqTimeoutMs: int(env, 'MEMEX_MIN_SEQ_TIMEOUT_MS', 5000),
    rpcTimeoutMs: int(env, 'MEMEX_RPC_TIMEOUT_MS', 30000),
    ingestMaxLag: int(env, 'MEMEX_INGEST_MAX_LAG', 50_000),
    goneGraceSeconds: int(env, 'MEMEX_SOURCES_GONE_GRACE_SECONDS', 60),
    otlpEndpoint: env.OTEL_EXPORTER_OTLP_ENDPOINT || undefined,
    logLevel,
    services: env.MEMEX_SERVICES
      ? env.MEMEX_SERVICES.split(',')
          .map((s) => s.trim())
          .filter(Boolean)
      : DEFAULT_SERVICES,
  };
}

/** The local stack's NATS, with its token when MEMEX_HOME has one (nats://<token>@127.0.0.1:<port>). */
function localNatsUrl(home: string, port: number): string {
  const token = readNatsToken(home);
  return `nats://${token ? `${encodeURIComponent(token)}@` : ''}127.0.0.1:${port}`;
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
    MEMEX_INGEST_MAX_LAG: String(config.ingestMaxLag),
    MEMEX_SOURCES_GONE_GRACE_SECONDS: String(config.goneGraceSeconds),
    ...(config.otlpEndpoint ? { OTEL_EXPORTER_OTLP_ENDPOINT: config.otlpEndpoint } : {}),
    MEMEX_LOG_LEVEL: config.logLevel,
    MEMEX_SERVICES: config.services.join(','),
  };
}
