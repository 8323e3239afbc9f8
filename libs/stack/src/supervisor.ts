import { spawn, type ChildProcess } from 'node:child_process';
import { EventEmitter, once } from 'node:events';
import { createWriteStream, mkdirSync, rmSync, type WriteStream } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { processStartTime, terminate } from './process.js';
import { assertNoRunningStack, record, writeStackState, type StackState } from './state.js';

/** A long-running node service (or any command) the supervisor keeps alive. */
export interface ServiceSpec {
  name: string;
  /** Executable, e.g. process.execPath. */
  command: string;
  args?: string[];
  /** Merged over this process's environment. */
  env?: Record<string, string | undefined>;
  cwd?: string;
}

/** Something started before the services and stopped after them (Postgres, NATS handles fit). */
export interface ManagedServer {
  readonly name: string;
  readonly pid: number;
  readonly stopSignal: NodeJS.Signals;
  readonly killSignal: NodeJS.Signals;
  stop(): Promise<void>;
}

export interface SupervisorOptions {
  /** Where prefixed service output goes. Default process.stdout. */
  output?: NodeJS.WritableStream;
  /** Also append each service's output to <logDir>/<name>.log. */
  logDir?: string;
  /** Keep a StackState here for `memex stack down`; refuses to start if a live stack owns it. */
  stateFile?: string;
  /** Facts recorded in the state file (URLs, ports). */
  info?: Record<string, unknown>;
  /** SIGTERM → SIGKILL grace per service. Default 10 s. */
  stopTimeoutMs?: number;
  /** First restart delay, doubled per consecutive crash up to maxRestartDelayMs. Defaults 500 ms, 30 s. */
  restartDelayMs?: number;
  maxRestartDelayMs?: number;
  /** A service that ran this long before exiting restarts after the first delay again. Default 30 s. */
  stableAfterMs?: number;
}

export interface ServiceStatus {
  name: string;
  pid: number | undefined;
  restarts: number;
  running: boolean;
}

interface Service {
  spec: ServiceSpec;
  child: ChildProcess | undefined;
  startedAt: number;
  restarts: number;
  crashes: number;
  timer: NodeJS.Timeout | undefined;
  log: WriteStream | undefined;
}

/**
 * Runs named child processes with prefixed output, restarts the ones that exit (with backoff),
 * and stops everything in order: services (SIGTERM, then SIGKILL), then the servers in reverse
 * order of addServer. Events: 'spawn' (name, pid), 'exit' (name, code, signal), 'stopped'.
 */
export class ProcessSupervisor extends EventEmitter {
  readonly #options: Required<Omit<SupervisorOptions, 'logDir' | 'stateFile' | 'info'>> & SupervisorOptions;
  readonly #services = new Map<string, Service>();
  readonly #servers: ManagedServer[] = [];
  readonly #startedAt = new Date().toISOString();
  #info: Record<string, unknown>;
  #width = 0;
  #stopping: Promise<void> | undefined;

  constructor(options: SupervisorOptions = {}) {
    super();
    this.#options = {
      output: process.stdout,
      stopTimeoutMs: 10_000,
      restartDelayMs: 500,
      maxRestartDelayMs: 30_000,
      stableAfterMs: 30_000,
      ...options,
    };
    this.#info = options.info ?? {};
    if (options.stateFile) {
      assertNoRunningStack(options.stateFile);
      this.#saveState();
    }
    if (options.logDir) mkdirSync(options.logDir, { recursive: true });
    // If this process dies without stop() (an uncaught error), do not leave services orphaned;
    // servers stay up and are reused by the next start.
    process.once('exit', () => {
      for (const s of this.#services.values())
        if (s.child?.pid && s.child.exitCode === null) killGroup(s.child.pid, 'SIGTERM');
    });
  }

