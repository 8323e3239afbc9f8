import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { chmodSync, closeSync, mkdirSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { assertPortFree } from './ports.js';
import { findExecutable, isAlive, processCommandLine, tail, terminate } from './process.js';

export interface NatsBinary {
  path: string;
  /** e.g. "2.9.10" */
  version: string;
}

const SBIN_DIRS = ['/usr/sbin', '/usr/local/sbin', '/sbin'];
const MIN_VERSION = [2, 9];

/** nats-server on PATH or in an sbin directory (where Debian's package puts it), version 2.9 or newer. */
export function findNatsServer(): NatsBinary {
  const binary = findExecutable('nats-server', SBIN_DIRS);
  if (!binary) {
    throw new Error(
      'nats-server not found on PATH or in /usr/sbin. Install it (Debian/Ubuntu: deploy/local/provision.sh, ' +
        'or apt-get install nats-server; elsewhere https://github.com/nats-io/nats-server/releases).',
    );
  }
  const banner = execFileSync(binary, ['--version'], { encoding: 'utf8' });
  const match = /v?(\d+)\.(\d+)\.(\d+)/.exec(banner);
  if (!match) throw new Error(`cannot read the version of ${binary} from "${banner.trim()}"`);
  const [major, minor] = [Number(match[1]), Number(match[2])];
  if (major < MIN_VERSION[0]! || (major === MIN_VERSION[0] && minor < MIN_VERSION[1]!)) {
    throw new Error(
      `${binary} is version ${match[0]}; Memex needs nats-server ${MIN_VERSION.join('.')} or newer (JetStream).`,
    );
  }
  return { path: binary, version: `${match[1]}.${match[2]}.${match[3]}` };
}

export interface NatsOptions {
  /** JetStream store directory (JetStream keeps its files in <storeDir>/jetstream). */
  storeDir: string;
  port: number;
  host?: string;
  /** HTTP monitoring port (/healthz, /varz, /jsz); none by default. */
  monitorPort?: number;
  /** Server log file (appended). Default: `<storeDir>/nats-server.log`. */
  log?: string;
  /** As for Postgres: true (default) outlives this process and is reused by the next start. */
  detached?: boolean;
  startTimeoutMs?: number;
  /**
   * The token every client must give (`authorization { token }`): a worker on another machine
   * joins this bus, so it is not open to whoever reaches the port. None: no authorization.
   */
  token?: string;
  /**
   * How often the server pings a silent client, and how many unanswered pings close it as stale
   * (nats-server's defaults: 2 minutes, 2). Tests shorten them to reach a dropped client in seconds.
   */
  ping?: { intervalSeconds: number; max: number };
}

export interface NatsHandle {
  /** nats://host:port, with the token as its user part when the server has one (nats://<token>@host:port). */
  readonly url: string;
  readonly host: string;
  readonly port: number;
  readonly monitorPort: number | undefined;
  readonly storeDir: string;
  readonly pid: number;
  readonly reused: boolean;
  readonly name: 'nats';
  readonly stopSignal: NodeJS.Signals;
  readonly killSignal: NodeJS.Signals;
  stop(): Promise<void>;
}

const configFile = (storeDir: string) => path.join(storeDir, 'nats-server.conf');
const pidFile = (storeDir: string) => path.join(storeDir, 'nats-server.pid');

function renderConfig(
  storeDir: string,
  host: string,
  port: number,
  monitorPort: number | undefined,
  token: string | undefined,
  ping: NatsOptions['ping'],
): string {
  return [
    '# Written by @memex/stack on every start; edits are overwritten.',
    `listen: ${JSON.stringify(`${host}:${port}`)}`,
    ...(monitorPort === undefined ? [] : [`http: ${JSON.stringify(`${host}:${monitorPort}`)}`]),
    `pid_file: ${JSON.stringify(pidFile(storeDir))}`,
    'server_name: memex',
    ...(token === undefined ? [] : [`authorization { token: ${JSON.stringify(token)} }`]),
    // Events stay under 1 MB (blobs hold large bytes); 64 MB (NATS' most) lets a memex.ingest
    // request of 40 MB of files (54 MB as base64) through: at 8 MB one message of 6 MB failed an import.
    'max_payload: 64MB',
    ...(ping ? [`ping_interval: "${ping.intervalSeconds}s"`, `ping_max: ${ping.max}`] : []),
    'jetstream {',
    `  store_dir: ${JSON.stringify(storeDir)}`,
    '  max_memory_store: 256MB',
    '}',
    '',
  ].join('\n');
}

/** A live nats-server that was started on this store dir, with the port its config names. */
function runningServer(storeDir: string): { pid: number; port: number; monitorPort: number | undefined } | undefined {
  try {
    const pid = Number(readFileSync(pidFile(storeDir), 'utf8').trim());
    if (!Number.isInteger(pid) || pid <= 0 || !isAlive(pid)) return undefined;
    const cmdline = processCommandLine(pid);
    if (cmdline !== null && !cmdline.includes('nats-server')) return undefined; // pid reused
    const config = readFileSync(configFile(storeDir), 'utf8');
    const listen = /^listen:\s*"[^"]*:(\d+)"/m.exec(config);
    const http = /^http:\s*"[^"]*:(\d+)"/m.exec(config);
    return listen ? { pid, port: Number(listen[1]), monitorPort: http ? Number(http[1]) : undefined } : undefined;
  } catch {
    return undefined;
  }
}

