import { randomBytes } from 'node:crypto';
import { monotonicFactory } from 'ulid';
import type { PubAck } from '@nats-io/jetstream';
import {
  eventCatalog,
  MemexError,
  type Actor,
  type DataOf,
  type EventDefinition,
  type EventEnvelope,
  type EventOf,
  type EventRegistry,
  type ServiceName,
} from '@memex/contracts';
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

/** What happened, with its type named by a string: tests and tools that replay drafts (see `bindDraft`). */
export interface NamedDraft<D = unknown> extends EventDraft<D> {
  type: string;
  v?: number;
}

/** What a service says happened; the publisher fills in type, version, id and times and validates it. */
export interface EventDraft<D = unknown> {
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
  /**
   * Append only if the last event of this type and aggregate is still at this sequence (an
   * optimistic update: of two concurrent ones, the second is refused with `conflict`).
   */
  expectLastSeq?: number;
}

/** A draft of one event type: the definition gives its type, version and data's shape. */
export type DraftOf<E extends EventDefinition> = EventDraft<DataOf<E>>;

/** A draft bound to its definition, so one `publishAll` can carry several types. */
export interface Drafted<E extends EventDefinition = EventDefinition> {
  readonly definition: E;
  readonly draft: DraftOf<E>;
}

export function draftOf<E extends EventDefinition>(definition: E, draft: DraftOf<E>): Drafted<E> {
  return { definition, draft };
}

/**
 * A draft whose type is a string, bound to its definition in the catalog (tests and benches
 * that build events of every service by name). Services publish by definition instead.
 */
export function bindDraft({ type, v, ...draft }: NamedDraft, registry: EventRegistry = eventCatalog): Drafted {
  const definition = registry.definition(type, v);
  if (!definition) throw new MemexError('invalid_params', `unknown event type ${type} v${v ?? 1}`);
  return { definition, draft };
}

export interface Published<E extends EventDefinition = EventDefinition> {
  seq: number;
  duplicate: boolean;
  event: EventOf<E>;
}

/**
 * Appends validated events to MEMEX_EVENTS. A service's publisher (the one MemexModule provides)
 * knows its service and refuses events another service owns; one made without a service (tests,
 * benches, tools that play every service) publishes any type.
 */
export class EventPublisher {
  constructor(
    private readonly bus: Bus,
    readonly service?: ServiceName,
    private readonly registry: EventRegistry = eventCatalog,
  ) {}

  /** Builds and validates an envelope (at the definition's version) without publishing it. */
  build<E extends EventDefinition>(definition: E, draft: DraftOf<E>): EventOf<E> {
    if (this.service && definition.owner !== this.service) {
      throw new MemexError(
        'forbidden',
        `the ${this.service} service may not publish ${definition.type}: ${definition.owner} owns it`,
      );
    }
    const now = new Date().toISOString();
    const envelope: EventOf<E> = {
      id: draft.id ?? newId(),
      type: definition.type,
      v: definition.v,
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

  async publish<E extends EventDefinition>(definition: E, draft: DraftOf<E>): Promise<Published<E>> {
    const event = this.build(definition, draft);
    const ack = await this.append(event, expectedLast(draft));
    return { seq: ack.seq, duplicate: ack.duplicate, event };
  }

  /**
   * Publishes in order, pipelined (all sent before the first ack is awaited). Every draft is
   * validated before anything is sent, so an invalid one publishes none of them.
   */
  async publishAll(drafts: readonly Drafted[]): Promise<Published[]> {
    const events = drafts.map(({ definition, draft }) => this.build(definition, draft));
    const acks = await Promise.all(events.map((event, i) => this.append(event, expectedLast(drafts[i]!.draft))));
    return acks.map((ack, i) => ({ seq: ack.seq, duplicate: ack.duplicate, event: events[i]! }));
  }

  private async append(event: EventEnvelope, lastSubjectSequence: number | undefined): Promise<PubAck> {
    const subject = eventSubject(event.type, event.subject);
    const options = {
      msgID: event.id,
      headers: injectTrace(),
      timeout: 10_000,
      ...(lastSubjectSequence !== undefined ? { expect: { lastSubjectSequence } } : {}),
    };
    const payload = encodeJson(event);
    try {
      return await this.bus.js.publish(subject, payload, options);
    } catch (error) {
      const message = String((error as Error).message ?? error);
      if (/wrong last sequence/i.test(message)) {
        throw new MemexError(
          'conflict',
          lastSubjectSequence === 0
            ? `${event.subject} already has a ${event.type} event`
            : `${event.subject} has a ${event.type} event after ${lastSubjectSequence}`,
        );
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

function expectedLast(draft: DraftOf<EventDefinition>): number | undefined {
  return draft.expectFirst ? 0 : draft.expectLastSeq;
}