  /** Starts a service now and keeps it running until stop(). */
  add(spec: ServiceSpec): void {
    if (this.#stopping) throw new Error(`cannot add ${spec.name}: the supervisor is stopping`);
    if (this.#services.has(spec.name)) throw new Error(`a service named ${spec.name} is already supervised`);
    const log = this.#options.logDir
      ? createWriteStream(path.join(this.#options.logDir, `${spec.name}.log`), { flags: 'a' })
      : undefined;
    const service: Service = { spec, child: undefined, startedAt: 0, restarts: 0, crashes: 0, timer: undefined, log };
    this.#services.set(spec.name, service);
    this.#width = Math.max(this.#width, spec.name.length);
    this.#spawn(service);
  }

  /** Registers a server to stop after all services, in reverse order of registration. */
  addServer(server: ManagedServer): void {
    this.#servers.push(server);
    this.#saveState();
  }

  /** Merges facts into the state file (e.g. the gateway URL once known). */
  setInfo(info: Record<string, unknown>): void {
    this.#info = { ...this.#info, ...info };
    this.#saveState();
  }

  status(): ServiceStatus[] {
    return [...this.#services.values()].map((s) => ({
      name: s.spec.name,
      pid: s.child?.pid,
      restarts: s.restarts,
      running: s.child !== undefined && s.child.exitCode === null && s.child.signalCode === null,
    }));
  }

  /** Prints a line with the supervisor's own prefix. */
  log(message: string): void {
    this.#write('stack', message);
  }

  /** Stops services, then servers; idempotent (every call returns the same promise). */
  stop(): Promise<void> {
    this.#stopping ??= this.#stopAll();
    return this.#stopping;
  }

  /**
   * On SIGINT, SIGTERM or SIGHUP: stop everything, then exit (0, or 1 if stopping failed).
   * Repeated signals while stopping are ignored (a terminal's Ctrl-C often arrives twice, via npm).
   */
  handleSignals(): void {
    const onSignal = (sig: NodeJS.Signals) => {
      if (this.#stopping) return;
      this.log(`${sig}: stopping`);
      this.stop().then(
        () => process.exit(0),
        (err: unknown) => {
          this.log(`stopping failed: ${(err as Error).message}`);
          process.exit(1);
        },
      );
    };
    for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(sig, onSignal);
  }

  #spawn(service: Service): void {
    const { spec } = service;
    service.timer = undefined;
    service.startedAt = Date.now();
    // Own process group: a terminal's Ctrl-C reaches only us, so we stop things in order, and a
    // group signal also reaches whatever the service spawned.
    const child = spawn(spec.command, spec.args ?? [], {
      cwd: spec.cwd,
      env: { ...process.env, ...spec.env },
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    service.child = child;
    for (const stream of [child.stdout, child.stderr]) {
      if (stream)
        createInterface({ input: stream, crlfDelay: Infinity }).on('line', (line) =>
          this.#write(spec.name, line, service.log),
        );
    }
    child.on('spawn', () => {
      this.emit('spawn', spec.name, child.pid);
      this.#saveState();
    });
    child.on('error', (err) => {
      this.#write(spec.name, `failed to start: ${err.message}`, service.log);
      if (child.pid === undefined) this.#exited(service, null, null); // no 'exit' will follow
    });
    child.on('exit', (code, sig) => this.#exited(service, code, sig));
  }

  #exited(service: Service, code: number | null, sig: NodeJS.Signals | null): void {
    this.emit('exit', service.spec.name, code, sig);
    if (this.#stopping) return;
    if (Date.now() - service.startedAt >= this.#options.stableAfterMs) service.crashes = 0;
    const delay = Math.min(this.#options.restartDelayMs * 2 ** service.crashes, this.#options.maxRestartDelayMs);
    service.crashes++;
    service.restarts++;
    this.#write(service.spec.name, `exited (${sig ?? `code ${code}`}); restarting in ${delay} ms`, service.log);
    service.timer = setTimeout(() => this.#spawn(service), delay);
    this.#saveState();
  }

  async #stopAll(): Promise<void> {
    const services = [...this.#services.values()];
    for (const s of services) clearTimeout(s.timer);
    await Promise.all(
      services.map(async (s) => {
        const child = s.child;
        const pid = child?.pid;
        if (child && pid !== undefined && child.exitCode === null && child.signalCode === null) {
          // The pid can be gone before Node has reaped it and fired 'exit'; wait for both.
          const exited = once(child, 'exit');
          await terminate(-pid, 'SIGTERM', this.#options.stopTimeoutMs, 'SIGKILL');
          await exited;
        }
        s.log?.end();
      }),
    );
    const failures: string[] = [];
    for (const server of [...this.#servers].reverse()) {
      this.log(`stopping ${server.name}`);
      await server.stop().catch((err: unknown) => failures.push(`${server.name}: ${(err as Error).message}`));
    }
    if (this.#options.stateFile) rmSync(this.#options.stateFile, { force: true });
    this.emit('stopped');
    if (failures.length) throw new Error(`could not stop ${failures.join('; ')}`);
  }

  #write(name: string, line: string, log?: WriteStream): void {
    this.#options.output.write(`${name.padEnd(this.#width)} | ${line}\n`);
    log?.write(`${line}\n`);
  }

  #saveState(): void {
    const file = this.#options.stateFile;
    if (!file || this.#stopping) return;
    const state: StackState = {
      pid: process.pid,
      started: processStartTime(process.pid),
      startedAt: this.#startedAt,
      info: this.#info,
      services: [...this.#services.values()]
        .filter((s) => s.child?.pid !== undefined)
        .map((s) => ({ ...record(s.spec.name, s.child!.pid!), restarts: s.restarts })),
      servers: this.#servers.map((s) => ({
        name: s.name,
        pid: s.pid,
        started: processStartTime(s.pid),
        stopSignal: s.stopSignal,
        killSignal: s.killSignal,
      })),
    };
    writeStackState(file, state);
  }
}

function killGroup(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(-pid, sig);
  } catch {
    // already gone
  }
}
