import { BlobStore } from '@memex/blobs';
import { Bus, EventPublisher } from '@memex/bus';
import { ModelRegistry } from '../domain/models/registry.js';
import { TextTask } from '../domain/text/text-task.js';
import { BackfillTask } from '../jobs/backfill-task.js';
import { StructureTask } from '../domain/structure/structure-task.js';
import {
  describeJob,
  JobQueue,
  MAX_ATTEMPTS,
  type Job,
  type StructureJob,
  type TakenJob,
  type TextJob,
} from '../jobs/queue.js';
import { structureJobId, textJobId } from '../jobs/scheduler.js';
import { readSource, type Source } from '../jobs/source.js';

/** What a worker needs: NATS and the blobs directory, nothing else (it can run on another machine). */
export interface WorkerOptions {
  natsUrl: string;
  blobsDir: string;
  name: string;
  /** A failed job's first retry waits this long, each next one twice as long (default 1 s; tests shorten it). */
  retryBaseMs?: number;
}

/** How long an idle worker waits on the doorbell before looking at the queues again. */
const IDLE_MS = 5000;
/**
 * Jobs taken (and run) at once: fewer requests per job, at the cost of this many jobs of priority
 * inversion (a few milliseconds each). A job mostly waits on NATS (its events' acks) and the disk:
 * at 4, a worker thread of a 5,000-message import sat idle 61% of the time with thousands of jobs queued.
 */
const BATCH = 16;

/** One worker: takes the highest-priority jobs, runs them, acknowledges each once its events are published. */
export class Worker {
  private stopped = false;
  private readonly text: TextTask;
  private readonly backfill: BackfillTask;
  private readonly structure: StructureTask;

  constructor(
    private readonly queue: JobQueue,
    private readonly bus: Bus,
    publisher: EventPublisher,
    private readonly blobs: BlobStore,
    private readonly models: ModelRegistry,
    private readonly name: string,
    private readonly retryBaseMs = 1000,
  ) {
    this.text = new TextTask(bus, publisher, blobs, models);
    this.backfill = new BackfillTask(bus, queue);
    this.structure = new StructureTask(bus, publisher, blobs);
  }

  async run(): Promise<void> {
    while (!this.stopped) {
      const taken = await this.queue.take(IDLE_MS, BATCH).catch((error: unknown) => {
        if (!this.stopped) console.error(`pipelines worker ${this.name}: taking a job failed:`, error);
        return [];
      });
      // Side by side: a job mostly waits on NATS and the disk, so one thread keeps several going.
      await Promise.all(taken.map((job) => this.process(job)));
    }
  }

  private async process(taken: TakenJob): Promise<void> {
    try {
      const { job } = taken;
      if (job.task === 'text' && job.structure) await this.textAndStructure(job, taken);
      else await this.execute(job, () => taken.working(), taken.attempt);
      await taken.ack();
    } catch (error) {
      const what = describeJob(taken.job);
      const reason = error instanceof Error ? error.message : String(error);
      if (taken.attempt < MAX_ATTEMPTS) {
        console.warn(`pipelines worker ${this.name}: ${what} failed (attempt ${taken.attempt}), retrying:`, reason);
        taken.retry(this.retryBaseMs * 2 ** taken.attempt);
        return;
      }
      console.error(`pipelines worker ${this.name}: ${what} failed ${taken.attempt} times, set aside:`, error);
      await taken.setAside(reason, this.name).catch((setAsideError: unknown) => {
        // Not kept among the failed jobs: it stays queued, to be set aside on its next failure.
        console.error(`pipelines worker ${this.name}: setting aside ${what} failed:`, setAsideError);
        taken.retry(this.retryBaseMs * 2 ** MAX_ATTEMPTS);
      });
    }
  }

  private async execute(job: Job, touch: () => void, attempt: number): Promise<void> {
    if (job.task === 'backfill') {
      await this.backfill.run(job, touch);
      return;
    }
    if (job.task === 'structure') {
      await this.structure.run(job);
      return;
    }
    if (job.task === 'structure_backfill') {
      await this.backfill.runStructure(job, touch);
      return;
    }
    if (job.task === 'understand')
      throw new Error('tier-2 jobs belong to the understanding runner, not a tier-1 worker');
    await this.runText(job, touch, attempt);
  }

  private runText(job: TextJob, touch: () => void, attempt: number, source?: Source) {
    const spaces = job.all_spaces ? [...new Set([...job.spaces, ...this.models.spaces()])] : job.spaces;
    return this.text.run({ ...job, spaces }, touch, attempt, source);
  }

  /**
   * A new item's text and tier 0 on one reading of it (its event and its text read once). A part
   * that fails goes on as a job of its own, retried and at last set aside by itself, as when they
   * were two jobs: an embedding model that is down never holds up tier 0, nor tier 0 the text.
   */
  private async textAndStructure({ structure: _, ...text }: TextJob, taken: TakenJob): Promise<void> {
    const source = await readSource(this.bus, this.blobs, text);
    // Deleted before its job ran: nothing to do.
    if (!source) return;
    const { item_id, revision, source_seq } = text;
    const structure: StructureJob = { task: 'structure', item_id, revision, source_seq };
    const [textRun, structureRun] = await Promise.allSettled([
      this.runText(text, () => taken.working(), taken.attempt, source),
      this.structure.run(structure, source),
    ]);
    for (const [run, alone, id] of [
      [textRun, text, textJobId(text)],
      [structureRun, structure, structureJobId(structure)],
    ] as const) {
      if (run.status === 'fulfilled') continue;
      console.warn(
        `pipelines worker ${this.name}: ${describeJob(alone)} failed, queued again on its own:`,
        (run.reason as Error).message,
      );
      await this.queue.enqueue(alone, taken.priority, id);
    }
  }

  stop(): void {
    this.stopped = true;
    this.queue.close();
  }
}

/** Connects and runs one worker until `stop`. */
export async function startWorker(options: WorkerOptions): Promise<{ stop(): Promise<void> }> {
  const bus = await Bus.connect(options.natsUrl, `memex-pipelines-${options.name}`);
  await bus.ensureStreams();
  const queue = new JobQueue(bus);
  await queue.ensure();
  const models = new ModelRegistry();
  await models.load(bus);
  const abort = new AbortController();
  const following = models.follow(bus, abort.signal).catch((error) => {
    if (!abort.signal.aborted) console.error(`pipelines worker ${options.name}: following models failed:`, error);
  });
  const worker = new Worker(
    queue,
    bus,
    new EventPublisher(bus, 'pipelines'),
    new BlobStore(options.blobsDir),
    models,
    options.name,
    options.retryBaseMs,
  );
  const running = worker.run();
  return {
    async stop() {
      worker.stop();
      abort.abort();
      await running;
      await following;
      await models.close();
      await bus.close();
    },
  };
}
