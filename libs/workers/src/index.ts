import { availableParallelism } from 'node:os';
import { Piscina } from 'piscina';

/**
 * CPU work off a service's own thread (parsing items, reading PDFs, detecting patterns), so the
 * thread keeps serving requests, publishing and projecting: one pool implementation, piscina,
 * for all of it. A worker module's default export runs one task; it answers problems of its
 * input as values, so a rejection here is the pool's: a timeout, a worker out of memory, or a
 * worker that died.
 */
export interface TaskPoolOptions {
  /** What the pool does, for errors: "the PDF reader". */
  name: string;
  /** The worker module (its default export takes a task and returns its result). */
  script: URL;
  /** Threads at most (default: the cores but one, at most 4). Idle threads but one end after 30 s. */
  threads?: number;
  /** Tasks one thread runs at once: more than one when tasks await I/O (default 1). */
  tasksPerThread?: number;
  /** Each thread's heap: a task that needs more fails alone instead of exhausting the service. */
  heapMb: number;
}

export type TaskFailure = 'timeout' | 'out_of_memory' | 'worker_died';

/** A task the pool could not finish, with why in words a person can act on. */
export class TaskFailed extends Error {
  constructor(
    readonly failure: TaskFailure,
    message: string,
  ) {
    super(message);
    this.name = 'TaskFailed';
  }
}

export interface RunOptions {
  /** Ends the task's thread when it runs longer (the task fails with `timeout`). */
  timeoutMs?: number;
  /** Buffers handed to the worker rather than copied (they are detached here). */
  transfer?: ArrayBuffer[];
}

export function defaultThreads(): number {
  return Math.max(1, Math.min(4, availableParallelism() - 1));
}

export class TaskPool<Task, Result> {
  private started: Piscina<Task, Result> | undefined;

  constructor(private readonly options: TaskPoolOptions) {}

  /** Threads start on the first task: a module that makes a pool costs nothing until it is used. */
  private get pool(): Piscina<Task, Result> {
    if (this.started) return this.started;
    const { name, script, threads, tasksPerThread, heapMb } = this.options;
    const pool = new Piscina<Task, Result>({
      filename: script.href,
      // At least one thread stays (idle, it holds nothing open): with none, tasks queued while
      // every thread was ended (a timeout, out of memory) waited for the next run to start one.
      minThreads: 1,
      maxThreads: threads ?? defaultThreads(),
      idleTimeout: 30_000,
      concurrentTasksPerWorker: tasksPerThread ?? 1,
      resourceLimits: { maxOldGenerationSizeMb: heapMb },
    });
    // A worker that fails with no task left to reject (piscina then reports it here): nothing is
    // lost, the next task starts a new one.
    pool.on('error', (error: Error) => console.warn(`${name}: a worker failed: ${error.message}`));
    return (this.started = pool);
  }

  async run(task: Task, { timeoutMs, transfer }: RunOptions = {}): Promise<Result> {
    try {
      return await this.pool.run(task, {
        ...(timeoutMs ? { signal: AbortSignal.timeout(timeoutMs) } : {}),
        ...(transfer ? { transferList: transfer } : {}),
      });
    } catch (error) {
      throw this.explain(error, timeoutMs);
    }
  }

  async close(): Promise<void> {
    await this.started?.destroy();
    this.started = undefined;
  }

  private explain(error: unknown, timeoutMs: number | undefined): unknown {
    const { name, heapMb } = this.options;
    const failure = error as Error & { code?: string };
    if (failure?.name === 'AbortError')
      return new TaskFailed('timeout', `${name} took longer than ${(timeoutMs ?? 0) / 1000} s`);
    if (failure?.code === 'ERR_WORKER_OUT_OF_MEMORY' || /reaching memory limit/.test(String(failure?.message)))
      return new TaskFailed('out_of_memory', `${name} needs more than ${heapMb} MB of memory for this`);
    if (/^worker exited/.test(String(failure?.message)))
      return new TaskFailed('worker_died', `${name} stopped while working on this (${failure.message})`);
    return error;
  }
}
