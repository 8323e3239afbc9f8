import { spawn, type SpawnOptions } from 'node:child_process';
import { accessSync, constants, readFileSync } from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/** Fields of /proc/<pid>/stat after the command name (which may contain spaces), or null. */
function procStat(pid: number): string[] | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return null;
  }
}

/**
 * True while a process with this pid runs. A zombie (exited, not yet reaped: an orphan whose
 * adopting init does not reap, as in some containers) counts as gone.
 */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    // EPERM: it exists but belongs to someone else.
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  return procStat(pid)?.[0] !== 'Z';
}

/**
 * The kernel's start time of a process (Linux /proc), so a pid recorded earlier can be checked
 * to still be the same process before it is signalled: pids are reused after a reboot or crash.
 * Null where /proc is not available.
 */
export function processStartTime(pid: number): string | null {
  return procStat(pid)?.[19] ?? null; // field 22 overall: starttime
}

/** The command line of a process (Linux /proc), or null when unknown. */
export function processCommandLine(pid: number): string | null {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim();
  } catch {
    return null;
  }
}

/** Waits until the pid is gone; false on timeout. */
export async function waitForExit(pid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (isAlive(pid)) {
    if (Date.now() >= deadline) return false;
    await sleep(50);
  }
  return true;
}

function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err;
  }
}

/**
 * Sends `sig`, waits up to `timeoutMs` for the process to exit, then sends `escalate` and waits
 * again. A negative pid addresses a whole process group.
 */
export async function terminate(
  pid: number,
  sig: NodeJS.Signals,
  timeoutMs: number,
  escalate: NodeJS.Signals = 'SIGKILL',
): Promise<void> {
  const leader = Math.abs(pid);
  signal(pid, sig);
  if (await waitForExit(leader, timeoutMs)) return;
  signal(pid, escalate);
  if (!(await waitForExit(leader, 10_000))) {
    throw new Error(`process ${leader} did not exit after ${sig} and ${escalate}`);
  }
}

/** Finds an executable by name on PATH, then in `extraDirs` (e.g. /usr/sbin, not on a user's PATH). */
export function findExecutable(name: string, extraDirs: readonly string[] = []): string | undefined {
  const dirs = [...(process.env.PATH ?? '').split(path.delimiter), ...extraDirs].filter(Boolean);
  for (const dir of dirs) {
    const candidate = path.join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

export interface RunResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  output: string;
}

/** Runs a command to completion, capturing stdout and stderr together. */
export function run(command: string, args: readonly string[], options: SpawnOptions = {}): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code, sig) => resolve({ code, signal: sig, output }));
  });
}

/** Runs a command and throws, with its output, unless it exits 0. */
export async function runChecked(
  command: string,
  args: readonly string[],
  options: SpawnOptions = {},
): Promise<string> {
  const result = await run(command, args, options);
  if (result.code !== 0) {
    throw new Error(
      `${path.basename(command)} ${args.join(' ')} failed (${result.signal ?? `exit ${result.code}`}):\n${result.output.trim()}`,
    );
  }
  return result.output;
}

/** The last lines of a log file, for error messages. */
export function tail(file: string, lines = 20): string {
  try {
    return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}