/** Reads the INFO line a NATS server sends on connect; resolves to its JSON, rejects on anything else. */
function readInfo(host: string, port: number): Promise<{ jetstream?: boolean; version?: string }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host, port });
    let buffer = '';
    socket.setTimeout(2000, () => socket.destroy(new Error('no INFO within 2s')));
    socket.on('error', reject);
    socket.on('data', (chunk: Buffer) => {
      buffer += chunk.toString();
      const end = buffer.indexOf('\r\n');
      if (end < 0) return;
      socket.destroy();
      const line = buffer.slice(0, end);
      if (!line.startsWith('INFO ')) reject(new Error(`unexpected greeting: ${line.slice(0, 80)}`));
      else resolve(JSON.parse(line.slice(5)) as { jetstream?: boolean; version?: string });
    });
  });
}

async function waitUntilReady(
  host: string,
  port: number,
  monitorPort: number | undefined,
  pid: number,
  log: string,
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  while (Date.now() < deadline) {
    if (!isAlive(pid))
      throw new Error(`nats-server (pid ${pid}) exited during startup. Last lines of ${log}:\n${tail(log)}`);
    try {
      const info = await readInfo(host, port);
      if (!info.jetstream) throw new Error(`the NATS server on ${host}:${port} does not have JetStream enabled`);
      if (monitorPort === undefined) return;
      const health = await fetch(`http://${host}:${monitorPort}/healthz?js-enabled-only=true`);
      if (health.ok) return;
      lastError = new Error(`/healthz answered ${health.status}: ${await health.text()}`);
    } catch (err) {
      if ((err as Error).message.includes('does not have JetStream')) throw err;
      lastError = err;
    }
    await sleep(100);
  }
  throw new Error(
    `nats-server (pid ${pid}) was not ready on ${host}:${port} within ${timeoutMs} ms ` +
      `(${(lastError as Error | undefined)?.message}). Last lines of ${log}:\n${tail(log)}`,
  );
}

/** Starts (or attaches to) nats-server with JetStream storing in `storeDir`; resolves once it serves clients. */
export async function startNats(options: NatsOptions): Promise<NatsHandle> {
  const storeDir = path.resolve(options.storeDir);
  const host = options.host ?? '127.0.0.1';
  const { port } = options;
  let monitorPort = options.monitorPort;
  const log = path.resolve(options.log ?? path.join(storeDir, 'nats-server.log'));
  const detached = options.detached ?? true;
  const binary = findNatsServer();

  let pid: number;
  let child: ChildProcess | undefined;
  const existing = runningServer(storeDir);
  if (existing) {
    if (existing.port !== port) {
      throw new Error(
        `nats-server for ${storeDir} is already running (pid ${existing.pid}) on port ${existing.port}, not ${port}. ` +
          `Stop it first (memex stack down) or use port ${existing.port}.`,
      );
    }
    pid = existing.pid;
    if (monitorPort !== undefined && existing.monitorPort !== monitorPort) {
      throw new Error(
        `nats-server for ${storeDir} is already running (pid ${pid}) with monitor port ${existing.monitorPort ?? 'off'}, not ${monitorPort}.`,
      );
    }
    monitorPort = existing.monitorPort;
    if (
      options.token !== undefined &&
      !readFileSync(configFile(storeDir), 'utf8').includes(JSON.stringify(options.token))
    )
      console.warn(
        `nats-server for ${storeDir} (pid ${pid}) was started without this memex's token: it takes it when it starts again (memex stack down, then up)`,
      );
  } else {
    mkdirSync(storeDir, { recursive: true });
    await assertPortFree(host, port, `nats-server for ${storeDir}`, 'MEMEX_NATS_PORT');
    if (monitorPort !== undefined)
      await assertPortFree(host, monitorPort, 'the NATS monitoring endpoint', 'its monitor port');
    // 0600: it holds the token.
    writeFileSync(configFile(storeDir), renderConfig(storeDir, host, port, monitorPort, options.token, options.ping));
    chmodSync(configFile(storeDir), 0o600);
    mkdirSync(path.dirname(log), { recursive: true });
    const logFd = openSync(log, 'a');
    try {
      child = spawn(binary.path, ['-c', configFile(storeDir)], { detached, stdio: ['ignore', logFd, logFd] });
    } finally {
      closeSync(logFd);
    }
    if (child.pid === undefined) throw new Error(`could not start ${binary.path}`);
    pid = child.pid;
    child.on('error', () => undefined); // reported through the readiness wait below
    if (detached) child.unref();
    else {
      const started = child;
      process.once('exit', () => started.kill('SIGTERM'));
    }
  }

  await waitUntilReady(host, port, monitorPort, pid, log, options.startTimeoutMs ?? 60_000);
  return {
    url: `nats://${options.token === undefined ? '' : `${encodeURIComponent(options.token)}@`}${host}:${port}`,
    host,
    port,
    monitorPort,
    storeDir,
    pid,
    reused: child === undefined,
    name: 'nats',
    stopSignal: 'SIGTERM',
    killSignal: 'SIGKILL',
    // nats-server shuts down gracefully on SIGTERM and flushes JetStream.
    stop: () => terminate(pid, 'SIGTERM', 30_000),
  };
}
