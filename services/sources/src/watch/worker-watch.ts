import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { LocationReachable, LocationUnreachable, type Actor } from '@memex/contracts';
import { EventPublisher, readEventsOf, type Bus } from '@memex/bus';
import {
  WORKER_FAILURES_HEARD,
  WORKER_NAME_PATTERN,
  workerPrefix,
  workerSubject,
  type WorkerFailure,
  type WorkerHeartbeat,
} from '@memex/locations';
import { BUS, ServiceHost } from '@memex/runtime';

/** A worker is gone when this many of its heartbeats in a row have not come. */
const MISSED_HEARTBEATS = 3;
/** The interval assumed for a worker known from the log until it is heard (`memex worker`'s default). */
const DEFAULT_HEARTBEAT_MS = 5_000;

const CALLER: Actor = { kind: 'system', id: 'sources' };

interface Seen {
  lastAt: number;
  /** When this process last heard it (null: known from the log only). */
  heardAt: number | null;
  /** What its last heartbeat said (empty until heard). */
  folders: string[];
  derives: boolean;
  extracts: boolean;
  /** What its last heartbeat counted (null until heard). */
  counts: HeardCounts | null;
  /** Its jobs running or queued, and its failed files, as its last heartbeat said (none until heard). */
  jobs: number;
  failures: WorkerFailure[];
  intervalMs: number;
  /** What this process last published for the worker (null: nothing yet). */
  published: 'reachable' | 'unreachable' | null;
}

/** A worker as `memex.sources.list` shows it. */
export interface WorkerSeen {
  name: string;
  folders: string[];
  lastSeen: Date | null;
  reachable: boolean;
  derives: boolean;
  extracts: boolean;
  /** Its files that are items and its failed files, as its last heartbeat said; null when not heard since this process started. */
  counts: HeardCounts | null;
  /** The jobs the memex asked of it, running or queued on it (0 until heard). */
  jobs: number;
  /** Its failed files with why (at most WORKER_FAILURES_HEARD; none until heard). */
  failures: WorkerFailure[];
}

/** What a heartbeat counts that the read model cannot: its files (copies included) and its failed ones. Its items are counted in worker_items. */
interface HeardCounts {
  files: number;
  failed: number;
}

/**
 * Watches the workers (`memex worker`, docs/sources.md) on behalf of the sources service: a
 * worker that stops sending heartbeats has its items marked unreachable (`location.unreachable`
 * on `worker:<name>:/`), never deleted; its next heartbeat marks them reachable again. The first
 * heartbeat this process hears from a worker also says reachable: marks left from before a
 * restart of this service go; a worker it had marked reachable before a restart and does not
 * hear from afterwards is marked unreachable (the log says which workers there are). Only the replica that leads the projection publishes; the state
 * is checked every second, so a change is published once this replica leads.
 */
