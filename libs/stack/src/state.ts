import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { isAlive, processStartTime, terminate, waitForExit } from './process.js';

/** Where a stack keeps its data under MEMEX_HOME. */
export interface StackPaths {
  home: string;
  /** Postgres cluster (initdb data dir). */
  postgres: string;
  /** nats-server JetStream store dir (the event log: back this up). */
  nats: string;
  /** Content-addressed blobs (back this up). */
  blobs: string;
  /** One log file per server and service. */
  logs: string;
  ownerToken: string;
  /** State of a running `memex stack up` (see StackState). */
  stateFile: string;
}

export function stackPaths(home: string): StackPaths {
  const root = path.resolve(home);
  return {
    home: root,
    postgres: path.join(root, 'postgres'),
    nats: path.join(root, 'nats'),
    blobs: path.join(root, 'blobs'),
    logs: path.join(root, 'logs'),
    ownerToken: path.join(root, 'owner-token'),
    stateFile: path.join(root, 'stack.json'),
  };
}

/** A process recorded with its kernel start time, so a reused pid is never signalled by mistake. */
export interface RecordedProcess {
  name: string;
  pid: number;
  started: string | null;
}

export interface StackState {
  /** The supervisor (`memex stack up`) process. */
  pid: number;
  started: string | null;
  startedAt: string;
  /** Free-form facts for other commands: URLs, ports, home. */
  info: Record<string, unknown>;
  services: (RecordedProcess & { restarts: number })[];
  /** Infrastructure servers in start order (stopped in reverse). */
  servers: (RecordedProcess & { stopSignal: NodeJS.Signals; killSignal: NodeJS.Signals })[];
}

export function record(name: string, pid: number): RecordedProcess {
  return { name, pid, started: processStartTime(pid) };
}

/** True when the recorded pid is alive and (where /proc tells) is still the same process. */
export function isSameProcess(p: { pid: number; started: string | null }): boolean {
  if (!isAlive(p.pid)) return false;
  return p.started === null || processStartTime(p.pid) === p.started;
}

export function readStackState(file: string): StackState | undefined {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as StackState;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new Error(`cannot read stack state ${file}: ${(err as Error).message}`);
  }
}

/** The state of a stack whose supervisor is still running, or undefined. */
export function runningStack(file: string): StackState | undefined {
  const state = readStackState(file);
  return state && isSameProcess(state) ? state : undefined;
}

/** Replaces the state file atomically (readers never see half a file). */
export function writeStackState(file: string, state: StackState): void {
  const temp = `${file}.${process.pid}.tmp`;
  writeFileSync(temp, `${JSON.stringify(state, null, 2)}\n`);
  renameSync(temp, file);
}

export class StackRunningError extends Error {}

/** Throws StackRunningError when a live supervisor owns `file`. */
export function assertNoRunningStack(file: string): void {
  const other = runningStack(file);
  if (other && other.pid !== process.pid) {
    throw new StackRunningError(
      `a Memex stack is already running (pid ${other.pid}, since ${other.startedAt}); stop it with \`memex stack down\``,
    );
  }
}

async function stopServices(state: StackState, timeoutMs: number): Promise<string[]> {
  const left = state.services.filter(isSameProcess);
  await Promise.all(left.map((s) => terminate(-s.pid, 'SIGTERM', timeoutMs, 'SIGKILL')));
  return left.map((s) => s.name);
}

/**
 * Before a new stack starts: stops the services a killed supervisor left running (they would hold
 * the gateway's port), and returns their names. Its servers are left alone, to be reused.
 * Throws StackRunningError when the supervisor is alive.
 */
export async function stopLeftoverServices(file: string, timeoutMs = 10_000): Promise<string[]> {
  assertNoRunningStack(file);
  const state = readStackState(file);
  return state ? stopServices(state, timeoutMs) : [];
}

export type StopStackResult = 'stopped' | 'cleaned-up' | 'not-running';

/**
 * Stops the stack recorded in `file` from another process (`memex stack down`): SIGTERM to the
 * supervisor, which stops services, NATS and Postgres in order. If the supervisor is gone (it was
 * killed) or does not finish in time, stops the processes it left behind itself.
 */
export async function stopStack(
  file: string,
  options: { timeoutMs?: number; serviceStopTimeoutMs?: number } = {},
): Promise<StopStackResult> {
  const state = readStackState(file);
  if (!state) return 'not-running';
  if (isSameProcess(state)) {
    process.kill(state.pid, 'SIGTERM');
    if (await waitForExit(state.pid, options.timeoutMs ?? 120_000)) {
      rmSync(file, { force: true });
      return 'stopped';
    }
    process.kill(state.pid, 'SIGKILL');
    await waitForExit(state.pid, 10_000);
  }
  await stopServices(state, options.serviceStopTimeoutMs ?? 10_000);
  for (const server of [...state.servers].reverse()) {
    if (isSameProcess(server)) await terminate(server.pid, server.stopSignal, 60_000, server.killSignal);
  }
  rmSync(file, { force: true });
  return 'cleaned-up';
}
