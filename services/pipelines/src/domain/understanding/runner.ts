import {
  CommitmentExtracted,
  ItemUnderstood,
  RerunStarted,
  SynthesisMade,
  UnderstandingFailed,
  type EventDefinition,
  type EventOf,
  type Usage,
} from '@memex/contracts';
import { readEventsOf, type Bus, type EventPublisher } from '@memex/bus';
import type { BlobStore } from '@memex/blobs';
import { MAX_ATTEMPTS, type TakenJob, type UnderstandJob } from '../../jobs/queue.js';
import { chatModelId, type ChatModelInfo, type ModelRegistry } from '../models/registry.js';
import { Budgets, type Pause } from './budgets.js';
import type { Lanes } from './lanes.js';
import { BudgetPaused, UnderstandTask } from './understand-task.js';

/** `MEMEX_TIER2_CONCURRENCY`: requests in flight per chat model (they mostly wait on the endpoint). */
export function tier2ConcurrencyFromEnv(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.MEMEX_TIER2_CONCURRENCY;
  if (raw === undefined || raw === '') return 4;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1)
    throw new Error(`MEMEX_TIER2_CONCURRENCY must be a positive integer, got "${raw}"`);
  return value;
}

/** A re-run's progress: its jobs are task runs (an item and a task), each ending in an output or a failure. */
interface RerunProgress {
  rerun_id: string;
  model: string;
  jobs: number;
  done: number;
  failed: number;
}

/** How often a paused lane, or the list of chat models, is looked at again. */
const POLL_MS = 500;

/**
 * Tier 2 (seed §5): one lane per chat model, each taking up to `concurrency` jobs at a time so
 * requests overlap. A lane whose model's budget is spent takes nothing until the window turns;
 * every other lane (and tiers 0 and 1) goes on. Runs in the pipelines process: its work is
 * waiting on endpoints, and the budgets it keeps are this process's (read back from the log at
 * start, so a restart does not grant a new day).
 */
export class UnderstandingRunner {
  private readonly lanes = new Map<string, Promise<void>>();
  private readonly pauses = new Map<string, Pause>();
  private readonly reruns = new Map<string, RerunProgress>();
  private readonly totals = { done: 0, failed: 0, lastFailure: null as string | null };
  private stopped = false;
  private watcher: NodeJS.Timeout | undefined;
  private readonly task: UnderstandTask;

  constructor(
    private readonly bus: Bus,
    publisher: EventPublisher,
    blobs: BlobStore,
    private readonly models: ModelRegistry,
    private readonly queues: Lanes,
    readonly budgets: Budgets,
    private readonly concurrency: number,
  ) {
    this.task = new UnderstandTask(bus, publisher, blobs, budgets, models);
  }

  /**
   * Lanes start once today's spend is read back from the log (a scan of tier 2's outputs: on a
   * large memex, seconds), in the background so the service is up meanwhile.
   */
  async start(): Promise<void> {
    this.stopped = false;
    const watch = () => {
      for (const model of this.models.chats()) this.startLane(model);
      if (!this.stopped) this.watcher = setTimeout(watch, POLL_MS);
    };
    this.starting = this.readLog().then(watch, (error: Error) => {
      // Without the day's spend a budget could be overrun: no lane starts, and health says so.
      this.faults.set('start', `tier 2 is not running: reading its spend back from the log failed: ${error.message}`);
      console.error('pipelines tier 2:', error);
    });
  }

  private starting: Promise<void> | undefined;
  /** What keeps tier 2 from running (a lane that stopped, a failed start): in the service's health. */
  private readonly faults = new Map<string, string>();

  /** The service's health (and so /healthz) lists these. */
  async healthProblems(): Promise<string[]> {
    return [...this.faults.values()];
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.starting;
    clearTimeout(this.watcher);
    this.queues.close();
    await Promise.all(this.lanes.values());
  }

  /** Today's spend and the re-runs' progress as the log holds them. */
  private async readLog(): Promise<void> {
    const spent = async <E extends EventDefinition>(definition: E, count: (event: EventOf<E>) => void) => {
      for await (const { event } of readEventsOf(this.bus, definition, { untilCaughtUp: true })) count(event);
    };
    const record = (model: string | undefined, usage: Usage | undefined, at: string) => {
      if (model && usage) this.budgets.record(model, usage, new Date(at));
    };
    await spent(RerunStarted, ({ data }) => {
      this.reruns.set(data.rerun_id, {
        rerun_id: data.rerun_id,
        model: data.model,
        jobs: data.jobs,
        done: 0,
        failed: 0,
      });
    });
    await spent(ItemUnderstood, ({ data, recorded_at }) => {
      record(`${data.made_by.model}@${data.made_by.version}`, data.usage, recorded_at);
      this.countRerun(data.rerun_id, true);
    });
    await spent(UnderstandingFailed, ({ data, recorded_at }) => {
      record(`${data.made_by.model}@${data.made_by.version}`, data.usage, recorded_at);
      this.countRerun(data.rerun_id, false);
    });
    await spent(CommitmentExtracted, ({ data, recorded_at }) => {
      record(modelOfMaker(data.made_by), data.usage, recorded_at);
      if (data.usage) this.countRerun(data.rerun_id, true);
    });
    await spent(SynthesisMade, ({ data, recorded_at }) =>
      record(`${data.made_by.model}@${data.made_by.version}`, data.usage, recorded_at),
    );
  }

