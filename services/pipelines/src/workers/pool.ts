import { Worker as Thread } from 'node:worker_threads';
import { once } from 'node:events';
import type { WorkerOptions } from './worker.js';

/** `MEMEX_PIPELINE_WORKERS`: worker threads per pipelines process (default 2; 0 = none here, workers run elsewhere). */
export function workersFromEnv(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.MEMEX_PIPELINE_WORKERS;
  if (raw === undefined || raw === '') return 2;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0)
    throw new Error(`MEMEX_PIPELINE_WORKERS must be a non-negative integer, got "${raw}"`);
  return value;
}

/**
 * The niceness of worker threads (`MEMEX_PIPELINE_NICENESS`, 0-19, default 10): reading items is
 * background work, so a search, a projector or an import that needs a core gets it first, and the
 * workers take what is left (a 2-core machine is full for the length of an import).
 */
export function nicenessFromEnv(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.MEMEX_PIPELINE_NICENESS;
  if (raw === undefined || raw === '') return 10;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0 || value > 19)
    throw new Error(`MEMEX_PIPELINE_NICENESS must be an integer from 0 to 19, got "${raw}"`);
  return value;
}

/**
 * Workers as threads: embedding is CPU work, so each worker gets its own thread (and its own
 * NATS connection and model copies) to use every core.
 */
export class WorkerPool {
  private readonly threads: Thread[] = [];

  constructor(
    private readonly size: number,
    private readonly options: Omit<WorkerOptions, 'name'>,
  ) {}

  get workers(): number {
    return this.size;
  }

  async start(): Promise<void> {
    await Promise.all(
      Array.from({ length: this.size }, async (_, i) => {
        const thread = new Thread(new URL('./thread.js', import.meta.url), {
          workerData: { ...this.options, name: `w${i + 1}` } satisfies WorkerOptions,
        });
        this.threads.push(thread);
        const [message] = (await Promise.race([
          once(thread, 'message'),
          once(thread, 'error').then(([error]) => Promise.reject(error)),
        ])) as [unknown];
        if (message !== 'ready')
          throw new Error(`pipelines worker thread ${i + 1} said ${String(message)} instead of ready`);
      }),
    );
  }

  /** Lets each worker finish its job, then ends the threads. */
  async stop(): Promise<void> {
    await Promise.all(
      this.threads.map(async (thread) => {
        const exited = once(thread, 'exit');
        thread.postMessage('stop');
        await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 30_000))]);
        await thread.terminate();
      }),
    );
    this.threads.length = 0;
  }
}