@Injectable()
export class WorkerWatch implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('memex:sources');
  private readonly workers = new Map<string, Seen>();
  private subscription: ReturnType<Bus['nc']['subscribe']> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    @Inject(BUS) private readonly bus: Bus,
    private readonly publisher: EventPublisher,
    private readonly host: ServiceHost,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    this.subscription = this.bus.nc.subscribe(workerSubject('*', 'heartbeat'), {
      callback: (error, message) => {
        if (error) return;
        try {
          this.heard(message.json<WorkerHeartbeat>());
        } catch {
          // Not a heartbeat: ignored.
        }
      },
    });
    this.timer = setInterval(() => this.check(), 1_000);
    // Known before the service answers: the list shows every worker right after a restart.
    await this.remember().catch((error) =>
      this.logger.error(`workers: ${error instanceof Error ? error.message : String(error)}`),
    );
  }

  /**
   * The workers this service marked before it started, from the log: one last said reachable
   * is expected to be heard within three heartbeats (else it went away while this service was
   * down, and is marked so); one last said unreachable stays so until it is heard.
   */
  private async remember(): Promise<void> {
    const last = new Map<string, { seq: number; state: 'reachable' | 'unreachable' }>();
    for (const [definition, state] of [
      [LocationReachable, 'reachable'],
      [LocationUnreachable, 'unreachable'],
    ] as const) {
      for await (const { seq, event } of readEventsOf(this.bus, definition, { untilCaughtUp: true })) {
        const name = event.data.source_id.startsWith('worker.') ? event.data.source_id.slice('worker.'.length) : null;
        if (name && seq > (last.get(name)?.seq ?? 0)) last.set(name, { seq, state });
      }
    }
    for (const [name, { state }] of last) {
      if (this.workers.has(name)) continue; // heard already
      this.workers.set(name, {
        lastAt: state === 'reachable' ? Date.now() : 0,
        heardAt: null,
        folders: [],
        derives: false,
        extracts: false,
        counts: null,
        jobs: 0,
        failures: [],
        intervalMs: DEFAULT_HEARTBEAT_MS,
        published: state,
      });
    }
  }

  async onApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    this.subscription?.unsubscribe();
    await this.queue;
  }

  private heard(beat: WorkerHeartbeat): void {
    if (!WORKER_NAME_PATTERN.test(beat.name)) return;
    const published = this.workers.get(beat.name)?.published ?? null;
    const now = Date.now();
    this.workers.set(beat.name, {
      lastAt: now,
      heardAt: now,
      folders: Array.isArray(beat.folders) ? beat.folders.filter((f) => typeof f === 'string') : [],
      derives: beat.derives === true,
      extracts: beat.extracts === true,
      counts: heardCounts(beat.counts),
      jobs: heardJobs(beat.jobs),
      failures: heardFailures(beat.failures),
      intervalMs: beat.interval_ms,
      published,
    });
    this.check();
  }

  /** The workers this process knows (heard, or from the log), by name: reachable unless three heartbeats were missed. */
  known(): WorkerSeen[] {
    const now = Date.now();
    return [...this.workers]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([name, seen]) => ({
        name,
        folders: seen.folders,
        lastSeen: seen.heardAt === null ? null : new Date(seen.heardAt),
        reachable: now - seen.lastAt < MISSED_HEARTBEATS * seen.intervalMs,
        derives: seen.derives,
        extracts: seen.extracts,
        counts: seen.counts,
        jobs: seen.jobs,
        failures: seen.failures,
      }));
  }

  /** Publishes what changed for each worker since it last did (retried each second until this replica leads). */
  private check(): void {
    this.queue = this.queue
      .then(async () => {
        if (!this.host.projector?.isLeader) return;
        const now = Date.now();
        for (const [name, seen] of this.workers) {
          const away = now - seen.lastAt >= MISSED_HEARTBEATS * seen.intervalMs;
          const state = away ? 'unreachable' : 'reachable';
          if (seen.published === state) continue;
          const why = `worker "${name}" has sent no heartbeat since ${new Date(seen.lastAt).toISOString()}`;
          await this.publish(name, away ? why : null);
          seen.published = state;
        }
      })
      .catch((error) => this.logger.error(`workers: ${error instanceof Error ? error.message : String(error)}`));
  }

  private async publish(name: string, why: string | null): Promise<void> {
    const data = { source_id: `worker.${name}`, prefix: workerPrefix(name) };
    this.logger.log(`worker ${name}: ${why ? `unreachable: ${why}` : 'reachable'}`);
    if (why)
      await this.publisher.publish(LocationUnreachable, {
        subject: `source:worker.${name}`,
        actor: CALLER,
        data: { ...data, why },
      });
    else await this.publisher.publish(LocationReachable, { subject: `source:worker.${name}`, actor: CALLER, data });
  }
}

/** A heartbeat's counts when they are counts (a worker from before they were sent has none; one from before `failed`, 0). */
function heardCounts(counts: unknown): HeardCounts | null {
  const { files, failed } = (counts ?? {}) as { files?: unknown; failed?: unknown };
  return Number.isSafeInteger(files)
    ? { files: files as number, failed: Number.isSafeInteger(failed) ? (failed as number) : 0 }
    : null;
}

/** A heartbeat's jobs not done, all kinds together (0 from a worker that does not send them). */
function heardJobs(jobs: unknown): number {
  return Object.values((jobs ?? {}) as Record<string, unknown>)
    .filter((n): n is number => Number.isSafeInteger(n) && (n as number) > 0)
    .reduce((sum, n) => sum + n, 0);
}

/** A heartbeat's failed files, those that are well formed, at most WORKER_FAILURES_HEARD. */
function heardFailures(failures: unknown): WorkerFailure[] {
  if (!Array.isArray(failures)) return [];
  return failures
    .filter(
      (f): f is WorkerFailure =>
        typeof f?.path === 'string' && typeof f?.reason === 'string' && typeof f?.modified_at === 'string',
    )
    .slice(0, WORKER_FAILURES_HEARD)
    .map(({ path, reason, modified_at }) => ({ path, reason, modified_at }));
}