  /** A re-run was queued (by this process): its progress starts counting. */
  rerunStarted(progress: Omit<RerunProgress, 'done' | 'failed'>): void {
    this.reruns.set(progress.rerun_id, { ...progress, done: 0, failed: 0 });
  }

  private countRerun(rerunId: string | undefined, ok: boolean): void {
    const rerun = rerunId ? this.reruns.get(rerunId) : undefined;
    if (rerun) rerun[ok ? 'done' : 'failed']++;
  }

  private startLane(model: ChatModelInfo): void {
    const id = chatModelId(model);
    if (this.lanes.has(id) || this.stopped) return;
    this.lanes.set(
      id,
      this.runLane(id).catch((error: Error) => {
        // Taken up again by the next watch; said in health until it runs.
        console.error(`pipelines tier 2: the lane of ${id} stopped:`, error);
        this.faults.set(id, `tier 2's lane for ${id} stopped: ${error.message}`);
        this.lanes.delete(id);
      }),
    );
  }

  private async runLane(id: string): Promise<void> {
    const queue = await this.queues.queue(id);
    this.faults.delete(id);
    while (!this.stopped) {
      // Re-read each time: a re-registration may change the budget.
      const model = this.models.chat(id)!;
      const pause = this.budgets.paused(id, model.budget);
      if (pause) {
        this.pauses.set(id, pause);
        await sleep(POLL_MS);
        continue;
      }
      this.pauses.delete(id);
      const taken = await queue.take(POLL_MS, this.concurrency).catch((error: unknown) => {
        if (!this.stopped) console.error(`pipelines tier 2 ${id}: taking jobs failed:`, error);
        return [];
      });
      await Promise.all(taken.map((job) => this.process(job, model)));
    }
  }

  private async process(taken: TakenJob, model: ChatModelInfo): Promise<void> {
    const job = taken.job as UnderstandJob;
    try {
      const outcomes = await this.task.run(job, model);
      for (const outcome of outcomes) {
        this.totals[outcome.ok ? 'done' : 'failed']++;
        if (!outcome.ok) this.totals.lastFailure = `${outcome.task} of item ${job.item_id} with ${job.model}`;
        this.countRerun(job.rerun_id, outcome.ok);
      }
      await taken.ack();
    } catch (error) {
      if (error instanceof BudgetPaused) {
        this.pauses.set(job.model, error.pause);
        // Back in the queue; the lane takes nothing more until the pause ends.
        taken.retry(Math.min(Math.max(0, error.pause.until.getTime() - Date.now()), 30_000));
        return;
      }
      const message = (error as Error).message;
      if (taken.attempt < MAX_ATTEMPTS) {
        console.warn(
          `pipelines tier 2: ${job.model} on item ${job.item_id} failed (attempt ${taken.attempt}):`,
          message,
        );
        taken.retry(1000 * 2 ** taken.attempt);
        return;
      }
      await this.giveUp(job, model, message).catch((e) => console.error('pipelines tier 2:', e));
      taken.drop();
    }
  }

  /** The endpoint kept failing: each of the job's tasks fails visibly (no spend: no answer came). */
  private async giveUp(job: UnderstandJob, model: ChatModelInfo, reason: string): Promise<void> {
    this.totals.failed += job.tasks.length;
    this.totals.lastFailure = `item ${job.item_id} with ${job.model}: ${reason}`;
    for (let i = 0; i < job.tasks.length; i++) this.countRerun(job.rerun_id, false);
    await this.task.failAll(job, model, `${job.model} failed ${MAX_ATTEMPTS} times: ${reason}`);
  }

  /** What `memex jobs` shows of tier 2. */
  async status(): Promise<{
    waiting: number;
    in_progress: number;
    done: number;
    failed: number;
    last_failure: string | null;
    models: Array<{
      model: string;
      tasks: string[];
      spent_today: Usage;
      budget: ChatModelInfo['budget'];
      paused_until: string | null;
      paused_because: string | null;
    }>;
    reruns: Array<{ rerun_id: string; model: string; jobs: number; done: number; failed: number }>;
  }> {
    let waiting = 0;
    let inProgress = 0;
    const models = [];
    for (const model of this.models.chats()) {
      const id = chatModelId(model);
      for (const q of await (await this.queues.queue(id)).backlog()) {
        waiting += q.waiting;
        inProgress += q.in_progress;
      }
      const pause = this.budgets.paused(id, model.budget) ?? (this.lanes.has(id) ? undefined : this.pauses.get(id));
      models.push({
        model: id,
        tasks: model.tasks,
        spent_today: this.budgets.today(id),
        budget: model.budget,
        paused_until: pause?.until.toISOString() ?? null,
        paused_because: pause?.because ?? null,
      });
    }
    return {
      waiting,
      in_progress: inProgress,
      done: this.totals.done,
      failed: this.totals.failed,
      last_failure: this.totals.lastFailure,
      models,
      reruns: [...this.reruns.values()].map((r) => ({ ...r })),
    };
  }
}

/** `t2-topics@gpt/2#…` → `gpt@2` (tier 0's `commitments@1` has no model: undefined). */
function modelOfMaker(madeBy: string): string | undefined {
  const match = /^t2-[a-z0-9_-]+@([^/]+)\/([^#]+)#/.exec(madeBy);
  return match ? `${match[1]}@${match[2]}` : undefined;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
