import { isVisible, type EventEnvelope, type Scope } from '@memex/contracts';
import type { Bus } from './bus.js';
import { readLog } from './log-reader.js';
import { typeFilters } from './subjects.js';

/** Events that reveal no item kind (tokens, admin) reach only the owner. */
export function eventVisible(scope: Scope, event: EventEnvelope): boolean {
  if (!event.kind) return scope.kind === 'owner';
  return isVisible(scope, { kind: event.kind, labels: event.labels, spam: event.spam ?? false });
}

export interface FeedOptions {
  scope: Scope;
  fromSeq: number;
  /** Only these event types; all when empty or absent. */
  types?: readonly string[];
  signal: AbortSignal;
}

/**
 * The scoped event feed subscribers get (the gateway's SSE stream and gRPC `Subscribe`): the log
 * from a sequence, following it, of the types asked for, and only what the scope may see.
 */
export async function* scopedFeed(
  bus: Bus,
  options: FeedOptions,
): AsyncGenerator<{ seq: number; event: EventEnvelope }> {
  const types = options.types && options.types.length > 0 ? new Set(options.types) : undefined;
  const filter = types ? typeFilters([...types], bus.takesSeveralFilters) : undefined;
  for await (const { seq, event } of readLog(bus, {
    fromSeq: options.fromSeq,
    signal: options.signal,
    ...(filter ? { filter } : {}),
  })) {
    if (types && !types.has(event.type)) continue;
    if (eventVisible(options.scope, event)) yield { seq, event };
  }
}
