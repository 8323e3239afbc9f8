import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { compile, type Validator } from '../validation.js';
import { MemexError } from '../errors.js';
import type { ServiceName } from '../api/method.js';

export const ULID_PATTERN = '^[0-9A-HJKMNP-TV-Z]{26}$';
/** `<noun>.<verb>`: exactly two tokens, so `memex.evt.*.*.<aggregate>` selects an aggregate's events. */
export const EVENT_TYPE_PATTERN = '^[a-z][a-z_]*\\.[a-z][a-z_]*$';

export const ActorKind = Type.Union(
  ['user', 'connector', 'import', 'pipeline', 'session', 'system'].map((k) => Type.Literal(k)),
);
export const Actor = Type.Object(
  {
    kind: ActorKind,
    /** e.g. `owner`, `token:01J…`, `understand-v1@llama3`, `gmail:me@example.com`. */
    id: Type.String({ minLength: 1 }),
  },
  { additionalProperties: false },
);
export type Actor = Static<typeof Actor>;

/** The envelope of every event on MEMEX_EVENTS (DESIGN.md §3). */
export const EventEnvelope = Type.Object(
  {
    id: Type.String({ pattern: ULID_PATTERN, description: 'ULID; also the JetStream Msg-Id' }),
    type: Type.String({ pattern: EVENT_TYPE_PATTERN }),
    v: Type.Integer({ minimum: 1 }),
    /** The aggregate, `<kind>:<id>`, e.g. `item:01J…`, `token:01J…`. */
    subject: Type.String({ pattern: '^[a-z][a-z_]*:.+$' }),
    occurred_at: Type.String({ format: 'date-time' }),
    recorded_at: Type.String({ format: 'date-time' }),
    actor: Actor,
    causation_id: Type.Optional(Type.String()),
    correlation_id: Type.Optional(Type.String()),
    /** Scope labels of what this event reveals. */
    labels: Type.Array(Type.String()),
    /** The item kind this event reveals, if any; events without one reach only the owner. */
    kind: Type.Optional(Type.String()),
    spam: Type.Optional(Type.Boolean()),
    data: Type.Unknown(),
  },
  { additionalProperties: false },
);
export type EventEnvelope<D = unknown> = Omit<Static<typeof EventEnvelope>, 'data'> & { data: D };

/**
 * One event type at one schema version, owned by the one service that publishes it (the
 * publisher refuses it from any other). When its shape changes, the new shape is a new
 * definition with `v + 1` and the old one keeps its schema and gains `upcast`, which turns its
 * data into the next version's: consumers only ever see the latest version (docs/architecture.md,
 * "Changing an event").
 */
export interface EventDefinition<T extends string = string, D extends TSchema = TSchema> {
  readonly type: T;
  readonly v: number;
  readonly data: D;
  readonly description: string;
  readonly owner: ServiceName;
  /** Old versions only: this version's data as version `v + 1` reads it. */
  upcast?(data: Static<D>, event: EventEnvelope<Static<D>>): unknown;
}

export function defineEvent<T extends string, D extends TSchema>(def: EventDefinition<T, D>): EventDefinition<T, D> {
  if (!new RegExp(EVENT_TYPE_PATTERN).test(def.type)) {
    throw new Error(`event type "${def.type}" must be <noun>.<verb>`);
  }
  return def;
}

export type EventOf<E extends EventDefinition> = EventEnvelope<Static<E['data']>> & { type: E['type'] };

/** The data of an event type. */
export type DataOf<E extends EventDefinition> = Static<E['data']>;

/**
 * Narrows an event read off the log to a definition (its type at that version), for code that
 * reads the log itself rather than through `@On` handlers (which receive events upcast).
 */
export function isEventOf<E extends EventDefinition>(definition: E, event: EventEnvelope): event is EventOf<E> {
  return event.type === definition.type && event.v === definition.v;
}

const envelopeValidator = compile(EventEnvelope);

/** Validates envelopes against the envelope schema and their data against the registered type. */
export class EventRegistry {
  private readonly validators = new Map<string, Validator<TSchema>>();
  private readonly definitions: EventDefinition[] = [];

  private readonly byKey = new Map<string, EventDefinition>();
  private readonly latestVersion = new Map<string, number>();

  register(...defs: EventDefinition[]): this {
    for (const def of defs) {
      const key = `${def.type}@${def.v}`;
      if (this.validators.has(key)) throw new Error(`event ${key} is registered twice`);
      const owner = this.definitions.find((d) => d.type === def.type && d.owner !== def.owner);
      if (owner) throw new Error(`event ${def.type} has two owners: ${owner.owner} and ${def.owner}`);
      this.validators.set(key, compile(def.data));
      this.byKey.set(key, def);
      this.latestVersion.set(def.type, Math.max(def.v, this.latestVersion.get(def.type) ?? 0));
      this.definitions.push(def);
    }
    for (const def of this.definitions) {
      if (def.v < this.latestVersion.get(def.type)! && !def.upcast) {
        throw new Error(
          `event ${def.type}@${def.v} is older than v${this.latestVersion.get(def.type)} and has no upcast`,
        );
      }
    }
    return this;
  }

  list(): readonly EventDefinition[] {
    return this.definitions;
  }

  /** The definition of a type at a version (default: its latest), or undefined. */
  definition(type: string, v?: number): EventDefinition | undefined {
    const version = v ?? this.latestVersion.get(type);
    return version === undefined ? undefined : this.byKey.get(`${type}@${version}`);
  }

  /**
   * An event as its type's latest version reads it: each older version's `upcast` applied in
   * turn. Unknown types and events already at the latest version come back unchanged.
   */
  upcast(event: EventEnvelope): EventEnvelope {
    const latest = this.latestVersion.get(event.type);
    if (latest === undefined || event.v >= latest) return event;
    let current = event;
    while (current.v < latest) {
      const def = this.byKey.get(`${current.type}@${current.v}`);
      if (!def?.upcast) throw new MemexError('internal', `no upcast from ${current.type} v${current.v}`);
      current = { ...current, v: current.v + 1, data: def.upcast(current.data, current) };
    }
    return current;
  }

  /** Throws a MemexError naming every problem; returns the envelope typed. */
  validate(envelope: unknown): EventEnvelope {
    const problems = envelopeValidator.problems(envelope);
    if (problems.length > 0) {
      throw new MemexError('invalid_params', `invalid event envelope: ${problems.join('; ')}`);
    }
    const event = envelope as EventEnvelope;
    const validator = this.validators.get(`${event.type}@${event.v}`);
    if (!validator) {
      throw new MemexError('invalid_params', `unknown event type ${event.type} v${event.v}`);
    }
    const dataProblems = validator.problems(event.data, 'data');
    if (dataProblems.length > 0) {
      throw new MemexError('invalid_params', `invalid ${event.type} v${event.v} event: ${dataProblems.join('; ')}`);
    }
    return event;
  }
}
