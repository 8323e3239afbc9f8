import type { Bus } from '@memex/bus';
import { JobQueue } from '../../jobs/queue.js';

/** `t2.<model>`: a chat model's lane (NAME@VERSION spelled as a subject token). */
export function laneOf(modelId: string): string {
  return `t2.${modelId.replace(/[^A-Za-z0-9_-]/g, '_')}`;
}

/** Tier 2's queues, one lane per chat model, created (consumers and all) on first use. */
export class Lanes {
  private readonly queues = new Map<string, Promise<JobQueue>>();

  constructor(private readonly bus: Bus) {}

  queue(modelId: string): Promise<JobQueue> {
    let queue = this.queues.get(modelId);
    if (!queue) {
      const created = new JobQueue(this.bus, laneOf(modelId));
      queue = created.ensure().then(() => created);
      queue.catch(() => this.queues.delete(modelId));
      this.queues.set(modelId, queue);
    }
    return queue;
  }

  close(): void {
    for (const queue of this.queues.values())
      void queue.then(
        (q) => q.close(),
        () => undefined,
      );
  }
}
