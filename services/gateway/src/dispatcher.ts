import { Injectable } from '@nestjs/common';
import { EVENTS_STREAM } from '@memex/bus';
import { consumerLag, MethodRouter, projectorConsumer, serviceHealth, type ServiceHealth } from '@memex/runtime';

type ProjectorHealth = NonNullable<ServiceHealth['projector']>;

/** Routes HTTP and gRPC calls to the service that owns them (MethodRouter), and gathers health. */
@Injectable()
export class Dispatcher extends MethodRouter {
  /** Each service's projector as it last answered, to say how far behind it falls while silent. */
  private readonly projectors = new Map<string, ProjectorHealth>();
  /** Services that have answered since this gateway started: silent now, they are down, not starting. */
  private readonly answered = new Set<string>();

  /**
   * Each expected service's health; a silent one is reported as not ready, with its projector's
   * lag read from JetStream (a paused or hung process cannot say how far behind it falls).
   */
  async health(services: readonly string[]): Promise<ServiceHealth[]> {
    return Promise.all(
      services.map(async (service) => {
        try {
          const health = await serviceHealth(this.bus, service, { timeoutMs: 1000, caller: 'gateway' });
          if (health.projector) this.projectors.set(service, health.projector);
          if (health.ready) this.answered.add(service);
          return health;
        } catch (error) {
          const projector = await this.silentProjector(service);
          return { service, ready: false, error: (error as Error).message, ...(projector ? { projector } : {}) };
        }
      }),
    );
  }

  /** Whether the service answered ready since this gateway started (so a silent one is down, not starting). */
  wasUp(service: string): boolean {
    return this.answered.has(service);
  }

  /** A silent service's projector: its durable consumer's position and lag, the rest as last known. */
  private async silentProjector(service: string): Promise<ProjectorHealth | undefined> {
    const known = this.projectors.get(service);
    if (!known) return undefined;
    const info = await this.bus.jsm.consumers.info(EVENTS_STREAM, projectorConsumer(known.name)).catch(() => undefined);
    if (!info) return undefined;
    return {
      ...known,
      leader: false,
      // Seen without an ack floor while a restarting service recreates its consumer: keep the last known.
      checkpoint: info.ack_floor?.stream_seq ?? known.checkpoint,
      lag: consumerLag(info),
    };
  }
}
