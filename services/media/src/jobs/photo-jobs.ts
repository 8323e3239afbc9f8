import { Logger } from '@nestjs/common';
import { AckPolicy, DeliverPolicy, type ConsumerMessages, type JsMsg } from '@nats-io/jetstream';
import {
  FacesDetected,
  isEventOf,
  ItemIngested,
  PhotoAnalyzed,
  PhotoTagged,
  VideoAnalyzed,
  type EventOf,
} from '@memex/contracts';
import type { BlobStore } from '@memex/blobs';
import {
  decodeEvent,
  ensureDurable,
  EVENTS_STREAM,
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
/** A photo not acked within this time goes to another worker (a dead machine's work is not lost). */
const ACK_WAIT_MS = 5 * 60 * 1000;
/** Photos read ahead of the workers, among which new ones go first (the window priorities act in). */
const READ_AHEAD = 128;
/** How often photos waiting in the buffer tell NATS they are still being worked on. */
const KEEP_ALIVE_MS = 60_000;
/** A photo failing this many times is given up, with an error logged (a broken file would spin). */
export const MAX_ATTEMPTS = 5;

interface Job {
  msg: JsMsg;
  event: EventOf<typeof ItemIngested>;
}

/** Photos analysed at once in this process (MEMEX_MEDIA_WORKERS, default 2; libvips threads under each). */
export function mediaWorkersFromEnv(): number {
  const n = Number(process.env['MEMEX_MEDIA_WORKERS'] ?? 2);
  return Number.isInteger(n) && n > 0 ? n : 2;
}

/**
 * The media pipeline's work queue (photos and videos): a durable pull consumer on item.ingested shared by every
 * process running the media service, so `MEMEX_SERVICES=media` on another machine (a GPU box)
 * joining the same NATS takes its share. A photo is acked only after its analysis is published;
 * a crash hands it to another worker after ACK_WAIT_MS. Each process reads up to READ_AHEAD
 * photos ahead and its workers take new ones first (taken within MEMEX_MEDIA_NEW_DAYS of
 * arriving), backfill as MEMEX_MEDIA_BACKFILL_PER_MINUTE allows.
 */
export class PhotoJobs {
  private readonly logger = new Logger('media:jobs');
  private messages: ConsumerMessages | undefined;
  private buffer: PriorityBuffer<Job> | undefined;
  private readonly budget = WorkBudget.fromEnv();
  private readonly newWithinMs = newWithinMsFromEnv();
  private loop: Promise<void> | undefined;
  private stopped = false;
  /** Photos given up after MAX_ATTEMPTS (shown by the service's health). */
  failed = 0;

  constructor(
    private readonly bus: Bus,
    private readonly publisher: EventPublisher,
    private readonly blobs: BlobStore,
    private readonly places: PlaceIndex,
    private readonly concurrency: number,
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
    await ensureDurable(this.bus, {
      durable_name: DURABLE,
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
      filter_subject: typeFilter(ItemIngested.type),
      ack_wait: ACK_WAIT_MS * 1_000_000,
      max_ack_pending: 256,
    });
    const consumer = await this.bus.js.consumers.get(EVENTS_STREAM, DURABLE);
    const messages = await consumer.consume({ max_messages: READ_AHEAD });
    this.messages = messages;
    const buffer = new PriorityBuffer<Job>(READ_AHEAD, this.budget);
    this.buffer = buffer;
    // Photos read ahead wait in the buffer: their acknowledgement deadline is kept alive meanwhile.
    const keepAlive = setInterval(() => {
      for (const { msg } of buffer.held()) msg.working();
    }, KEEP_ALIVE_MS);
    const reader = (async () => {
      for await (const msg of messages) {
        const event = decodeEvent(msg.data);
        if (!isEventOf(ItemIngested, event) || (event.data.kind !== 'photo' && event.data.kind !== 'video')) {
          msg.ack();
          continue;
        }
        buffer.push({ msg, event }, priorityOf(event, this.newWithinMs));
        await buffer.room();
      }
    })();
    const workers = Array.from({ length: this.concurrency }, async () => {
      for (let job = await buffer.take(); job; job = await buffer.take()) await this.handle(job);
    });
    this.loop = Promise.all([reader, ...workers])
      .then(() => undefined)
      .catch((error) => {
        if (!this.stopped) this.logger.error(`the photo queue stopped: ${String(error)}`);
      })
      .finally(() => clearInterval(keepAlive));
  }

  private async handle({ msg, event }: Job): Promise<void> {
    try {
      await this.analyze(event);
      msg.ack();
    } catch (error) {
      const attempt = msg.info.deliveryCount;
      const why = error instanceof Error ? error.message : String(error);
      if (attempt >= MAX_ATTEMPTS) {
        this.failed++;
        this.logger.error(`photo ${event.data.id} given up after ${attempt} attempts: ${why}`);
        msg.term();
      } else {
        this.logger.warn(`photo ${event.data.id} failed (attempt ${attempt}), retried: ${why}`);
        msg.nak(1000 * 2 ** attempt);
      }
    }
  }

  /** A photo's renditions and place, or a video's keyframes and place, then what they show and their faces, each published once stored. */
  private async analyze(event: EventOf<typeof ItemIngested>): Promise<void> {
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
    if (!analysis) return;
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
    this.messages?.stop();
    // Photos still waiting go back to the queue now (another worker, or this one next time).
    for (const { msg } of this.buffer?.held() ?? []) msg.nak();
    this.buffer?.close();
    await this.loop;
  }
}
