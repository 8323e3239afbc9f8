import { Logger } from '@nestjs/common';
import { AckPolicy, DeliverPolicy, type ConsumerMessages, type JsMsg } from '@nats-io/jetstream';
import {
  FacesDetected,
  isEventOf,
  ItemIngested,
  MediaAnalysisFailed,
  PhotoAnalyzed,
  PhotoTagged,
  VideoAnalyzed,
  type EventOf,
} from '@memex/contracts';
import type { BlobStore } from '@memex/blobs';
import {
  decodeEvent,
  ensureDurable,
  eventAt,
  EVENTS_STREAM,
  JOB_LEASE_MS,
  Leases,
  MEDIA_QUEUE_CONSUMER,
  typeFilter,
  type Bus,
  type EventPublisher,
} from '@memex/bus';
import type { PeopleSync } from '../commands/people.js';
import type { PhotoEventsPublisher } from './photo-events.js';
import type { FaceModel } from '../domain/faces/face-model.js';
import type { PlaceIndex } from '../domain/places.js';
import type { VisionCaptioner } from '../domain/tags/captions.js';
import type { ObjectTagger } from '../domain/tags/objects.js';
import { newWithinMsFromEnv, priorityOf, PriorityBuffer, WorkBudget } from './priorities.js';
import { analyzeTags, analyzeFaces, analyzePhoto, analyzeVideo, MEDIA_PIPELINE } from './analyze.js';
import { readWorkersThrough } from './original.js';

/** The durable consumer every media process shares: each photo goes to one of them (the sources service counts its backlog). */
const DURABLE = MEDIA_QUEUE_CONSUMER;
/** Photos read ahead of the workers, among which new ones go first (the window priorities act in). */
const READ_AHEAD = 128;
/** A photo failing this many times is given up (a broken file would spin), with media.analysis_failed. */
export const MAX_ATTEMPTS = 5;

/** A photo or video to analyse, from the queue or from the owner's retry. */
interface Job {
  event: EventOf<typeof ItemIngested>;
  /** The item.ingested event's place in the log: what a retry reads again. */
  ingestSeq: number;
  /** 1 on the first try. */
  attempt: number;
  /** Analysed: done with it. */
  done(): void;
  /** Failed: tried again in `ms` (by this worker or another). */
  again(ms: number): void;
  /** Failed its last attempt, and the failure is published: never again unless the owner retries. */
  giveUp(): void;
}

/**
 * A job from the queue: settled on its message, which NATS redelivers until acked or terminated;
 * its lease renewed until then, waiting in the buffer as much as being analysed.
 */
function queued(msg: JsMsg, event: EventOf<typeof ItemIngested>, leases: Leases): Job {
  const release = leases.hold(() => msg.working());
  return {
    event,
    ingestSeq: msg.seq,
    attempt: msg.info.deliveryCount,
    done: () => {
      release();
      msg.ack();
    },
    again: (ms) => {
      release();
      msg.nak(ms);
    },
    giveUp: () => {
      release();
      msg.term();
    },
  };
}

/** Photos analysed at once in this process (MEMEX_MEDIA_WORKERS, default 2; libvips threads under each). */
export function mediaWorkersFromEnv(): number {
  const n = Number(process.env['MEMEX_MEDIA_WORKERS'] ?? 2);
  return Number.isInteger(n) && n > 0 ? n : 2;
}

export interface PhotoJobsOptions {
  /** Photos analysed at once in this process. */
  workers: number;
  /** A failed photo is tried again after this × 2^attempt ms (1000 in service; tests shorten it). */
  retryBaseMs: number;
}

/** How long after the queue stopped on an error it is opened again. */
const REOPEN_MS = 5_000;

/**
 * The media pipeline's work queue (photos and videos): a durable pull consumer on item.ingested shared by every
 * process running the media service, so `MEMEX_SERVICES=media` on another machine (a GPU box)
 * joining the same NATS takes its share. A photo is acked only after its analysis is published;
 * a crash hands it to another worker once its lease runs out (JOB_LEASE_MS). Each process reads up to READ_AHEAD
 * photos ahead and its workers take new ones first (taken within MEMEX_MEDIA_NEW_DAYS of
 * arriving), backfill as MEMEX_MEDIA_BACKFILL_PER_MINUTE allows. A photo failing MAX_ATTEMPTS
 * times is given up with media.analysis_failed (health and `memex photos failed` show it until
 * `memex photos retry` runs it again). The queue stopping on an error (its consumer deleted, the
 * connection closed) shows in health and is opened again, its durable made anew if it is gone.
 */
