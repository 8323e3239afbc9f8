import { AckPolicy, type MsgRequest } from '@nats-io/jetstream';
import { createInbox, type Msg, type Subscription } from '@nats-io/transport-node';
import {
  decodeJson,
  encodeJson,
  ensureDurable,
  FAILED_JOB_SUBJECT_ROOT,
  failedJobSubject,
  JOB_LEASE_MS,
  JOB_SUBJECT_ROOT,
  JOBS_STREAM,
  Leases,
  type Bus,
} from '@memex/bus';

/**
 * Priorities, highest first (seed §5): what a user just touched, new arrivals, then recent
 * before old by when the item happened, then background work (filling a new embedding space).
 */
export const PRIORITIES = ['touched', 'new', 'recent', 'old', 'background'] as const;
export type Priority = (typeof PRIORITIES)[number];

/** Tier 1 tasks: `text` splits and embeds one item; `backfill` queues every item for a new space. */
export type TextJob = {
  task: 'text';
  item_id: string;
  revision: number;
  /** Sequence of the item.ingested / note.put event the job works from. */
  source_seq: number;
  /** The embedding spaces to compute... */
  spaces: string[];
  /** ...and every other space the worker knows (new items go into every registered space). */
  all_spaces?: boolean;
  /**
   * Tier 0 on the same reading of the item (a new item's first job): one take, one read of its
   * event and of its text, rather than a `structure` job beside this one.
   */
  structure?: boolean;
};
export type BackfillJob = { task: 'backfill'; space: string; until_seq: number };
/** What tier 0 reads in an item, each published as its own event. */
export type Tier0Reading = 'structure' | 'paper' | 'commitments';
/**
 * Tier 0 (rules, no model) on one item; it rides the same queue and priorities as tier 1. A
 * re-read of an old item for a new tier-0 version names only the readings that version added.
 */
export type StructureJob = {
  task: 'structure';
  item_id: string;
  revision: number;
  source_seq: number;
  readings?: Tier0Reading[];
};
/** Every item logged before `until_seq` that `readings` apply to, read again for tier 0's `version`. */
export type StructureBackfillJob = {
  task: 'structure_backfill';
  version: string;
  readings: Tier0Reading[];
  until_seq: number;
};
/**
 * Tier 2 on one item with one chat model: each task is one request and one output event. A
 * re-run's jobs name it, so its progress can be counted.
 */
export type UnderstandJob = {
  task: 'understand';
  item_id: string;
  revision: number;
  source_seq: number;
  tasks: string[];
  /** NAME@VERSION of the chat model. */
  model: string;
  rerun_id?: string;
};
export type Job = TextJob | BackfillJob | StructureJob | StructureBackfillJob | UnderstandJob;

/** A job in a line of the log or of health. */
export function describeJob(job: Job): string {
  if (job.task === 'backfill') return `backfill of ${job.space}`;
  if (job.task === 'structure_backfill') return `tier-0 backfill for ${job.version}`;
  return `${job.task} job for item ${job.item_id} r${job.revision}`;
}

/**
 * Jobs travel in lanes: `t1` for tiers 0 and 1, `t2.<model>` for each chat model, so a model
 * whose budget is spent stops being taken from while every other lane goes on.
 */
export const TIER1_LANE = 't1';

/** `memex.job.<lane>.<task>.<priority>` (DESIGN.md §3). */
export function jobSubject(lane: string, task: Job['task'], priority: Priority): string {
  return `${JOB_SUBJECT_ROOT}.${lane}.${task}.${priority}`;
}

function durableName(lane: string, priority: Priority): string {
  return `pipelines_${lane.replace(/[^A-Za-z0-9_-]/g, '_')}_${priority}`;
}

/** How long an ack waits for the server to confirm it. */
const ACK_CONFIRM_MS = 10_000;
/** A job failing this many times is set aside (a broken model would otherwise spin). */
export const MAX_ATTEMPTS = 5;
/** Why a job failed is kept to this length. */
const REASON_CHARS = 2000;

/** A job set aside after MAX_ATTEMPTS failures, as kept on MEMEX_JOBS until it is run again. */
export interface FailedJob {
  job: Job;
  priority: Priority;
  attempts: number;
  /** The last attempt's error. */
  reason: string;
  failed_at: string;
  /** The worker that gave up (`w1`, or a remote worker's name). */
  worker: string;
}

/** A job taken from the queue; ack only after its results are published. */
export interface TakenJob {
  job: Job;
  priority: Priority;
  /** 1 on first delivery. */
  attempt: number;
  ack(): Promise<void>;
  /** Give it back, to be retried after `delayMs`. */
  retry(delayMs: number): void;
  /** Drop it for good. */
  drop(): void;
  /**
   * It failed for good: keep it, with why, among the failed jobs (`memex jobs failed`), and take
   * it off the queue. Resolves once it is kept; a job that cannot be kept stays queued.
   */
  setAside(reason: string, worker: string): Promise<void>;
  /** Still working: restarts the ack timer. */
  working(): void;
}

