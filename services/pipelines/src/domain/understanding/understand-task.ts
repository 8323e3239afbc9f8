import { createHash } from 'node:crypto';
import {
  CommitmentExtracted,
  compile,
  ItemUnderstood,
  makerString,
  UnderstandingFailed,
  type Commitment,
  type DataOf,
  type Maker,
  type Usage,
} from '@memex/contracts';
import { readEventsOf, type Bus, type EventPublisher } from '@memex/bus';
import type { BlobStore } from '@memex/blobs';
import { eraseDerived, isDeleted } from '../../jobs/log.js';
import type { UnderstandJob } from '../../jobs/queue.js';
import { derivedDraft, readSource, type Source } from '../../jobs/source.js';
import { chatModelId, type ChatModelInfo, type ModelRegistry } from '../models/registry.js';
import type { Budgets, Pause } from './budgets.js';
import { credentialsProvider, type CredentialsProvider } from '@memex/credentials';
import { ChatEndpoint, modelApiKey, RateLimited } from './chat.js';
import { promptHash, TASKS, userMessage, type Answer, type TaskName } from './tasks.js';

/** A model answer that does not parse or match the schema is asked again this many times in all. */
export const MALFORMED_ATTEMPTS = 3;
/** 429s a task rides out (waiting as told) before its job is given back to the queue. */
const RATE_LIMITED_WAITS = 3;
/** A 429 asking for longer than this gives the job back instead of holding a request slot. */
const MAX_INLINE_WAIT_MS = 5_000;

/** The model's budget is spent: the job goes back to the queue until the pause ends. */
export class BudgetPaused extends Error {
  constructor(readonly pause: Pause) {
    super(`paused until ${pause.until.toISOString()}: ${pause.because}`);
  }
}

export interface TaskOutcome {
  task: TaskName;
  ok: boolean;
  usage: Usage;
}

const validators = Object.fromEntries(Object.entries(TASKS).map(([task, spec]) => [task, compile(spec.schema)])) as {
  [T in TaskName]: ReturnType<typeof compile<(typeof TASKS)[T]['schema']>>;
};

/** The maker of a task's outputs with a model: the model, its version and the prompt's hash. */
export function makerOf(task: TaskName, model: ChatModelInfo): Maker {
  return { task, model: model.name, version: model.version, hash: promptHash(TASKS[task]) };
}

/**
 * One tier-2 job: for each of its tasks, one question to the chat model about the item, the
 * answer checked against the task's schema (asked again when malformed, then failed visibly as
 * `understanding.failed`), and one output event carrying its maker and spend. A task already
 * answered by this maker for this revision (a redelivered job) is not asked again: its event id
 * derives from the job, and the log is looked at first.
 */
export class UnderstandTask {
  constructor(
    private readonly bus: Bus,
    private readonly publisher: EventPublisher,
    private readonly blobs: BlobStore,
    private readonly budgets: Budgets,
    private readonly models: ModelRegistry,
    private readonly sleep: (ms: number) => Promise<void> = (ms) => new Promise((r) => setTimeout(r, ms)),
    private readonly credentials: CredentialsProvider = credentialsProvider(bus),
  ) {}

  async run(job: UnderstandJob, model: ChatModelInfo): Promise<TaskOutcome[]> {
    const source = await readSource(this.bus, this.blobs, job);
    if (!source) return [];
    const text = await source.text();
    if (text === undefined || text.trim() === '') return [];
    const endpoint = new ChatEndpoint(model, await modelApiKey(this.credentials, model.name));
    const user = userMessage(source.title, source.event.occurred_at, text);
    const outcomes: TaskOutcome[] = [];
    // A redelivered job does not pay twice, and a routine job late in an old version's lane leaves
    // alone what a newer version made (a re-run asks explicitly, so it always runs).
    const answered = job.rerun_id ? new Set<string>() : await this.answeredTasks(source, model);
    for (const task of job.tasks as TaskName[]) {
      if (!(task in TASKS)) throw new Error(`unknown tier-2 task "${task}"`);
      if (answered.has(task)) continue;
      outcomes.push(await this.runTask(task, job, source, text, user, endpoint));
    }
    if (await isDeleted(this.bus, job.item_id)) await eraseDerived(this.bus, job.item_id);
    return outcomes;
  }

