import type { Bus } from '@memex/bus';
import type { MemexConfig } from '@memex/config';
import type { ServiceHost } from '@memex/runtime';

/**
 * Waits until this service's read model has applied the whole log as it is now: commands that
 * decide from the read model (flags, deletion) then see every item written before they were called.
 */
export async function readModelCaughtUp(host: ServiceHost, bus: Bus, config: MemexConfig): Promise<void> {
  await host.projector!.waitFor(await bus.lastSeq(), config.minSeqTimeoutMs);
}
