import { AckPolicy, DeliverPolicy, type ConsumerMessages, type JsMsg } from '@nats-io/jetstream';
import {
  ChatModelAdded,
  ItemDeleted,
  ItemIngested,
  ModelActivated,
  ModelAdded,
  NotePut,
  Tier0Upgraded,
  type EventOf,
} from '@memex/contracts';
import {
  consumeBatches,
  decodeEvent,
  ensureDurable,
  EVENT_SUBJECT_ROOT,
  EventRoutes,
  EVENTS_STREAM,
  isNotFound,
  typeOfSubject,
  type Bus,
} from '@memex/bus';
import { chatModelId, type ModelRegistry } from '../domain/models/registry.js';
import type { Lanes } from '../domain/understanding/lanes.js';
import { TASK_NAMES, TASKS, taskFits, type TaskName } from '../domain/understanding/tasks.js';
import { eraseDerived } from './log.js';
import type { JobQueue, Priority, StructureJob, TextJob, UnderstandJob } from './queue.js';
import { readingsAdded } from '../domain/structure/tier0-upgrade.js';

const DURABLE = 'pipelines_scheduler';
const CONSUMER = {
  durable_name: DURABLE,
  ack_policy: AckPolicy.All,
  filter_subject: `${EVENT_SUBJECT_ROOT}.>`,
  max_ack_pending: 10_000,
  ack_wait: 60_000_000_000,
};
const BATCH = 256;
const DAY_MS = 24 * 60 * 60 * 1000;

/** The Msg-Id of a structure job of the scheduler's: an item version is read by tier 0 once. */
export function structureJobId(job: StructureJob): string {
  return `structure|${job.item_id}|${job.revision}`;
}

/** The Msg-Id of a text job: the same item version for the same spaces is queued once. */
export function textJobId(job: TextJob): string {
  return `text|${job.item_id}|${job.revision}|${job.all_spaces ? '*' : ''}${job.spaces.join(',')}${job.structure ? '|structure' : ''}`;
}

/**
 * Seed §5's order: what a user just touched (notes), new arrivals and starred items, then recent
 * before old by when the item happened relative to when it arrived.
 */
export function priorityOf(event: EventOf<typeof ItemIngested> | EventOf<typeof NotePut>): Priority {
  if (event.type === 'note.put') return 'touched';
  if (event.data.kind === 'email' && event.data.meta.flags.starred) return 'new';
  const age = Date.parse(event.recorded_at) - Date.parse(event.occurred_at);
  if (age <= 7 * DAY_MS) return 'new';
  if (age <= 365 * DAY_MS) return 'recent';
  return 'old';
}

/**
 * Turns the log into tier-1 jobs: a durable consumer on the events stream (its position is kept
 * by JetStream, so a restart resumes where it stopped), acknowledging only after the jobs are
 * queued. It also erases tier 1's events about deleted items and follows the model registry in
 * log order, so an item that arrives after a model is added is embedded into that model's space.
 */
export class Scheduler {
  private messages: ConsumerMessages | undefined;
  private loop: Promise<void> | undefined;
  private stopped = false;
  /** Where the consumer `consume` deleted is to start again, until it is made. */
  private remakeFrom: number | undefined;
  /** Stops listening for the connection's next reconnection. */
  private offReconnect: (() => void) | undefined;
  /** Why reading the log stopped, until it reads again. */
  private stoppedOn: { since: Date; error: string } | undefined;
  private readonly routes = new EventRoutes<[number]>()
    .on(ModelAdded, async (event, seq) => {
      await this.models.apply(event);
      // Every item logged so far goes into the new space, in the background.
      await this.queue.enqueue(
        { task: 'backfill', space: event.data.space, until_seq: seq },
        'background',
        `backfill|${event.id}`,
      );
    })
    .on(ModelActivated, (event) => this.models.apply(event))
    .on(ChatModelAdded, (event) => this.models.apply(event))
    .on(NotePut, (event, seq) =>
      // Notes have no revision number: each put is newer than the last, so its sequence serves.
      this.enqueueText(event, event.data.id, seq, seq),
    )
    .on(ItemIngested, (event, seq) => this.enqueueText(event, event.data.id, event.data.revision, seq))
    .on(ItemDeleted, (event) => eraseDerived(this.bus, event.data.id))
    // Tier 0 gained readings: every item logged before is read again by them, in the background.
    .on(Tier0Upgraded, (event, seq) =>
      this.queue.enqueue(
        {
          task: 'structure_backfill',
          version: event.data.version,
          readings: readingsAdded(event.data.version),
          until_seq: seq,
        },
        'background',
        `tier0|${event.id}`,
      ),
    );

  constructor(
    private readonly bus: Bus,
    private readonly queue: JobQueue,
    private readonly models: ModelRegistry,
    private readonly lanes: Lanes,
  ) {}

  async start(): Promise<void> {
    this.stopped = false;
    await ensureDurable(this.bus, { ...CONSUMER, deliver_policy: DeliverPolicy.All });
    await this.consume();
  }

  /**
   * While the scheduler cannot read the log (its consumer deleted: made again from the start it
   * would queue every item's jobs again, so it is not; a restart of the service makes it), new
   * items get no jobs: health says so.
   */
  async healthProblems(): Promise<string[]> {
    const { stoppedOn } = this;
    return stoppedOn
      ? [
          `the job scheduler has not read the log since ${stoppedOn.since.toISOString()} (${stoppedOn.error}): new items get no passages or vectors; it tries again every second`,
        ]
      : [];
  }

