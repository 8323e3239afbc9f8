import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { appendFileSync, closeSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { assertPortFree } from './ports.js';
import { findExecutable, isAlive, processCommandLine, runChecked, tail, terminate, waitForExit } from './process.js';
import { postgresServerUser, prepareServerDir, type ServerUser } from './server-user.js';

export interface PostgresBinaries {
  /** Directory holding initdb, postgres, pg_ctl. */
  bindir: string;
  /** Major version, e.g. 15. */
  version: number;
}

const INSTALL_HINT =
  'Install the PostgreSQL server (Debian/Ubuntu: deploy/local/provision.sh, or apt-get install postgresql) ' +
  'or put its pg_config on PATH.';

function hasServer(bindir: string): boolean {
  return existsSync(path.join(bindir, 'initdb')) && existsSync(path.join(bindir, 'postgres'));
}

/**
 * The PostgreSQL server binaries: `pg_config --bindir` when that directory has a server,
 * else the highest /usr/lib/postgresql/<major>/bin (Debian/Ubuntu layout, not on PATH).
 */
export function findPostgresBinaries(): PostgresBinaries {
  const candidates: string[] = [];
  const pgConfig = findExecutable('pg_config');
  if (pgConfig) {
    try {
      candidates.push(execFileSync(pgConfig, ['--bindir'], { encoding: 'utf8' }).trim());
    } catch {
      // a broken pg_config is no worse than none
    }
  }
  const debianRoot = '/usr/lib/postgresql';
  if (existsSync(debianRoot)) {
    const majors = readdirSync(debianRoot)
      .filter((v) => /^\d+$/.test(v))
      .sort((a, b) => Number(b) - Number(a));
    candidates.push(...majors.map((v) => path.join(debianRoot, v, 'bin')));
  }
  const bindir = candidates.find(hasServer);
  if (!bindir) {
    throw new Error(`PostgreSQL server binaries (initdb, postgres) not found. ${INSTALL_HINT}`);
  }
  const banner = execFileSync(path.join(bindir, 'postgres'), ['--version'], { encoding: 'utf8' });
  const match = /\(PostgreSQL\)\s+(\d+)/.exec(banner);
  if (!match) throw new Error(`cannot read the PostgreSQL version from "${banner.trim()}" (${bindir}/postgres)`);
  const version = Number(match[1]);
  if (version < 15) {
    throw new Error(`PostgreSQL ${version} found in ${bindir}; Memex needs 15 or newer. ${INSTALL_HINT}`);
  }
  return { bindir, version };
}

export interface PostgresOptions {
  /** Cluster directory; created (initdb) on first use. */
  dataDir: string;
  port: number;
  host?: string;
  /** Database to create (if missing) with the vector and pg_trgm extensions. */
  database?: string;
  /** Server log file (appended). Default: `<dataDir>.log`. */
  log?: string;
  /**
   * true (default): the server gets its own session and outlives this process, so the next start
   * on the same data dir attaches to it. false: it stays in our process group (Ctrl-C reaches it)
   * and is stopped when this process exits, which suits test runs.
   */
  detached?: boolean;
  /** false turns fsync and synchronous commit off for throwaway test clusters. Default true. */
  durable?: boolean;
  /** How long to wait for the server to accept connections (crash recovery can take a while). */
  startTimeoutMs?: number;
}

export interface PostgresHandle {
  /** postgres://postgres@host:port/database (trust auth on loopback). */
  readonly url: string;
  readonly host: string;
  readonly port: number;
  readonly dataDir: string;
  readonly database: string;
  readonly pid: number;
  /** True when an already running server on this data dir was attached to instead of started. */
  readonly reused: boolean;
  readonly name: 'postgres';
  /** The signal that shuts it down quickly but cleanly (Postgres "fast" shutdown). */
  readonly stopSignal: NodeJS.Signals;
  /** The last resort when a backend hangs: immediate shutdown (crash recovery on next start). */
  readonly killSignal: NodeJS.Signals;
  /** Fast shutdown; resolves once the server has exited. */
  stop(): Promise<void>;
}

const SUPERUSER = 'postgres';

/** Settings written once at initdb into postgresql.conf (the operator may edit them later). */
const CLUSTER_SETTINGS = `
# --- Memex local stack (written once at initdb; edit freely) ---
max_connections = 200
shared_buffers = 128MB
work_mem = 16MB
# pgvector HNSW index builds are much faster when the graph fits in maintenance_work_mem.
maintenance_work_mem = 256MB
effective_cache_size = 512MB
max_wal_size = 1GB
fsync = on
synchronous_commit = on
timezone = 'UTC'
log_timezone = 'UTC'
`;

/** Per-start settings passed on the command line, so changing ports never rewrites the cluster's files. */
function startArgs(
  options: Required<Pick<PostgresOptions, 'dataDir' | 'port' | 'host' | 'durable'>>,
  socketDir: string | null,
): string[] {
  const settings: Record<string, string> = {
    port: String(options.port),
    listen_addresses: options.host,
    // Never the distribution's /var/run/postgresql; empty disables the socket (TCP only).
    unix_socket_directories: socketDir ?? '',
    // LZ4 for long values (mail bodies, extracted text) rather than pglz: a fifth of ingest's
    // Postgres time in a replay went to pglz compressing; LZ4 does it several times faster.
    default_toast_compression: 'lz4',
  };
  if (!options.durable) Object.assign(settings, { fsync: 'off', synchronous_commit: 'off', full_page_writes: 'off' });
  return ['-D', options.dataDir, ...Object.entries(settings).flatMap(([k, v]) => ['-c', `${k}=${v}`])];
}

/**
 * glibc's malloc settings for the server's processes (`GLIBC_TUNABLES`). A query that sorts many
 * rows takes tens of MB: an IVFFlat scan sorts every vector it reads, 120,000 at 10^6 passages.
 * By default glibc gives blocks that large back to the kernel when they are freed, so each such
 * query faults every page in again and unmaps them at its end: a third of a meaning search's
 * statement at 10^6 passages (57 ms against 40 with these, 5 December 2026). Blocks under 32 MB
 * come from the heap, and a backend keeps up to 64 MB of it free for its next query (larger
 * blocks, an index build's sort, still go back at once).
 */
const MALLOC_TUNABLES = { 'glibc.malloc.mmap_threshold': 32 << 20, 'glibc.malloc.trim_threshold': 64 << 20 };

/** `GLIBC_TUNABLES` for the server: `MALLOC_TUNABLES` beside the operator's own, which win where both set one. */
export function postgresTunables(operators: string | undefined): string {
  const own = (operators ?? '').split(':').filter(Boolean);
  const named = new Set(own.map((tunable) => tunable.split('=')[0]));
  const ours = Object.entries(MALLOC_TUNABLES)
    .filter(([name]) => !named.has(name))
    .map(([name, value]) => `${name}=${value}`);
  return [...ours, ...own].join(':');
}

/** A sibling of the data dir for the Unix socket, or null when its path would exceed the ~107-byte limit. */
function socketDirFor(dataDir: string, port: number): string | null {
  const dir = path.join(path.dirname(dataDir), 'run');
  return Buffer.byteLength(path.join(dir, `.s.PGSQL.${port}`)) < 100 ? dir : null;
}

function ctypeLocale(): string {
  try {
    const locales = execFileSync('locale', ['-a'], { encoding: 'utf8' }).split('\n');
    // pg_trgm and the full-text parser classify non-ASCII letters by LC_CTYPE: plain C would not.
    const utf8 = locales.find((l) => /^c\.utf-?8$/i.test(l.trim()));
    if (utf8) return utf8.trim();
  } catch {
    // no locale(1): fall back to C
  }
  return 'C';
}

async function initCluster(
  bindir: string,
  dataDir: string,
  user: ServerUser | undefined,
  durable: boolean,
): Promise<void> {
  await runChecked(
    path.join(bindir, 'initdb'),
    [
      '-D',
      dataDir,
      '-U',
      SUPERUSER,
      '-E',
      'UTF8',
      // Collation C: byte order, fast and identical on every machine; ctype UTF-8 for word rules.
      '--lc-collate=C',
      `--lc-ctype=${ctypeLocale()}`,
      // Trust is only granted on the lines initdb writes: local socket and loopback addresses.
      '--auth=trust',
      ...(durable ? [] : ['--no-sync']),
    ],
    { cwd: '/', uid: user?.uid, gid: user?.gid },
  );
  appendFileSync(path.join(dataDir, 'postgresql.conf'), CLUSTER_SETTINGS);
}

interface PidFile {
  pid: number;
  port: number;
  status: string;
}

/** postmaster.pid: pid, data dir, start time, port, socket dir, listen address, shmem key, status. */
function readPidFile(dataDir: string): PidFile | undefined {
  try {
    const lines = readFileSync(path.join(dataDir, 'postmaster.pid'), 'utf8').split('\n');
    return { pid: Number(lines[0]), port: Number(lines[3]), status: (lines[7] ?? '').trim() };
  } catch {
    return undefined;
  }
}

/** A live postmaster for this data dir, or undefined (no pid file, or a stale one). */
function runningPostmaster(dataDir: string): PidFile | undefined {
  const info = readPidFile(dataDir);
  if (!info || !Number.isInteger(info.pid) || info.pid <= 0 || !isAlive(info.pid)) return undefined;
  const cmdline = processCommandLine(info.pid);
  if (cmdline !== null && !/postgres|postmaster/.test(cmdline)) return undefined; // pid reused
  return info;
}

function client(host: string, port: number, database: string): pg.Client {
  return new pg.Client({ host, port, database, user: SUPERUSER, connectionTimeoutMillis: 2000 });
}

async function waitUntilAccepting(
  host: string,
  port: number,
  pid: number,
  log: string,
  timeoutMs: number,
  exited: () => boolean,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  while (Date.now() < deadline) {
    if (exited() || !isAlive(pid)) {
      throw new Error(`Postgres (pid ${pid}) exited during startup. Last lines of ${log}:\n${tail(log)}`);
    }
    const c = client(host, port, 'postgres');
    try {
      await c.connect();
      await c.end();
      return;
    } catch (err) {
      lastError = err;
      await c.end().catch(() => undefined);
      await sleep(100);
    }
  }
  throw new Error(
    `Postgres (pid ${pid}) did not accept connections on ${host}:${port} within ${timeoutMs} ms ` +
      `(${(lastError as Error | undefined)?.message}). Last lines of ${log}:\n${tail(log)}`,
  );
}

function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

async function connected(url: string): Promise<pg.Client> {
  const c = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 });
  try {
    await c.connect();
    return c;
  } catch (err) {
    await c.end().catch(() => undefined);
    throw err;
  }
}

