import { randomBytes } from 'node:crypto';
import { monotonicFactory } from 'ulid';
import type { PubAck } from '@nats-io/jetstream';
import { eventCatalog, MemexError, type Actor, type EventEnvelope, type EventRegistry } from '@memex/contracts';
import type { Bus } from './bus.js';
import { encodeJson } from './codec.js';
import { eventSubject } from './subjects.js';
import { injectTrace } from './trace.js';

/**
 * Uniform numbers in [0, 1) drawn from a pooled crypto buffer: the ulid package's default asks
 * the system for each of an id's 16 random characters, which showed up in import profiles.
 */
function pooledRandom(): () => number {
  let pool = Buffer.alloc(0);
  let at = 0;
  return () => {
    if (at === pool.length) {
      pool = randomBytes(4096);
      at = 0;
    }
    return pool[at++]! / 256;
  };
}

const nextId = monotonicFactory(pooledRandom());

/** Generates a ULID (time-ordered, also used for item and note ids). */
export function newId(): string {
  return nextId();
}

/** What a service says happened; the publisher fills in id and times and validates it. */
export interface EventDraft<D = unknown> {
  type: string;
  v?: number;
  /** The aggregate, `<kind>:<id>`. */
  subject: string;
  data: D;
  actor: Actor;
  labels?: string[];
  kind?: string;
  spam?: boolean;
  occurred_at?: string;
  causation_id?: string;
  correlation_id?: string;
  /** Pass a fixed id to make a retried publish idempotent (it is the Msg-Id). */
  id?: string;
  /**
   * Append only if the aggregate has no event of this type yet (JetStream's
   * expected-last-subject-sequence 0): the log itself enforces a uniqueness claim.
   */
  expectFirst?: boolean;
}

export interface Published {
  seq: number;
  duplicate: boolean;
  event: EventEnvelope;
}

/** Appends validated events to MEMEX_EVENTS. */
export class EventPublisher {
  constructor(
    private readonly bus: Bus,
    private readonly registry: EventRegistry = eventCatalog,
  ) {}

  /** Builds and validates an envelope without publishing it. */
  build<D>(draft: EventDraft<D>): EventEnvelope<D> {
    const now = new Date().toISOString();
    const envelope: EventEnvelope<D> = {
      id: draft.id ?? newId(),
      type: draft.type,
      v: draft.v ?? 1,
      subject: draft.subject,
      occurred_at: draft.occurred_at ?? now,
      recorded_at: now,
      actor: draft.actor,
      labels: draft.labels ?? [],
      data: draft.data,
      ...(draft.causation_id ? { causation_id: draft.causation_id } : {}),
      ...(draft.correlation_id ? { correlation_id: draft.correlation_id } : {}),
      ...(draft.kind ? { kind: draft.kind } : {}),
      ...(draft.spam !== undefined ? { spam: draft.spam } : {}),
    };
    this.registry.validate(envelope);
    return envelope;
  }

  async publish<D>(draft: EventDraft<D>): Promise<Published> {
    const event = this.build(draft);
    const ack = await this.append(event, draft.expectFirst ?? false);
    return { seq: ack.seq, duplicate: ack.duplicate, event };
  }

  /**
   * Publishes in order, pipelined (all sent before the first ack is awaited). Every draft is
   * validated before anything is sent, so an invalid one publishes none of them.
   */
  async publishAll(drafts: EventDraft[]): Promise<Published[]> {
    const events = drafts.map((draft) => this.build(draft));
    const acks = await Promise.all(events.map((event, i) => this.append(event, drafts[i]!.expectFirst ?? false)));
    return acks.map((ack, i) => ({ seq: ack.seq, duplicate: ack.duplicate, event: events[i]! }));
  }

  private async append(event: EventEnvelope, expectFirst: boolean): Promise<PubAck> {
    const subject = eventSubject(event.type, event.subject);
    const options = {
      msgID: event.id,
      headers: injectTrace(),
      timeout: 10_000,
      ...(expectFirst ? { expect: { lastSubjectSequence: 0 } } : {}),
    };
    const payload = encodeJson(event);
    try {
      return await this.bus.js.publish(subject, payload, options);
    } catch (error) {
      const message = String((error as Error).message ?? error);
      if (/wrong last sequence/i.test(message)) {
        throw new MemexError('conflict', `${event.subject} already has a ${event.type} event`);
      }
      if (/maximum payload|message size exceeds/i.test(message)) {
        throw new MemexError(
          'too_large',
          `${event.type} event for ${event.subject} is larger than the log's 1 MB limit`,
        );
      }
      // A timeout may hide a stored message: retrying with the same Msg-Id is deduplicated.
      if (/timeout/i.test(message)) return this.bus.js.publish(subject, payload, options);
      throw error;
    }
  }
}