/**
 * The tier-1 work queue on MEMEX_JOBS: one durable pull consumer per priority (NATS 2.9 allows
 * one filter subject per consumer), and takers that always try the highest priority first.
 * Any process with a NATS connection can take jobs: workers may run on other machines.
 */
export class JobQueue {
  private doorbell: Subscription | undefined;
  private readonly waiters = new Set<() => void>();
  private readonly leases: Leases;

  constructor(
    private readonly bus: Bus,
    readonly lane = TIER1_LANE,
    /** A job held by a process gone silent this long goes to another worker (its consumer's `ack_wait`). */
    private readonly leaseMs = JOB_LEASE_MS,
  ) {
    this.leases = new Leases(leaseMs);
  }

  /** Creates the consumers, or brings them to this lease (idempotent; safe from every process). */
  async ensure(): Promise<void> {
    for (const priority of PRIORITIES) {
      await ensureDurable(
        this.bus,
        {
          durable_name: durableName(this.lane, priority),
          ack_policy: AckPolicy.Explicit,
          filter_subject: `${JOB_SUBJECT_ROOT}.${this.lane}.*.${priority}`,
          ack_wait: this.leaseMs * 1_000_000,
          max_ack_pending: -1,
        },
        JOBS_STREAM,
      );
    }
  }

  /** Queues a job; the same `id` within the queue's dedupe window is queued once. */
  async enqueue(job: Job, priority: Priority, id: string): Promise<void> {
    await this.bus.js.publish(jobSubject(this.lane, job.task, priority), encodeJson(job), {
      msgID: id,
      timeout: 10_000,
    });
  }

  /** Waiting and unacknowledged jobs per priority. */
  async backlog(): Promise<Array<{ priority: Priority; waiting: number; in_progress: number }>> {
    return Promise.all(
      PRIORITIES.map(async (priority) => {
        const info = await this.bus.jsm.consumers.info(JOBS_STREAM, durableName(this.lane, priority));
        return { priority, waiting: info.num_pending, in_progress: info.num_ack_pending };
      }),
    );
  }

  /**
   * The next jobs (up to `batch`) of the highest priority that has any; waits (up to `idleMs`,
   * then answers none) when every queue is empty. A core-NATS subscription to the job subjects
   * rings when work arrives.
   */
  async take(idleMs: number, batch = 1): Promise<TakenJob[]> {
    this.doorbell ??= this.bus.nc.subscribe(`${JOB_SUBJECT_ROOT}.${this.lane}.>`, { callback: () => this.ring() });
    // Armed before looking, so a job queued while we look still wakes us.
    let wake!: () => void;
    const rang = new Promise<void>((resolve) => (wake = resolve));
    this.waiters.add(wake);
    try {
      const taken = await this.pullHighest(batch);
      if (taken.length > 0) return taken;
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([rang, new Promise((resolve) => (timer = setTimeout(resolve, idleMs)))]);
      clearTimeout(timer);
    } finally {
      this.waiters.delete(wake);
    }
    return this.pullHighest(batch);
  }

  private async pullHighest(batch: number): Promise<TakenJob[]> {
    for (const priority of PRIORITIES) {
      const taken = await this.pull(priority, batch);
      if (taken.length > 0) return taken;
    }
    return [];
  }

  /**
   * Up to `batch` messages without waiting (`no_wait`), which the client library's fetch does
   * not offer: a plain request on the consumer's next-message subject with its own inbox (a
   * muxed inbox would not see messages that arrive under their original subjects). The server
   * ends a short batch with a 404/408 status message.
   */
  private async pull(priority: Priority, batch: number): Promise<TakenJob[]> {
    const inbox = createInbox();
    const subscription = this.bus.nc.subscribe(inbox, { max: batch + 1, timeout: 10_000 });
    this.bus.nc.publish(
      `$JS.API.CONSUMER.MSG.NEXT.${JOBS_STREAM}.${durableName(this.lane, priority)}`,
      encodeJson({ batch, no_wait: true }),
      {
        reply: inbox,
      },
    );
    const taken: TakenJob[] = [];
    try {
      for await (const msg of subscription) {
        const status = msg.headers?.code ?? 0;
        if (status === 404 || status === 408) break;
        if (status >= 400) throw new Error(`job queue ${priority}: ${status} ${msg.headers?.description ?? ''}`);
        if (!msg.reply) throw new Error(`job queue ${priority}: a message without an ack subject`);
        taken.push(this.taken(msg, priority));
        if (taken.length === batch) break;
      }
    } finally {
      subscription.unsubscribe();
    }
    return taken;
  }