  /**
   * Tasks the log already answers for the item: by this very maker for this revision, or by a
   * model registered after this one (for any revision).
   */
  private async answeredTasks(source: Source, model: ChatModelInfo): Promise<Set<string>> {
    const order = this.models.chats().map(chatModelId);
    const rank = (id: string) => order.indexOf(id);
    const mine = rank(chatModelId(model));
    const answered = new Set<string>();
    const consider = (task: string, madeBy: string, revision: number) => {
      const maker = /^t2-[a-z0-9_-]+@([^/]+)\/([^#]+)#/.exec(madeBy);
      if (!maker) return;
      const by = rank(`${maker[1]}@${maker[2]}`);
      const same = madeBy === makerString(makerOf(task as TaskName, model)) && revision === source.revision;
      if (by > mine || same) answered.add(task);
    };
    const about = { aggregate: `item:${source.itemId}`, untilCaughtUp: true };
    for await (const { event } of readEventsOf(this.bus, ItemUnderstood, about)) {
      consider(event.data.task, makerString(event.data.made_by), event.data.revision);
    }
    for await (const { event } of readEventsOf(this.bus, CommitmentExtracted, about)) {
      consider('commitments', event.data.made_by, event.data.revision);
    }
    return answered;
  }

  private async runTask(
    task: TaskName,
    job: UnderstandJob,
    source: Source,
    text: string,
    user: string,
    endpoint: ChatEndpoint,
  ): Promise<TaskOutcome> {
    const model = endpoint.info;
    const id = chatModelId(model);
    const maker = makerOf(task, model);
    const spec = TASKS[task];
    const usage: Usage = { requests: 0, tokens: 0, cost: 0 };
    let problem = '';
    let waits = 0;
    for (let attempt = 1; attempt <= MALFORMED_ATTEMPTS;) {
      const pause = this.budgets.startRequest(id, model.budget);
      if (pause) throw new BudgetPaused(pause);
      let reply;
      try {
        reply = await endpoint.ask({ system: spec.system, user, schemaName: task, schema: spec.schema });
      } catch (error) {
        if (!(error instanceof RateLimited)) throw error;
        this.budgets.hold(id, error.retryAfterMs);
        if (error.retryAfterMs > MAX_INLINE_WAIT_MS || ++waits > RATE_LIMITED_WAITS) {
          throw new BudgetPaused({ until: new Date(Date.now() + error.retryAfterMs), because: error.message });
        }
        await this.sleep(error.retryAfterMs);
        continue;
      }
      const spent = this.budgets.charge(id, reply.tokens, model.cost_per_1k_tokens);
      usage.requests += 1;
      usage.tokens += spent.tokens;
      usage.cost += spent.cost;
      attempt++;
      let answer: unknown;
      try {
        answer = JSON.parse(reply.content);
      } catch {
        problem = `the answer is not JSON: ${reply.content.slice(0, 120)}`;
        continue;
      }
      const validator = validators[task];
      if (!validator.check(answer)) {
        problem = `the answer does not match the ${task} schema: ${validator.problems(answer).slice(0, 3).join('; ')}`;
        continue;
      }
      await this.publishOutput(task, job, source, text, maker, usage, answer);
      return { task, ok: true, usage };
    }
    await this.publishFailure(
      source,
      job,
      maker,
      usage,
      `${id} gave no usable answer in ${MALFORMED_ATTEMPTS} tries: ${problem}`,
    );
    return { task, ok: false, usage };
  }

  /** Every task of a job whose endpoint kept failing fails visibly. */
  async failAll(job: UnderstandJob, model: ChatModelInfo, reason: string): Promise<void> {
    const source = await readSource(this.bus, this.blobs, job);
    if (!source) return;
    for (const task of job.tasks as TaskName[]) {
      await this.publishFailure(source, job, makerOf(task, model), { requests: 0, tokens: 0, cost: 0 }, reason);
    }
  }

  private async publishFailure(source: Source, job: UnderstandJob, maker: Maker, usage: Usage, reason: string) {
    await this.publisher.publishAll([
      derivedDraft(
        source,
        {
          definition: UnderstandingFailed,
          key: `understand-failed|${maker.task}|${source.revision}|${makerString(maker)}|${job.rerun_id ?? ''}`,
          data: {
            item_id: source.itemId,
            task: maker.task,
            made_by: maker,
            usage,
            reason: reason.slice(0, 2000),
            ...(job.rerun_id ? { rerun_id: job.rerun_id } : {}),
          },
        },
        makerString(maker),
      ),
    ]);
  }

  private async publishOutput(
    task: TaskName,
    job: UnderstandJob,
    source: Source,
    text: string,
    maker: Maker,
    usage: Usage,
    answer: unknown,
  ): Promise<void> {
    const made = makerString(maker);
    const key = `understand|${task}|${source.revision}|${made}|${job.rerun_id ?? ''}`;
    const rerun = job.rerun_id ? { rerun_id: job.rerun_id } : {};
    if (task === 'commitments') {
      const { commitments } = answer as Answer<'commitments'>;
      await this.publisher.publishAll([
        derivedDraft(
          source,
          {
            definition: CommitmentExtracted,
            key,
            data: {
              item_id: source.itemId,
              revision: source.revision,
              made_by: made,
              commitments: commitments.flatMap((c) => commitmentOf(c, text)),
              usage,
              ...rerun,
            },
          },
          made,
        ),
      ]);
      return;
    }
    const data: DataOf<typeof ItemUnderstood> = {
      item_id: source.itemId,
      revision: source.revision,
      task,
      made_by: maker,
      usage,
      ...rerun,
      ...outputOf(task, answer),
    };
    await this.publisher.publishAll([derivedDraft(source, { definition: ItemUnderstood, key, data }, made)]);
  }
}

const clip = (text: string, max: number) => (text.length > max ? text.slice(0, max) : text);
const quoteOf = (quote: string) => (quote.trim() ? { quote: clip(quote.trim(), 500) } : {});

/** A task's answer as `item.understood` carries it (trimmed to the event's limits; empty names dropped). */
function outputOf(task: Exclude<TaskName, 'commitments'>, answer: unknown): Partial<DataOf<typeof ItemUnderstood>> {
  switch (task) {
    case 'summary':
      return { summary: clip((answer as Answer<'summary'>).summary.trim(), 4000) };
    case 'topics':
      return {
        topics: (answer as Answer<'topics'>).topics
          .filter((t) => t.name.trim())
          .slice(0, 50)
          .map((t) => ({ name: clip(t.name.trim(), 200), ...quoteOf(t.quote) })),
      };
    case 'entities':
      return {
        entities: (answer as Answer<'entities'>).entities
          .filter((e) => e.name.trim())
          .slice(0, 200)
          .map((e) => ({
            kind: e.kind,
            name: clip(e.name.trim(), 300),
            ...(e.key.trim() ? { key: clip(e.key.trim().toLowerCase(), 300) } : {}),
            ...quoteOf(e.quote),
          })),
      };
    case 'claims':
      return {
        claims: (answer as Answer<'claims'>).claims
          .filter((c) => c.text.trim())
          .slice(0, 100)
          .map((c) => ({ text: clip(c.text.trim(), 1000), ...quoteOf(c.quote) })),
      };
  }
}

/**
 * A model's commitment in the shape tier 0's rules give (one event type for both): the quote is
 * found in the text for its span (a quote the text does not hold is not evidence, so the
 * commitment is left out), and the key is stable across models and versions for the same promise.
 */
function commitmentOf(c: Answer<'commitments'>['commitments'][number], text: string): Commitment[] {
  const quote = c.quote.trim();
  const start = quote ? text.indexOf(quote) : -1;
  if (start < 0 || !c.what.trim()) return [];
  const party = (p: { address: string; name: string }) => ({
    address: p.address.trim().toLowerCase(),
    ...(p.name.trim() ? { name: clip(p.name.trim(), 200) } : {}),
  });
  const by = c.by.map(party);
  return [
    {
      key: createHash('sha256')
        .update(`${start}|${by.map((p) => p.address || p.name).join(',')}`)
        .digest('hex')
        .slice(0, 16),
      kind: c.kind,
      by,
      to: c.to.map(party),
      what: clip(c.what.trim(), 500),
      due: /^\d{4}-\d{2}-\d{2}/.test(c.due.trim()) ? c.due.trim() : null,
      due_text: c.due_text.trim() ? clip(c.due_text.trim(), 200) : null,
      quote: clip(quote, 1000),
      start,
      end: start + quote.length,
      confidence: 0.6,
    },
  ];
}
