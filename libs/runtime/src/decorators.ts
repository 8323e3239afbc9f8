import { DiscoveryService } from '@nestjs/core';
import type { EventDefinition, EventOf, MethodDefinition } from '@memex/contracts';
import type { Migration } from '@memex/db';

/** Marks a provider method as the handler of an API method: `(params, call) => result`. */
export const RpcMethod = DiscoveryService.createDecorator<MethodDefinition>();

export interface ProjectorOptions {
  /** Also the Postgres schema it owns and the name `memex replay <name>` takes. */
  name: string;
  migrations: Migration[];
  /**
   * Indexes a rebuild must keep although they are costly to maintain, because the projection
   * looks rows up by them as it applies (a trigram match of paper titles): see `BulkIndexes`.
   */
  keepIndexes?: string[];
  /**
   * B-tree indexes a rebuild drops for its bulk load and builds after it, as it does the costly
   * ones, because only queries read them (graph's @-mention order): see `BulkIndexes`.
   */
  dropIndexes?: string[];
  /**
   * Events per transaction in a rebuild's catch-up (default 500, as live). A projection whose
   * work per batch grows with the things touched more than with the events (graph's refreshes
   * and weights) rebuilds faster in larger ones; its bulk statements must take that many rows.
   */
  rebuildBatch?: number;
}

/**
 * Marks a provider as the projector of its service's read model. Its `@On` / `@OnBatch`
 * methods say which events it applies; the runtime subscribes it to those and nothing else.
 */
export const Projector = DiscoveryService.createDecorator<ProjectorOptions>();

/** One event as a batch handler sees it: its log sequence beside it. */
export type LoggedOf<E extends EventDefinition> = E extends EventDefinition
  ? { seq: number; event: EventOf<E> }
  : never;

/** What a projector's event handlers are marked with (read back by the ServiceHost). */
export interface EventHandlerMark {
  definitions: readonly EventDefinition[];
  batch: boolean;
}
export const EventHandler = DiscoveryService.createDecorator<EventHandlerMark>();

/**
 * `@On(NotePut) async notePut(trx, event: EventOf<typeof NotePut>, seq)`: applies one event of
 * a type (at its latest version: older ones arrive upcast). The method's types are checked
 * against the definition.
 */
export function On<E extends EventDefinition>(definition: E) {
  const mark = EventHandler({ definitions: [definition], batch: false });
  return (
    target: object,
    key: string | symbol,
    descriptor: { value?: (trx: never, event: EventOf<E>, seq: number) => Promise<void> },
  ): void => {
    mark(target, key, descriptor as PropertyDescriptor);
  };
}

/**
 * `@OnBatch(ItemIngested, NotePut) async ingestRun(trx, run: LoggedOf<typeof ItemIngested | typeof NotePut>[])`:
 * the bulk form. It gets every run of consecutive events of these types in a projector batch
 * (an import is thousands in a row), in order, and must have the effect of applying them one
 * by one (a failed batch is redone with runs of one).
 */
export function OnBatch<E extends EventDefinition[]>(...definitions: E) {
  const mark = EventHandler({ definitions, batch: true });
  return (
    target: object,
    key: string | symbol,
    descriptor: { value?: (trx: never, run: LoggedOf<E[number]>[]) => Promise<void> },
  ): void => {
    mark(target, key, descriptor as PropertyDescriptor);
  };
}
