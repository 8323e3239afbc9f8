import fs from 'node:fs';
import os from 'node:os';
import { JobsStatus, type MethodDefinition, type ParamsOf, type ResultOf } from '@memex/contracts';

interface Caller {
  call<M extends MethodDefinition>(method: M, params: ParamsOf<M>): Promise<ResultOf<M>>;
}

interface Health {
  services: Array<{ service: string; projector?: { lag: number } }>;
}

const TICKS_PER_SECOND = 100; // USER_HZ on Linux

/**
 * A process's parent pid, executable name and CPU seconds (user + system, its own and that of
 * its children that have ended), or undefined once it is gone.
 */
function statOf(pid: number): { ppid: number; comm: string; cpu: number } | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name, which may itself hold spaces and parentheses.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = fields.slice(11, 15).reduce((sum, field) => sum + Number(field), 0);
    return {
      ppid: Number(fields[1]),
      comm: stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')),
      cpu: ticks / TICKS_PER_SECOND,
    };
  } catch {
    return undefined;
  }
}

function commandOf(pid: number): string {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
  } catch {
    return '';
  }
}

/** Every live descendant of `root` with its CPU seconds so far. */
function descendants(root: number): Map<number, { cpu: number; comm: string; command: string }> {
  const parents = new Map<number, { ppid: number; comm: string; cpu: number }>();
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = statOf(Number(entry));
    if (stat) parents.set(Number(entry), stat);
  }
  const found = new Map<number, { cpu: number; comm: string; command: string }>();
  const within = (pid: number): boolean => {
    for (let at = pid; at > 1; at = parents.get(at)?.ppid ?? 0) if (at === root) return true;
    return false;
  };
  for (const [pid, stat] of parents)
    if (pid !== root && within(pid)) found.set(pid, { cpu: stat.cpu, comm: stat.comm, command: commandOf(pid) });
  return found;
}

/** What a process counts as: its service, or Postgres (its postmaster and every backend), NATS, the CLI. */
function nameOf(
  services: Map<number, string>,
  pid: number,
  { comm, command }: { comm: string; command: string },
): string {
  return (
    services.get(pid) ??
    (comm === 'postgres'
      ? 'postgres'
      : comm === 'nats-server'
        ? 'nats'
        : command.includes('memex.js')
          ? 'cli'
          : 'other')
  );
}

/** CPU seconds so far of every process this bench started, by pid, with what it counts as. */
export function processCpu(services: Record<string, number>): Map<number, { name: string; cpu: number }> {
  const byPid = new Map(Object.entries(services).map(([name, pid]) => [pid, name]));
  const found = new Map<number, { name: string; cpu: number }>();
  for (const [pid, proc] of descendants(process.pid)) found.set(pid, { name: nameOf(byPid, pid, proc), cpu: proc.cpu });
  return found;
}

/**
 * CPU seconds spent between two readings of `processCpu`, per name: a process started since
 * counts whole, one that ended counts through its parent (Postgres' backends of a replay's own
 * connections end with it, and a postmaster's children are all `postgres`).
 */
export function cpuBetween(
  before: Map<number, { name: string; cpu: number }>,
  after: Map<number, { name: string; cpu: number }>,
): Map<string, number> {
  const spent = new Map<string, number>();
  const add = (name: string, seconds: number) => spent.set(name, (spent.get(name) ?? 0) + seconds);
  for (const [pid, { name, cpu }] of after) add(name, cpu - (before.get(pid)?.cpu ?? 0));
  // Gone since: what it spent is now in its parent's count of its children (see statOf), in full.
  for (const [pid, { name, cpu }] of before) if (!after.has(pid)) add(name, -cpu);
  return spent;
}

/**
 * Waits (up to `timeoutMs`) until the processes this bench started use less than a tenth of a
 * core for a second: what the last step left running (Postgres' autovacuum after a bulk load, a
 * service's background merge) then neither slows the next measured step nor counts in its CPU.
 */
