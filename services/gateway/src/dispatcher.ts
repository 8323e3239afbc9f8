import { Inject, Injectable } from '@nestjs/common';
import {
  AdminReplay,
  apiCatalog,
  compile,
  MemexError,
  rpcSubject,
  type MethodDefinition,
  type ServiceName,
  type Validator,
} from '@memex/contracts';
import { callRpc, type Bus } from '@memex/bus';
import type { MemexConfig } from '@memex/config';
import { BUS, CONFIG, type ServiceHealth } from '@memex/runtime';
import { requestDuration } from '@memex/telemetry';
import type { Principal } from './auth/auth.service.js';

const REPLAY_TIMEOUT_MS = 60 * 60 * 1000;

/** Routes an API call to the service that owns it: the same path for HTTP and gRPC. */
@Injectable()
export class Dispatcher {
  private readonly validators = new Map<string, Validator<MethodDefinition['params']>>();

  constructor(
    @Inject(BUS) private readonly bus: Bus,
    @Inject(CONFIG) private readonly config: MemexConfig,
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
      return callRpc(this.bus, `memex.rpc.${projector}.admin.replay`, request, REPLAY_TIMEOUT_MS);
    }
    return callRpc(this.bus, rpcSubject(method), request, this.config.rpcTimeoutMs);
  }

  /** Each expected service's health; a silent one is reported as not ready. */
  async health(services: readonly string[]): Promise<ServiceHealth[]> {
    return Promise.all(
      services.map((service) =>
        callRpc<ServiceHealth>(
          this.bus,
          `memex.rpc.${service}.health`,
          { method: 'health', params: {}, scope: { kind: 'owner' }, caller: { kind: 'system', id: 'gateway' } },
          1000,
        ).catch((error: Error) => ({ service, ready: false, error: error.message }) as ServiceHealth),
      ),
    );
  }
}
