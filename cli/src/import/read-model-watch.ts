/** The part of the gateway's /healthz this reads. */
interface Health {
  services?: { ready?: boolean; projector?: { lag?: number } }[];
}

/**
 * Watches the read models' lag on the gateway's /healthz, to tell an import refused by
 * backpressure (ingest waits while a read model is too far behind the log) from a memex that is
 * away or stuck: it is catching up while the running services' largest lag is above 0 and has
 * fallen from one reading to the next within `patienceMs`. (Not below its lowest: while ingest
 * refuses, the pipelines' results of what it took can still push the lag up for minutes.)
 */
export class ReadModelWatch {
  private last = Infinity;
  private fellAt = 0;

  constructor(
    private readonly gatewayUrl: string,
    private readonly patienceMs = 120_000,
  ) {}

  /** Whether the read models are catching up; `lag` is the largest one read (undefined: none read). */
  async catchingUp(): Promise<{ busy: boolean; lag?: number }> {
    const lag = await this.largestLag();
    if (lag === undefined || lag === 0) return { busy: false, lag };
    const now = Date.now();
    if (lag < this.last) this.fellAt = now;
    this.last = lag;
    return { busy: now - this.fellAt < this.patienceMs, lag };
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