export async function quiet(services: Record<string, number>, timeoutMs = 60_000): Promise<void> {
  const total = (cpu: Map<number, { cpu: number }>) => [...cpu.values()].reduce((sum, p) => sum + p.cpu, 0);
  for (const deadline = Date.now() + timeoutMs; Date.now() < deadline;) {
    const before = total(processCpu(services));
    await new Promise((resolve) => setTimeout(resolve, 1000));
    if (total(processCpu(services)) - before < 0.1) return;
  }
}

/**
 * Where an import's time goes, sampled every `everyMs`: each service's CPU (and Postgres', NATS',
 * the CLI's — every process this bench started), each projector's lag and the pipelines' backlog.
 * Prints one line per sample as it goes; `mark` each one's CPU seconds so far; `stop` each one's
 * CPU seconds in all and the second each projector's lag was last above zero (the tail: who
 * catches up last).
 */
export function sampleTimeline(client: Caller, url: string, services: Record<string, number>, everyMs = 10_000) {
  const started = performance.now();
  const total = new Map<string, number>();
  const lastLagged = new Map<string, number>();
  let seen: Map<number, { name: string; cpu: number }> | undefined;
  let first: Map<number, { name: string; cpu: number }> | undefined;
  let previous = 0;
  const sample = async () => {
    const at = (performance.now() - started) / 1000;
    const now = processCpu(services);
    // The first look only sets where each process starts from (their start-up is not the import's).
    if (seen === undefined) {
      seen = first = now;
      previous = at;
      return;
    }
    const cpu = cpuBetween(seen, now);
    seen = now;
    for (const [name, seconds] of cpu) total.set(name, (total.get(name) ?? 0) + seconds);
    const lags = await fetch(`${url}/healthz`)
      .then((response) => response.json() as Promise<Health>)
      .then((health) =>
        health.services.filter((s) => (s.projector?.lag ?? 0) > 0).map((s) => [s.service, s.projector!.lag] as const),
      )
      .catch(() => []);
    for (const [service] of lags) lastLagged.set(service, at);
    const backlog = await client.call(JobsStatus, {}).then(
      (status) =>
        status.queues
          .filter((q) => q.waiting + q.in_progress > 0)
          .map((q) => `${q.priority} ${q.waiting}+${q.in_progress}`)
          .join(', '),
      () => '?',
    );
    const interval = at - previous;
    previous = at;
    const busiest = [...cpu]
      .filter(([, seconds]) => seconds / interval >= 0.05)
      .sort((a, b) => b[1] - a[1])
      .map(([name, seconds]) => `${name} ${Math.round((100 * seconds) / interval)}%`)
      .join(' ');
    console.log(
      `[${at.toFixed(0)} s, load ${os.loadavg()[0]!.toFixed(1)}] cpu: ${busiest}; lag: ${lags.map(([s, lag]) => `${s} ${lag}`).join(' ') || 'none'}; jobs: ${backlog || 'none'}`,
    );
  };
  let running = sample();
  const timer = setInterval(() => (running = running.then(sample)), everyMs);
  const byName = (cpu: Map<string, number>) =>
    [...cpu].sort((a, b) => b[1] - a[1]).map(([name, s]) => `${name} ${s.toFixed(0)}`);
  return {
    /**
     * Prints each process's CPU seconds from the first sample to now: the work a point (searchable)
     * took, which on a busy machine tells two runs apart better than their seconds do.
     */
    async mark(what: string): Promise<void> {
      await running;
      if (!first) return;
      const cpu = cpuBetween(first, processCpu(services));
      const sum = [...cpu.values()].reduce((a, b) => a + b, 0);
      console.log(`CPU seconds to ${what}: ${sum.toFixed(0)} in all (${byName(cpu).join(', ')})`);
    },
    async stop(): Promise<void> {
      clearInterval(timer);
      await running;
      await sample();
      console.log(`CPU seconds by process: ${byName(total).join(', ')}`);
      const tails = [...lastLagged].sort((a, b) => b[1] - a[1]).map(([name, at]) => `${name} ${at.toFixed(0)} s`);
      console.log(`last seen behind: ${tails.join(', ') || 'none'}`);
    },
  };
}
