import {
  eventCatalog,
  isEventOf,
  type EventDefinition,
  type EventEnvelope,
  type EventOf,
  type EventRegistry,
} from '@memex/contracts';
import type { Bus } from './bus.js';
import { decodeJson } from './codec.js';
import { readLog, type ReadLogOptions } from './log-reader.js';
import { EVENTS_STREAM, eventSubject, typeFilter } from './subjects.js';
import { isNotFound } from './bus.js';

/** An event as stored on the log, as its type's latest version reads it (old versions upcast). */
export function decodeEvent(bytes: Uint8Array, registry: EventRegistry = eventCatalog): EventEnvelope {
  return registry.upcast(decodeJson<EventEnvelope>(bytes));
}

/** The event at a sequence, or undefined when it is gone (erased by a deletion). */
export async function eventAt(bus: Bus, seq: number): Promise<EventEnvelope | undefined> {
  const stored = await bus.jsm.streams.getMessage(EVENTS_STREAM, { seq }).catch((error: unknown) => {
    if (isNotFound(error)) return null;
    throw error;
  });
  return stored ? decodeEvent(stored.data) : undefined;
}

/** The last event of a type about an aggregate (`item:<id>`) with its sequence, straight from the log. */
export async function lastEventOf<E extends EventDefinition>(
  bus: Bus,
  definition: E,
  aggregate: string,
): Promise<{ seq: number; event: EventOf<E> } | undefined> {
  const stored = await bus.jsm.streams
    .getMessage(EVENTS_STREAM, { last_by_subj: eventSubject(definition.type, aggregate) })
    .catch((error: unknown) => {
      if (isNotFound(error) || /no message found/i.test(String(error))) return null;
      throw error;
    });
  if (!stored) return undefined;
  const event = decodeEvent(stored.data);
  return isEventOf(definition, event) ? { seq: stored.seq, event } : undefined;
}

/** Every event of a type about an aggregate, in log order. */
export async function eventsOf<E extends EventDefinition>(
  bus: Bus,
  definition: E,
  aggregate: string,
): Promise<EventOf<E>[]> {
  const events: EventOf<E>[] = [];
  for await (const { event } of readEventsOf(bus, definition, { aggregate, untilCaughtUp: true })) events.push(event);
  return events;
}

/** The log's events of one type (about one aggregate, if given), typed and upcast. */
export async function* readEventsOf<E extends EventDefinition>(
  bus: Bus,
  definition: E,
  options: Omit<ReadLogOptions, 'filter'> & { aggregate?: string } = {},
): AsyncGenerator<{ seq: number; event: EventOf<E> }> {
  const filter = options.aggregate ? eventSubject(definition.type, options.aggregate) : typeFilter(definition.type);
  for await (const { seq, event } of readLog(bus, { ...options, filter })) {
    if (isEventOf(definition, event)) yield { seq, event };
  }
}

/** A handler's event must be in the catalog, at its type's latest version (older ones arrive upcast). */
export function assertHandleable(registry: EventRegistry, definition: EventDefinition): void {
  if (!registry.definition(definition.type, definition.v)) {
    throw new Error(`${definition.type} v${definition.v} is not in the event catalog`);
  }
  if (registry.definition(definition.type)!.v !== definition.v) {
    throw new Error(`a handler of ${definition.type} v${definition.v}: handlers take the latest version`);
  }
}

type Handler<C extends unknown[]> = (event: EventEnvelope, ...context: C) => unknown;

/**
 * Handlers by event type, typed by definition: `routes.on(NotePut, (event, seq) => …)` gets a
 * `note.put` event at its latest version. `dispatch` upcasts an event and calls its handler;
 * types without one are skipped. Projectors (through `@On`) and the pipelines scheduler route
 * with it, so no consumer switches on a type string or casts.
 */
export class EventRoutes<C extends unknown[] = []> {
  private readonly handlers = new Map<string, Handler<C>>();

  constructor(private readonly registry: EventRegistry = eventCatalog) {}

  on<E extends EventDefinition>(definition: E, handler: (event: EventOf<E>, ...context: C) => unknown): this {
    assertHandleable(this.registry, definition);
    if (this.handlers.has(definition.type)) throw new Error(`${definition.type} has two handlers`);
    this.handlers.set(definition.type, handler as Handler<C>);
    return this;
  }

  /** The event types with a handler, sorted (what a consumer subscribes to). */
  get types(): string[] {
    return [...this.handlers.keys()].sort();
  }

  handles(type: string): boolean {
    return this.handlers.has(type);
  }

  async dispatch(event: EventEnvelope, ...context: C): Promise<void> {
    const latest = this.registry.upcast(event);
    await this.handlers.get(latest.type)?.(latest, ...context);
  }
}
