import { Injectable } from '@nestjs/common';
import { callRpc } from '@memex/bus';
import { MethodRouter, type ServiceHealth } from '@memex/runtime';

/** Routes HTTP and gRPC calls to the service that owns them (MethodRouter), and gathers health. */
@Injectable()
export class Dispatcher extends MethodRouter {
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
