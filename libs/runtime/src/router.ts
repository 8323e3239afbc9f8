import { Inject, Injectable } from '@nestjs/common';
import {
  AdminFailures,
  AdminFailuresRetry,
  AdminReplay,
  apiCatalog,
  compile,
  MemexError,
  rpcSubject,
  type Actor,
  type MethodDefinition,
  type Scope,
  type ServiceName,
  type Validator,
} from '@memex/contracts';
import { callLongRpc, callRpc, type Bus, type RpcRequest } from '@memex/bus';
import type { MemexConfig } from '@memex/config';
import { requestDuration } from '@memex/telemetry';
import { BUS } from './providers.js';
import { CONFIG } from './tokens.js';

/** Who is calling, as a front door (the gateway's token check, the head link's stamped scope) decided. */
export interface Principal {
  scope: Scope;
  caller: Actor;
}

const REPLAY_TIMEOUT_MS = 60 * 60 * 1000;
/**
 * A replay takes as long as the log is long; the service says it is still at it this often, and
 * one silent for REPLAY_SILENCE_MS has died (the caller hears so at once and can ask again).
 */
export const REPLAY_HEARTBEAT_MS = 5_000;
const REPLAY_SILENCE_MS = 30_000;

/**
 * Routes an API call to the service that owns it, after the catalog's access and params checks:
 * the one path for every front door (HTTP, gRPC, the head link).
 */
@Injectable()
export class MethodRouter {
  private readonly validators = new Map<string, Validator<MethodDefinition['params']>>();

  constructor(
    @Inject(BUS) protected readonly bus: Bus,
    @Inject(CONFIG) protected readonly config: MemexConfig,
  ) {
    for (const method of apiCatalog.list()) this.validators.set(method.name, compile(method.params));
  }

  async call(name: string, params: unknown, principal: Principal): Promise<unknown> {
    const started = performance.now();
    let code = 'ok';
    try {
      return await this.route(name, params ?? {}, principal);
    } catch (error) {
      code = error instanceof MemexError ? error.code : 'internal';
      throw error;
    } finally {
      requestDuration.observe({ method: name, code }, (performance.now() - started) / 1000);
    }
  }

  private async route(name: string, params: unknown, principal: Principal): Promise<unknown> {
    const method = apiCatalog.get(name);
    if (!method) throw new MemexError('not_found', `unknown method "${name}" (see GET /api/v1/openapi.json)`);
    if (method.access === 'owner' && principal.scope.kind !== 'owner') {
      throw new MemexError('forbidden', `${name} needs the owner token`);
    }
    const problems = this.validators.get(name)!.problems(params, 'params');
    if (problems.length > 0) throw new MemexError('invalid_params', problems.join('; '));
    const request = { method: name, params, scope: principal.scope, caller: principal.caller };
    if (method === AdminReplay) {
      const { projector } = params as { projector: ServiceName };
      return callLongRpc(this.bus, `memex.rpc.${projector}.admin.replay`, request, REPLAY_SILENCE_MS);
    }
    if (method === AdminFailures || method === AdminFailuresRetry)
      return this.failures(method === AdminFailures, params, request);
    return callRpc(this.bus, rpcSubject(method), request, this.config.rpcTimeoutMs);
  }

  /** Projector failures are each service's own: asked of the one named, or of every one running. */
  private async failures(list: boolean, params: unknown, request: RpcRequest): Promise<unknown> {
    const { projector } = params as { projector?: ServiceName };
    const services = projector ? [projector] : this.config.services.filter((service) => service !== 'gateway');
    const subject = list ? 'admin.failures' : 'admin.failures.retry';
    const answers = await Promise.all(
      services.map((service) =>
        callRpc<{ failures?: unknown[] }>(this.bus, `memex.rpc.${service}.${subject}`, request, REPLAY_TIMEOUT_MS),
      ),
    );
    return list ? { failures: answers.flatMap((answer) => answer.failures ?? []) } : { results: answers };
  }
}