export class PhotoJobs {
  private readonly logger = new Logger('media:jobs');
  private messages: ConsumerMessages | undefined;
  private buffer: PriorityBuffer<Job> | undefined;
  private readonly budget = WorkBudget.fromEnv();
  private readonly newWithinMs = newWithinMsFromEnv();
  private readonly leases = new Leases();
  private loop: Promise<void> | undefined;
  private reopen: NodeJS.Timeout | undefined;
  private stopped = false;
  /** Why the queue stopped, while it is not open again. */
  private stoppedOn: { since: Date; error: string } | undefined;

  constructor(
    private readonly bus: Bus,
    private readonly publisher: EventPublisher,
    private readonly blobs: BlobStore,
    private readonly places: PlaceIndex,
    private readonly options: PhotoJobsOptions,
    /** Null when faces are off (MEMEX_FACE_MODEL=off). */
    private readonly faces: FaceModel | null,
    private readonly people: PeopleSync,
    /** What tags pictures: the offline object detector (null when MEMEX_OBJECT_TAGS=off) and a vision endpoint when configured. */
    private readonly tagging: { tagger: ObjectTagger | null; captioner: VisionCaptioner | null },
    private readonly photoEvents: PhotoEventsPublisher,
  ) {}

  async start(): Promise<void> {
    this.stopped = false;
    readWorkersThrough(this.bus.nc);
    await this.open();
  }

  /** The queue's trouble, for the service's health. */
  problems(): string[] {
    const { stoppedOn } = this;
    return stoppedOn
      ? [
          `the photo and video queue stopped at ${stoppedOn.since.toISOString()} (${stoppedOn.error}); it is opened again every ${REOPEN_MS / 1000} s`,
        ]
      : [];
  }

  /**
   * Runs the pipeline again on items it gave up on, each from its item.ingested event, as new
   * work (ahead of backfill) with its attempts counted afresh. Returns once they are queued.
   */
  async retry(items: Array<{ event: EventOf<typeof ItemIngested>; ingestSeq: number }>): Promise<void> {
    for (const item of items) await this.enqueue(this.retried(item.event, item.ingestSeq, 1));
  }

  /** A job the owner asked to run again: its attempts kept here, as no message counts them. */
  private retried(event: EventOf<typeof ItemIngested>, ingestSeq: number, attempt: number): Job {
    return {
      event,
      ingestSeq,
      attempt,
      done: () => undefined,
      again: (ms) => {
        const timer = setTimeout(() => {
          if (this.stopped) return;
          // The queue stopped meanwhile: the item stays among the failed ones, to be retried again.
          this.enqueue(this.retried(event, ingestSeq, attempt + 1)).catch((error: unknown) =>
            this.logger.warn(`the retry of ${event.data.id} was dropped: ${String(error)}`),
          );
        }, ms);
        timer.unref();
      },
      giveUp: () => undefined,
    };
  }

  private async enqueue(job: Job): Promise<void> {
    const { buffer } = this;
    if (!buffer || this.stoppedOn) throw new Error('the photo and video queue is not running (see health)');
    buffer.push(job, 'new');
    await buffer.room();
  }

  /** Opens the queue: its durable consumer (made again if gone), a reader into the buffer, the workers. */
  private async open(): Promise<void> {
    await ensureDurable(this.bus, {
      durable_name: DURABLE,
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
      filter_subject: typeFilter(ItemIngested.type),
      ack_wait: JOB_LEASE_MS * 1_000_000,
      max_ack_pending: 256,
    });
    const consumer = await this.bus.js.consumers.get(EVENTS_STREAM, DURABLE);
    // Without abort, a deleted consumer is retried silently forever and no photo is analysed again.
    const messages = await consumer.consume({ max_messages: READ_AHEAD, abort_on_missing_resource: true });
    this.messages = messages;
    const buffer = new PriorityBuffer<Job>(READ_AHEAD, this.budget);
    this.buffer = buffer;
    const reader = (async () => {
      for await (const msg of messages) {
        const event = this.decode(msg);
        if (!event || (event.data.kind !== 'photo' && event.data.kind !== 'video')) {
          msg.ack();
          continue;
        }
        buffer.push(queued(msg, event, this.leases), priorityOf(event, this.newWithinMs));
        await buffer.room();
      }
      if (!this.stopped) throw new Error('its consumer stopped delivering');
    })();
    const workers = Array.from({ length: this.options.workers }, async () => {
      for (let job = await buffer.take(); job; job = await buffer.take()) await this.handle(job);
    });
    this.stoppedOn = undefined;
    this.loop = Promise.all([reader, ...workers])
      .then(() => undefined)
      .catch((error: unknown) => this.failed(error));
  }

  /** An item.ingested event, or undefined (logged) for what the log holds that is not one. */
  private decode(msg: JsMsg): EventOf<typeof ItemIngested> | undefined {
    try {
      const event = decodeEvent(msg.data);
      return isEventOf(ItemIngested, event) ? event : undefined;
    } catch (error) {
      this.logger.error(`event ${msg.seq} on the photo queue does not decode, skipped: ${String(error)}`);
      return undefined;
    }
  }