/**
 * Makes the database at `url` ready for Memex: creates it when missing (through the server's
 * `postgres` database) and the vector and pg_trgm extensions in it. Schemas are the services'.
 * `missingVectorHint` says how to install pgvector on that server when it lacks it.
 */
export async function prepareDatabase(
  url: string,
  missingVectorHint = 'install pgvector on that server',
): Promise<void> {
  const where = new URL(url);
  const database = decodeURIComponent(where.pathname.slice(1));
  const db = await connected(url).catch(async (err: { code?: string }) => {
    if (err.code !== '3D000' || !database) throw err; // 3D000: database does not exist
    const adminUrl = new URL(url);
    adminUrl.pathname = '/postgres';
    const admin = await connected(adminUrl.href);
    try {
      await admin.query(`CREATE DATABASE ${quoteIdent(database)}`).catch((e: { code?: string }) => {
        if (e.code !== '42P04') throw e; // created concurrently
      });
    } finally {
      await admin.end();
    }
    return connected(url);
  });
  try {
    const available = await db.query(`SELECT name FROM pg_available_extensions WHERE name IN ('vector', 'pg_trgm')`);
    const names = new Set(available.rows.map((r: { name: string }) => r.name));
    const server = `${where.hostname}:${where.port || 5432}`;
    if (!names.has('vector'))
      throw new Error(`pgvector is not installed on the PostgreSQL server at ${server}: ${missingVectorHint}.`);
    if (!names.has('pg_trgm'))
      throw new Error(
        `the pg_trgm extension is missing on the PostgreSQL server at ${server} (install its contrib modules).`,
      );
    for (const ext of ['vector', 'pg_trgm']) {
      await db.query(`CREATE EXTENSION IF NOT EXISTS ${ext}`).catch((err: { code?: string }) => {
        if (err.code !== '23505') throw err; // created concurrently by another connection
      });
    }
  } finally {
    await db.end();
  }
}

