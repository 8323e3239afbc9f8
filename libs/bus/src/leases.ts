/**
 * How long a job taken from a work queue (the pipelines' jobs, the media service's photos) stays
 * with the process that took it once that process falls silent: the queue's `ack_wait`. A process
 * that dies (SIGKILL, a worker machine lost) gives its jobs back this long after it last spoke,
 * whatever a job would have taken; a live one speaks for every job it holds (`Leases`). Five
 * minutes before 7 December 2026: every job a killed pipelines process held waited that long
 * before another worker took it, and search stayed incomplete meanwhile.
 */
export const JOB_LEASE_MS = 30_000;

/**
 * The jobs a process holds, each renewed (`+WPI`, "work in progress") three times a lease while
 * held: a job being worked on as much as one read ahead and waiting. Only the process going
 * (or its event loop stuck for a lease) lets a job go to another worker before it is settled.
 */
export class Leases {
  private readonly held = new Set<{ renew(): void }>();
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly leaseMs = JOB_LEASE_MS) {}

  /** Renews the job until the returned release is called (it was acked, given back or dropped). */
  hold(renew: () => void): () => void {
    const job = { renew };
    this.held.add(job);
    this.timer ??= setInterval(() => {
      for (const each of this.held) {
        try {
          each.renew();
        } catch {
          // The connection closed (the process stopping): the lease lapses and the job goes elsewhere.
        }
      }
    }, this.leaseMs / 3).unref();
    return () => {
      this.held.delete(job);
      if (this.held.size === 0 && this.timer) {
        clearInterval(this.timer);
        this.timer = undefined;
      }
    };
  }
}