  /** The queue stopped on an error: what it held goes back to NATS, and it is opened again shortly. */
  private failed(error: unknown): void {
    if (this.stopped) return;
    const why = error instanceof Error ? error.message : String(error);
    this.logger.error(`the photo and video queue stopped, opened again in ${REOPEN_MS / 1000} s: ${why}`);
    this.stoppedOn ??= { since: new Date(), error: why };
    this.close();
    this.reopen = setTimeout(() => {
      if (!this.stopped) this.open().catch((again: unknown) => this.failed(again));
    }, REOPEN_MS);
  }

  /** Stops reading; photos still waiting go back to the queue now (another worker, or this one next time). */
  private close(): void {
    this.messages?.stop();
    for (const job of this.buffer?.held() ?? []) job.again(0);
    this.buffer?.close();
  }

  private async handle(job: Job): Promise<void> {
    const { event, attempt } = job;
    try {
      await this.analyze(event, job.ingestSeq);
      job.done();
    } catch (error) {
      const why = error instanceof Error ? error.message : String(error);
      if (attempt < MAX_ATTEMPTS) {
        this.logger.warn(`${event.data.kind} ${event.data.id} failed (attempt ${attempt}), retried: ${why}`);
        job.again(this.options.retryBaseMs * 2 ** attempt);
        return;
      }
      this.logger.error(`${event.data.kind} ${event.data.id} given up after ${attempt} attempts: ${why}`);
      try {
        await this.publisher.publish(MediaAnalysisFailed, {
          subject: `item:${event.data.id}`,
          actor: { kind: 'pipeline', id: MEDIA_PIPELINE },
          labels: event.labels,
          causation_id: event.id,
          data: {
            item_id: event.data.id,
            revision: event.data.revision,
            reason: why.slice(0, 2000),
            attempts: attempt,
            ingest_seq: job.ingestSeq,
            ...(event.data.location ? { location: event.data.location } : {}),
          },
        });
        job.giveUp();
      } catch (publishing) {
        // Not given up unrecorded: it comes round again, and is given up once that can be said.
        this.logger.error(`could not record that ${event.data.id} was given up, retried: ${String(publishing)}`);
        job.again(this.options.retryBaseMs * 2 ** attempt);
      }
    }
  }

  /** A photo's renditions and place, or a video's keyframes and place, then what they show and their faces, each published once stored. */
  private async analyze(event: EventOf<typeof ItemIngested>, ingestSeq: number): Promise<void> {
    const draft = {
      subject: `item:${event.data.id}`,
      actor: { kind: 'pipeline' as const, id: MEDIA_PIPELINE },
      labels: event.labels,
      kind: event.data.kind,
      spam: event.spam ?? false,
      occurred_at: event.occurred_at,
      causation_id: event.id,
    };
    let analysis;
    if (event.data.kind === 'video') {
      analysis = await analyzeVideo(event, this.blobs, this.places);
      if (analysis)
        this.photoEvents.schedule((await this.publisher.publish(VideoAnalyzed, { ...draft, data: analysis })).seq);
    } else {
      analysis = await analyzePhoto(event, this.blobs, this.places);
      if (analysis)
        this.photoEvents.schedule((await this.publisher.publish(PhotoAnalyzed, { ...draft, data: analysis })).seq);
    }
    if (!analysis) {
      // Its bytes are gone. Deleted meanwhile (its events are erased before its blobs): nothing to
      // do. Otherwise its blob should be there (a blobs mount gone on a GPU box, a disk restored
      // without it): a failure, retried and at last recorded — not a photo quietly left pending.
      if (await eventAt(this.bus, ingestSeq))
        throw new Error(`the original of ${event.data.id} (blob ${event.data.content_sha256}) is missing`);
      return;
    }
    const { tagger, captioner } = this.tagging;
    if (tagger || captioner) {
      const tags = await analyzeTags(analysis, tagger, captioner, this.blobs);
      await this.publisher.publish(PhotoTagged, { ...draft, data: tags });
      if (tags.caption_problem) this.logger.warn(`no caption for ${event.data.id}: ${tags.caption_problem}`);
    }
    if (!this.faces) return;
    const faces = await analyzeFaces(analysis, this.faces, this.blobs);
    const { seq } = await this.publisher.publish(FacesDetected, { ...draft, data: faces });
    // A face that joined a named cluster puts that person in the photo, in the graph too.
    if (faces.faces.length > 0) await this.people.afterApplied(seq, [faces.item_id], draft.actor);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.reopen);
    this.close();
    await this.loop;
  }
}