  /**
   * Reads on from the consumer's ack floor, in a consumer made again there: events delivered past
   * it and never acknowledged (sent into a connection that died, or read by a process that
   * stopped) come again now, in order, rather than after the ack wait, behind later ones whose
   * acknowledgement (ack policy `all`) would have counted them done unread.
   */
  private async consume(): Promise<void> {
    // Kept until the consumer is made again: a retry after a failure between the delete and the
    // add (NATS going away) must not take a missing consumer for one deleted by hand.
    this.remakeFrom ??= await this.ackFloorNext();
    await this.bus.jsm.consumers.delete(EVENTS_STREAM, DURABLE).catch((error: unknown) => {
      if (!isNotFound(error)) throw error;
    });
    await this.bus.jsm.consumers.add(EVENTS_STREAM, {
      ...CONSUMER,
      deliver_policy: DeliverPolicy.StartSequence,
      opt_start_seq: this.remakeFrom,
    });
    this.remakeFrom = undefined;
    const consumer = await this.bus.js.consumers.get(EVENTS_STREAM, DURABLE);
    // A deleted consumer stops the loop, into health, rather than being retried quietly for ever.
    const messages = await consumer.consume({ max_messages: 1000, abort_on_missing_resource: true });
    this.messages = messages;
    this.stoppedOn = undefined;
    // Connected again after a drop: what the dropped connection was sent comes again now, not after the ack wait.
    this.offReconnect?.();
    this.offReconnect = this.bus.onReconnect(() => void this.readAgain());
    this.loop = consumeBatches(messages, BATCH, async (batch) => {
      await Promise.all(batch.map((msg) => this.handle(msg)));
    }).catch((error: unknown) => this.failed(error));
  }

  /** Reads again from the ack floor now (see `consume`). */
  private async readAgain(): Promise<void> {
    if (this.stopped) return;
    this.messages?.stop();
    await this.loop;
    if (!this.stopped) await this.consume().catch((error: unknown) => this.failed(error));
  }

  /** Nothing past the last ack counts as done: reading starts again from there a second later. */
  private failed(error: unknown): void {
    if (this.stopped) return;
    // Once, not every second.
    if (!this.stoppedOn) console.error('pipelines scheduler:', error);
    this.stoppedOn ??= { since: new Date(), error: error instanceof Error ? error.message : String(error) };
    setTimeout(() => void this.consume().catch((again: unknown) => this.failed(again)), 1000);
  }

  /** The first event past the consumer's ack floor (until its first acknowledgement, the floor is 0 wherever it started). */
  private async ackFloorNext(): Promise<number> {
    const { ack_floor, config } = await this.bus.jsm.consumers.info(EVENTS_STREAM, DURABLE);
    return Math.max(ack_floor.stream_seq + 1, config.opt_start_seq ?? 1);
  }

  private async handle(msg: JsMsg): Promise<void> {
    // Every event comes (one filter: NATS 2.9); those of no route are skipped by their subject, undecoded.
    if (!this.routes.handles(typeOfSubject(msg.subject))) return;
    await this.routes.dispatch(decodeEvent(msg.data), msg.seq);
  }

  private async enqueueText(
    event: EventOf<typeof ItemIngested> | EventOf<typeof NotePut>,
    itemId: string,
    revision: number,
    seq: number,
  ): Promise<void> {
    const job: TextJob = {
      task: 'text',
      item_id: itemId,
      revision,
      source_seq: seq,
      spaces: this.models.spaces(),
      all_spaces: true,
      structure: true,
    };
    await this.queue.enqueue(job, priorityOf(event), textJobId(job));
    if (event.type === 'item.ingested') {
      // A model reads only what has text, and never spam (it costs, and it is someone else's words).
      const { data } = event;
      if (data.text_length === 0 || (data.kind === 'email' && data.meta.spam)) return;
      await this.enqueueUnderstand(event.data.kind, itemId, revision, seq, priorityOf(event));
    } else {
      await this.enqueueUnderstand('note', itemId, revision, seq, priorityOf(event));
    }
  }

  /**
   * Tier 2: the item's tasks, each routed to the chat model registered for its capability and
   * the item's kind (seed §5), one job per model. Nothing when no chat model is registered.
   */
  private async enqueueUnderstand(
    kind: string,
    itemId: string,
    revision: number,
    seq: number,
    priority: Priority,
  ): Promise<void> {
    const byModel = new Map<string, TaskName[]>();
    for (const task of TASK_NAMES) {
      if (!taskFits(task, kind)) continue;
      const model = this.models.routeChat(TASKS[task].capability, kind);
      if (!model) continue;
      const id = chatModelId(model);
      byModel.set(id, [...(byModel.get(id) ?? []), task]);
    }
    for (const [model, tasks] of byModel) {
      const job: UnderstandJob = { task: 'understand', item_id: itemId, revision, source_seq: seq, tasks, model };
      await (await this.lanes.queue(model)).enqueue(job, priority, `understand|${itemId}|${revision}|${model}`);
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.offReconnect?.();
    this.messages?.stop();
    await this.loop;
  }
}
