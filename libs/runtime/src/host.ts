import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { DiscoveryService, MetadataScanner } from '@nestjs/core';
import type { Subscription } from '@nats-io/transport-node';
import {
  compile,
  MemexError,
  rpcSubject,
  type MethodDefinition,
  type ServiceName,
  type Validator,
} from '@memex/contracts';
import { callRpc, serveRpc, typeFilters, type Bus, type RpcRequest } from '@memex/bus';
import type { MemexConfig } from '@memex/config';
import { Projector, RpcMethod, type ProjectorOptions } from './decorators.js';
import { HandlerProjection } from './handlers.js';
import { ProjectionRunner, type Projection, type ReplayResult } from './projection.js';
import type { BookkeepingDb } from './bookkeeping.js';
import { CONFIG, DATABASE, SERVICE } from './tokens.js';
import { BUS } from './providers.js';
import { REPLAY_HEARTBEAT_MS } from './router.js';

export interface ServiceOptions {
  service: ServiceName;
}

/** What a service's `health` answer says; the gateway's /healthz collects them. */
export interface ServiceHealth {
  service: string;
  ready: boolean;
  /** `failures`: events the projector recorded as failed and skipped (`memex failures` lists them). */
  projector?: { name: string; checkpoint: number; leader: boolean; lag: number; failures: number };
  /** What needs the owner, said by the service's providers (e.g. a Google account whose grant was revoked). */
  problems?: string[];
}

/** Asks a service (any of its processes) for its health, as the gateway's /healthz does. */
export function serviceHealth(
  bus: Bus,
  service: string,
  { timeoutMs = 5000, caller = 'system' }: { timeoutMs?: number; caller?: string } = {},
): Promise<ServiceHealth> {
  return callRpc<ServiceHealth>(
    bus,
    `memex.rpc.${service}.health`,
    { method: 'health', params: {}, scope: { kind: 'owner' }, caller: { kind: 'system', id: caller } },
    timeoutMs,
  );
}

/** A provider with `healthProblems` adds what it finds wrong to its service's health (and so to /healthz). */
export interface HealthProblems {
  healthProblems(): Promise<string[]>;
}

/**
 * Wires a service to the bus at start: every `@RpcMethod` handler is served on its subject,
 * every `@Projector` runs, and `health`, `admin.replay` and `admin.failures[.retry]` are answered
 * for the service.
 */
