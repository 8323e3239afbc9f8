import type { ConsumerInfo } from '@nats-io/jetstream';
import { EVENTS_STREAM, type Bus } from '@memex/bus';

const PREFIX = 'proj_';

/** The durable consumer through which a projector reads the log. */
export function projectorConsumer(projector: string): string {
  return `${PREFIX}${projector}`;
}

/** Events of its filter a consumer has not had acknowledged: what its projector has left to apply. */
export function consumerLag(info: ConsumerInfo): number {
  return info.num_pending + info.num_ack_pending;
}

/** Every projector's lag by name, read from JetStream in one pass over the log's consumers. */
export async function projectorLags(bus: Bus): Promise<Map<string, number>> {
  const lags = new Map<string, number>();
  for await (const info of bus.jsm.consumers.list(EVENTS_STREAM)) {
    if (info.name.startsWith(PREFIX)) lags.set(info.name.slice(PREFIX.length), consumerLag(info));
  }
  return lags;
}
