import type { Transaction } from 'kysely';
import { eventCatalog, type EventRegistry } from '@memex/contracts';
import type { LoggedEvent } from '@memex/bus';
import type { EventHandlerMark } from './decorators.js';
import type { Projection } from './projection.js';

type OneHandler = (trx: Transaction<any>, event: LoggedEvent['event'], seq: number) => Promise<void>;
type RunHandler = (trx: Transaction<any>, run: { seq: number; event: LoggedEvent['event'] }[]) => Promise<void>;

/** A projector may wrap each batch (search stages its word counts once per batch). */
export interface AroundBatch {
  aroundBatch(trx: Transaction<any>, apply: () => Promise<void>): Promise<void>;
}

interface Route {
  method: string;
  handler: OneHandler | RunHandler;
  batch: boolean;
}

/**
 * A projector's `@On` / `@OnBatch` methods as one `Projection`: each event is upcast to its
 * type's latest version and routed to the method that names its type; runs of consecutive
 * events one `@OnBatch` method takes go to it together.
 */
export class HandlerProjection implements Projection {
  private readonly routes = new Map<string, Route>();

  constructor(
    private readonly projector: object,
    private readonly registry: EventRegistry = eventCatalog,
  ) {}

  add(method: string, mark: EventHandlerMark): void {
    const handler = (this.projector as Record<string, OneHandler | RunHandler>)[method]!.bind(this.projector);
    for (const definition of mark.definitions) {
      if (!this.registry.definition(definition.type, definition.v)) {
        throw new Error(`${this.projector.constructor.name}.${method} handles ${definition.type} v${definition.v}, which is not in the event catalog`);
      }
      if (this.registry.definition(definition.type)!.v !== definition.v) {
        throw new Error(`${this.projector.constructor.name}.${method} handles ${definition.type} v${definition.v}; handlers take the latest version`);
      }
      const taken = this.routes.get(definition.type);
      if (taken) throw new Error(`${definition.type} has two handlers: ${taken.method} and ${method}`);
      this.routes.set(definition.type, { method, handler, batch: mark.batch });
    }
  }

  /** The event types handled, for the subscription. */
  get types(): string[] {
    return [...this.routes.keys()].sort();
  }

  async apply(trx: Transaction<any>, logged: LoggedEvent): Promise<void> {
    await this.applyBatch(trx, [logged]);
  }

  async applyBatch(trx: Transaction<any>, batch: LoggedEvent[]): Promise<void> {
    const around = (this.projector as Partial<AroundBatch>).aroundBatch;
    if (around) await around.call(this.projector, trx, () => this.route(trx, batch));
    else await this.route(trx, batch);
  }

  private async route(trx: Transaction<any>, batch: LoggedEvent[]): Promise<void> {
    let run: { seq: number; event: LoggedEvent['event'] }[] = [];
    let runRoute: Route | undefined;
    const flush = async () => {
      if (runRoute && run.length > 0) await (runRoute.handler as RunHandler)(trx, run);
      run = [];
      runRoute = undefined;
    };
    for (const logged of batch) {
      const event = this.registry.upcast(logged.event);
      // A projector on NATS 2.9 reads one subject filter, which may take in types it has no handler for.
      const route = this.routes.get(event.type);
      if (!route) continue;
      if (route.batch) {
        if (runRoute !== route) await flush();
        runRoute = route;
        run.push({ seq: logged.seq, event });
        continue;
      }
      await flush();
      await (route.handler as OneHandler)(trx, event, logged.seq);
    }
    await flush();
  }
}