@Injectable()
export class ServiceHost implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger: Logger;
  private readonly subscriptions: Subscription[] = [];
  private readonly problemSources: HealthProblems[] = [];
  private runner: ProjectionRunner | undefined;
  private ready = false;

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    @Inject(BUS) private readonly bus: Bus,
    @Inject(CONFIG) private readonly config: MemexConfig,
    @Inject(SERVICE) private readonly options: ServiceOptions,
    @Inject(DATABASE) private readonly db: BookkeepingDb | null,
  ) {
    this.logger = new Logger(`memex:${options.service}`);
  }

  get projector(): ProjectionRunner | undefined {
    return this.runner;
  }

  async onApplicationBootstrap(): Promise<void> {
    const queue = `svc.${this.options.service}`;
    for (const wrapper of this.discovery.getProviders()) {
      const instance = wrapper.instance as Record<string, unknown> | undefined;
      if (!instance || typeof instance !== 'object') continue;
      const projector = this.discovery.getMetadataByDecorator(Projector, wrapper);
      const handlers = HandlerProjection.of(instance);
      if (typeof instance.healthProblems === 'function')
        this.problemSources.push(instance as unknown as HealthProblems);
      const prototype = Object.getPrototypeOf(instance) as object;
      for (const methodName of this.scanner.getAllMethodNames(prototype)) {
        const definition = this.discovery.getMetadataByDecorator(RpcMethod, wrapper, methodName);
        if (!definition) continue;
        const handler = (instance[methodName] as (...args: unknown[]) => Promise<unknown>).bind(instance);
        this.serve(rpcSubject(definition), queue, this.guard(definition, handler));
      }
      if (handlers.types.length > 0 && !projector) {
        throw new Error(`${instance.constructor.name} has event handlers but is not a @Projector`);
      }
      if (projector && handlers.types.length === 0) {
        throw new Error(`${instance.constructor.name} is a @Projector without @On or @OnBatch handlers`);
      }
      if (projector) this.addProjector(projector, handlers, typeFilters(handlers.types, this.bus.takesSeveralFilters));
    }
    const prefix = `memex.rpc.${this.options.service}`;
    this.serve(`${prefix}.health`, queue, () => this.health());
    this.serve(`${prefix}.admin.replay`, queue, (request) => this.replay(request), {
      heartbeatMs: REPLAY_HEARTBEAT_MS,
    });
    this.serve(`${prefix}.admin.failures`, queue, async (request) => {
      const runner = this.ownerRunner(request);
      return { failures: runner ? await runner.failures() : [] };
    });
    this.serve(`${prefix}.admin.failures.retry`, queue, async (request) => {
      const runner = this.ownerRunner(request);
      const seqs = (request.params as { seqs?: number[] } | undefined)?.seqs;
      return runner
        ? runner.retryFailures(seqs)
        : { projector: this.options.service, retried: 0, fixed: [], gone: [], failing: [] };
    });
    await this.runner?.start();
    // Ready means NATS has every subscription: a call made now is served, not met with "no responders".
    await this.bus.nc.flush();
    this.ready = true;
    this.logger.log(
      `ready (${this.subscriptions.length} subjects${this.runner ? `, projector ${this.runner.name}` : ''})`,
    );
  }

  /** `memex replay`: rebuilds the read model beside the live one and switches to it (ProjectionRunner.rebuild). */
  private async replay(request: RpcRequest): Promise<ReplayResult> {
    const { service } = this.options;
    if (request.scope.kind !== 'owner') throw new MemexError('forbidden', 'replay needs the owner token');
    if (!this.runner) throw new MemexError('not_found', `the ${service} service has no projector`);
    return this.runner.rebuild(this.config.databaseUrl).catch((error: unknown) => {
      if (error instanceof MemexError) throw error;
      // Postgres or NATS went away mid-rebuild: the owner need only run it again.
      throw new MemexError(
        'unavailable',
        `the ${service} replay broke off (${(error as Error).message}); the live read model is whole (switching to ` +
          `the rebuilt one is a single transaction): run memex replay ${service} again`,
      );
    });
  }

  /** The projector for an owner's admin request (undefined when the service has none). */
  private ownerRunner(request: RpcRequest): ProjectionRunner | undefined {
    if (request.scope.kind !== 'owner') throw new MemexError('forbidden', 'projector failures need the owner token');
    return this.runner;
  }

  private addProjector(options: ProjectorOptions, projection: Projection, filters?: string[]): void {
    if (this.runner) throw new Error(`service ${this.options.service} declares two projectors`);
    if (!this.db) throw new Error(`service ${this.options.service} has a projector but no database schema`);
    this.runner = new ProjectionRunner(this.bus, this.config.databaseUrl, this.db, options, projection, filters);
  }

  private serve(
    subject: string,
    queue: string,
    handler: (request: RpcRequest) => Promise<unknown>,
    options?: { heartbeatMs?: number },
  ): void {
    this.subscriptions.push(serveRpc(this.bus, subject, queue, handler, options));
  }

  /** Access, params and read-your-writes, checked the same way for every method. */
  private guard(
    definition: MethodDefinition,
    handler: (params: unknown, call: { scope: RpcRequest['scope']; caller: RpcRequest['caller'] }) => Promise<unknown>,
  ): (request: RpcRequest) => Promise<unknown> {
    const validator: Validator<MethodDefinition['params']> = compile(definition.params);
    return async (request) => {
      if (definition.access === 'owner' && request.scope.kind !== 'owner') {
        throw new MemexError('forbidden', `${definition.name} needs the owner token`);
      }
      const params = (request.params ?? {}) as Record<string, unknown>;
      const problems = validator.problems(params, 'params');
      if (problems.length > 0) throw new MemexError('invalid_params', problems.join('; '));
      const minSeq = params.min_seq;
      if (definition.kind === 'query' && typeof minSeq === 'number' && this.runner) {
        await this.runner.waitFor(minSeq, this.config.minSeqTimeoutMs);
      }
      return handler(params, { scope: request.scope, caller: request.caller });
    };
  }

  private async health(): Promise<ServiceHealth> {
    const health: ServiceHealth = { service: this.options.service, ready: this.ready };
    if (this.runner) {
      health.projector = {
        name: this.runner.name,
        checkpoint: this.runner.checkpoint,
        leader: this.runner.isLeader,
        lag: await this.runner.lag(),
        // Before the projector has started its tables may not exist yet: nothing has failed then.
        failures: this.ready ? await this.runner.failureCount() : 0,
      };
    }
    // Likewise the tables its providers read (media's health counts its items): not ready says enough.
    const problems = this.ready
      ? (await Promise.all(this.problemSources.map((source) => source.healthProblems()))).flat()
      : [];
    if (problems.length > 0) health.problems = problems;
    return health;
  }

  async onApplicationShutdown(): Promise<void> {
    for (const subscription of this.subscriptions) subscription.unsubscribe();
    await this.runner?.stop();
  }
}
