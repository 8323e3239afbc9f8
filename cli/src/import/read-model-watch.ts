/** The part of the gateway's /healthz this reads. */
interface Health {
  services?: { ready?: boolean; projector?: { lag?: number } }[];
}

/**
 * Watches the read models' lag on the gateway's /healthz, to tell an import refused by
 * backpressure (ingest waits while a read model is too far behind the log) from a memex that is
 * away or stuck: it is catching up while the running services' largest lag is above 0 and has
 * shrunk within `patienceMs`.
 */
export class ReadModelWatch {
  private lowest = Infinity;
  private lowestAt = 0;

  constructor(
    private readonly gatewayUrl: string,
    private readonly patienceMs = 120_000,
  ) {}

  /** Whether the read models are catching up; `lag` is the largest one read (undefined: none read). */
  async catchingUp(): Promise<{ busy: boolean; lag?: number }> {
    const lag = await this.largestLag();
    if (lag === undefined || lag === 0) return { busy: false, lag };
    const now = Date.now();
    if (lag < this.lowest) {
      this.lowest = lag;
      this.lowestAt = now;
    }
    return { busy: now - this.lowestAt < this.patienceMs, lag };
  }

  private async largestLag(): Promise<number | undefined> {
    try {
      const response = await fetch(`${this.gatewayUrl}/healthz`, { signal: AbortSignal.timeout(10_000) });
      const { services } = (await response.json()) as Health;
      // A stopped service's lag does not hold ingest back (nor shrink): only the running ones count.
      return services ? Math.max(0, ...services.filter((s) => s.ready).map((s) => s.projector?.lag ?? 0)) : undefined;
    } catch {
      return undefined;
    }
  }
}
