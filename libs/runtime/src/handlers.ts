import { eventCatalog, type EventEnvelope, type EventRegistry } from '@memex/contracts';
import { assertHandleable, EventRoutes, type LoggedEvent } from '@memex/bus';
import { EventHandler, type EventHandlerMark } from './decorators.js';
import type { BookkeepingDb, BookkeepingTrx } from './bookkeeping.js';
import type { LaneOf, Projection } from './projection.js';

type Trx = BookkeepingTrx;
type Run = { seq: number; event: EventEnvelope }[];

/** A projector may wrap each batch (search stages its word counts once per batch); `Trx` is its own schema's. */
export interface AroundBatch<ServiceTrx> {
  aroundBatch(trx: ServiceTrx, apply: () => Promise<void>): Promise<void>;
}

/** A projector may write at the end of a rebuild's bulk load what it put off (`Projection.afterBulkLoad`). */
export interface AfterBulkLoad<ServiceDb> {
  afterBulkLoad(db: ServiceDb): Promise<void>;
}

/** A projector may apply a rebuild's bulk load in lanes (`Projection.bulkLanes`). */
export interface BulkLanes<ServiceDb> {
  bulkLanes(db: ServiceDb): Promise<LaneOf | undefined>;
}

/**
 * A projector's `@On` / `@OnBatch` methods as one `Projection`: each event is upcast to its
 * type's latest version and routed to the method that names its type; runs of consecutive
 * events one `@OnBatch` method takes go to it together.
 */
export class HandlerProjection implements Projection {
  private readonly single: EventRoutes<[Trx, number]>;
  private readonly batched = new Map<string, (trx: Trx, run: Run) => Promise<void>>();

  /** The projector's lanes, where it names them (otherwise none: its rebuilds go a batch at a time). */
  readonly bulkLanes?: (db: BookkeepingDb) => Promise<LaneOf | undefined>;

  constructor(
    private readonly projector: object,
    private readonly registry: EventRegistry = eventCatalog,
  ) {
    this.single = new EventRoutes(registry);
    const lanes = (projector as Partial<BulkLanes<BookkeepingDb>>).bulkLanes;
    if (lanes) this.bulkLanes = (db) => lanes.call(projector, db);
  }

  /** The projection of an object's `@On` / `@OnBatch` methods (none: `types` is empty). */
  static of(projector: object, registry: EventRegistry = eventCatalog): HandlerProjection {
    const projection = new HandlerProjection(projector, registry);
    for (
      let proto = Object.getPrototypeOf(projector) as object | null;
      proto && proto !== Object.prototype;
      proto = Object.getPrototypeOf(proto) as object | null
    ) {
      for (const method of Object.getOwnPropertyNames(proto)) {
        const value = (projector as Record<string, unknown>)[method];
        if (typeof value !== 'function') continue;
        const mark = Reflect.getMetadata(EventHandler.KEY, value) as EventHandlerMark | undefined;
        if (mark) projection.add(method, mark);
      }
    }
    return projection;
  }

  add(method: string, mark: EventHandlerMark): void {
    const handler = (this.projector as Record<string, (...args: unknown[]) => Promise<void>>)[method]!.bind(
      this.projector,
    );
    for (const definition of mark.definitions) {
      assertHandleable(this.registry, definition);
      if (this.single.handles(definition.type) || this.batched.has(definition.type)) {
        throw new Error(`${this.projector.constructor.name}: ${definition.type} has two handlers (one is ${method})`);
      }
      if (mark.batch) this.batched.set(definition.type, handler);
      else this.single.on(definition, (event, trx, seq) => handler(trx, event, seq));
    }
  }

  /** The event types handled, for the subscription. */
  get types(): string[] {
    return [...this.single.types, ...this.batched.keys()].sort();
  }

  handles(type: string): boolean {
    return this.single.handles(type) || this.batched.has(type);
  }

  async apply(trx: Trx, logged: LoggedEvent): Promise<void> {
    await this.applyBatch(trx, [logged]);
  }

  async applyBatch(trx: Trx, batch: LoggedEvent[]): Promise<void> {
    const around = (this.projector as Partial<AroundBatch<Trx>>).aroundBatch;
    if (around) await around.call(this.projector, trx, () => this.route(trx, batch));
    else await this.route(trx, batch);
  }

  async afterBulkLoad(db: BookkeepingDb): Promise<void> {
    await (this.projector as Partial<AfterBulkLoad<BookkeepingDb>>).afterBulkLoad?.call(this.projector, db);
  }

  private async route(trx: Trx, batch: LoggedEvent[]): Promise<void> {
    let run: Run = [];
    let runHandler: ((trx: Trx, run: Run) => Promise<void>) | undefined;
    const flush = async () => {
      if (runHandler && run.length > 0) await runHandler(trx, run);
      run = [];
      runHandler = undefined;
    };
    for (const logged of batch) {
      // Routed by the type its subject names, so an event no handler takes is never decoded.
      const type = logged.type ?? logged.event.type;
      const handler = this.batched.get(type);
      if (handler) {
        if (handler !== runHandler) await flush();
        runHandler = handler;
        run.push({ seq: logged.seq, event: this.registry.upcast(logged.event) });
        continue;
      }
      // A projector on NATS 2.9 reads one subject filter, which may take in types it has no handler
      // for: such an event does nothing, so it does not end a run (an import interleaves identity
      // claims with its items).
      if (!this.single.handles(type)) continue;
      await flush();
      await this.single.dispatch(logged.event, trx, logged.seq);
    }
    await flush();
  }
}