/**
 * Starts (or attaches to) a Postgres cluster in `dataDir` listening on host:port, creates the
 * database with pgvector and pg_trgm, and resolves once it accepts connections.
 */
export async function startPostgres(options: PostgresOptions): Promise<PostgresHandle> {
  const dataDir = path.resolve(options.dataDir);
  const host = options.host ?? '127.0.0.1';
  const database = options.database ?? 'memex';
  const log = path.resolve(options.log ?? `${dataDir}.log`);
  const detached = options.detached ?? true;
  const durable = options.durable ?? true;
  const timeoutMs = options.startTimeoutMs ?? 120_000;
  const { port } = options;
  const { bindir } = findPostgresBinaries();

  let pid: number;
  let child: ChildProcess | undefined;
  const existing = runningPostmaster(dataDir);
  if (existing && existing.status !== 'stopping') {
    if (existing.port !== port) {
      throw new Error(
        `Postgres for ${dataDir} is already running (pid ${existing.pid}) on port ${existing.port}, not ${port}. ` +
          `Stop it first (memex stack down) or use port ${existing.port}.`,
      );
    }
    pid = existing.pid;
  } else {
    if (existing) await waitForExit(existing.pid, 60_000);
    await assertPortFree(host, port, `Postgres for ${dataDir}`, 'MEMEX_PG_PORT');
    const user = postgresServerUser();
    const fresh = !existsSync(path.join(dataDir, 'PG_VERSION'));
    prepareServerDir(dataDir, 0o700, user);
    const socketDir = socketDirFor(dataDir, port);
    if (socketDir) prepareServerDir(socketDir, 0o700, user);
    if (fresh) await initCluster(bindir, dataDir, user, durable);
    mkdirSync(path.dirname(log), { recursive: true });
    const logFd = openSync(log, 'a');
    try {
      child = spawn(path.join(bindir, 'postgres'), startArgs({ dataDir, port, host, durable }, socketDir), {
        cwd: '/',
        env: { ...process.env, GLIBC_TUNABLES: postgresTunables(process.env.GLIBC_TUNABLES) },
        detached,
        stdio: ['ignore', logFd, logFd],
        uid: user?.uid,
        gid: user?.gid,
      });
    } finally {
      closeSync(logFd);
    }
    if (child.pid === undefined) throw new Error(`could not start ${path.join(bindir, 'postgres')}`);
    pid = child.pid;
    child.on('error', () => undefined); // reported through the readiness wait below
    if (detached) child.unref();
    else {
      const started = child;
      process.once('exit', () => started.kill('SIGINT'));
    }
  }

  const spawned = child;
  await waitUntilAccepting(host, port, pid, log, timeoutMs, () => spawned !== undefined && spawned.exitCode !== null);
  const url = `postgres://${SUPERUSER}@${host}:${port}/${encodeURIComponent(database)}`;
  await prepareDatabase(
    url,
    `it has none for the server in ${bindir}; run deploy/local/provision.sh (installs postgresql-NN-pgvector, ` +
      `or builds Debian's pgvector source package against this server)`,
  );

  return {
    url,
    host,
    port,
    dataDir,
    database,
    pid,
    reused: child === undefined,
    name: 'postgres',
    stopSignal: 'SIGINT',
    killSignal: 'SIGQUIT',
    // Fast shutdown, then immediate shutdown (SIGQUIT) if a backend hangs.
    stop: () => terminate(pid, 'SIGINT', 60_000, 'SIGQUIT'),
  };
}