  private taken(msg: Msg, priority: Priority): TakenJob {
    // $JS.ACK.<stream>.<consumer>.<delivered>.<stream seq>.<consumer seq>.<time>.<pending>
    const tokens = msg.reply!.split('.');
    const attempt = Number(tokens[4] ?? 1);
    const reply = (body: string) => this.bus.nc.publish(msg.reply!, body);
    const job = decodeJson<Job>(msg.data);
    // Renewed while this process holds it, however long it runs; released once it is settled.
    const release = this.leases.hold(() => reply('+WPI'));
    return {
      job,
      priority,
      attempt,
      // A confirmed ("double") ack: the server answers once it has applied the ack, so the job
      // is gone from the backlog when this resolves (a flush only says the server read it).
      ack: async () => {
        try {
          await this.bus.nc.request(msg.reply!, '+ACK', { timeout: ACK_CONFIRM_MS });
        } finally {
          release();
        }
      },
      retry: (delayMs) => {
        release();
        reply(`-NAK ${JSON.stringify({ delay: delayMs * 1_000_000 })}`);
        // Its redelivery rings no doorbell (nothing is published): wake the takers when it is due.
        setTimeout(() => this.ring(), delayMs + 10).unref();
      },
      drop: () => {
        release();
        reply('+TERM');
      },
      setAside: async (reason, worker) => {
        const failed: FailedJob = {
          job,
          priority,
          attempts: attempt,
          reason: reason.slice(0, REASON_CHARS),
          failed_at: new Date().toISOString(),
          worker,
        };
        try {
          // Keyed by the job's place in the stream: set aside again after a crash, it is kept once.
          await this.bus.js.publish(failedJobSubject(this.lane, job.task), encodeJson(failed), {
            msgID: `failed:${tokens[5]}`,
            timeout: 10_000,
          });
          await this.bus.nc.request(msg.reply!, '+TERM', { timeout: ACK_CONFIRM_MS });
        } finally {
          release();
        }
      },
      working: () => reply('+WPI'),
    };
  }

  /** This lane's failed jobs, oldest first (up to `limit`), and how many there are in all. */
  async failed(limit: number): Promise<{ total: number; jobs: Array<FailedJob & { seq: number }> }> {
    const filter = `${FAILED_JOB_SUBJECT_ROOT}.${this.lane}.>`;
    const { state } = await this.bus.jsm.streams.info(JOBS_STREAM, { subjects_filter: filter });
    const total = Object.values(state.subjects ?? {}).reduce((sum, n) => sum + n, 0);
    const jobs: Array<FailedJob & { seq: number }> = [];
    for (let seq = 1; jobs.length < Math.min(limit, total);) {
      // STREAM.MSG.GET takes `next_by_subj` since NATS 2.9; the client types it for direct gets only.
      const next = { seq, next_by_subj: filter } as unknown as MsgRequest;
      const stored = await this.bus.jsm.streams.getMessage(JOBS_STREAM, next);
      if (!stored) break;
      jobs.push({ seq: stored.seq, ...decodeJson<FailedJob>(stored.data) });
      seq = stored.seq + 1;
    }
    return { total, jobs };
  }

  /**
   * Queues failed jobs again at their priority (all, or those at `seqs`) and forgets their
   * failure; one that fails again is set aside again, with its new reason.
   */
  async retryFailed(seqs?: number[]): Promise<{ retried: number[]; gone: number[] }> {
    const wanted = seqs ?? (await this.failed(Number.MAX_SAFE_INTEGER)).jobs.map((failed) => failed.seq);
    const retried: number[] = [];
    const gone: number[] = [];
    for (const seq of wanted) {
      const stored = await this.bus.jsm.streams.getMessage(JOBS_STREAM, { seq });
      if (!stored || !stored.subject.startsWith(`${FAILED_JOB_SUBJECT_ROOT}.${this.lane}.`)) {
        gone.push(seq);
        continue;
      }
      const { job, priority } = decodeJson<FailedJob>(stored.data);
      // Queued before it is forgotten: a crash in between leaves it failed and queued, not lost.
      await this.enqueue(job, priority, `retry:${seq}`);
      await this.bus.jsm.streams.deleteMessage(JOBS_STREAM, seq, false);
      retried.push(seq);
    }
    return { retried, gone };
  }

  private ring(): void {
    for (const wake of this.waiters) wake();
  }

  close(): void {
    this.doorbell?.unsubscribe();
    this.doorbell = undefined;
    this.ring();
  }
}
