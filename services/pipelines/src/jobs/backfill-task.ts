import { ItemDeleted, ItemIngested, NotePut } from '@memex/contracts';
import { readEventsOf, type Bus } from '@memex/bus';
import type { BackfillJob, JobQueue, TextJob } from './queue.js';
import { textJobId } from './scheduler.js';

/**
 * Fills a new embedding space: a background `text` job for every item the log holds (its latest
 * version; deleted items are left out). The jobs reuse the passages already in the log.
 */
export class BackfillTask {
  constructor(
    private readonly bus: Bus,
    private readonly queue: JobQueue,
  ) {}

  async run(job: BackfillJob, touch: () => void): Promise<{ queued: number }> {
    const latest = new Map<string, Omit<TextJob, 'task' | 'spaces'>>();
    const until = { untilCaughtUp: true };
    for await (const { seq, event } of readEventsOf(this.bus, ItemIngested, until)) {
      if (seq > job.until_seq) break;
      latest.set(event.data.id, { item_id: event.data.id, revision: event.data.revision, source_seq: seq });
    }
    for await (const { seq, event } of readEventsOf(this.bus, NotePut, until)) {
      if (seq > job.until_seq) break;
      // Notes have no revision number: each put is newer than the last, so its sequence serves.
      latest.set(event.data.id, { item_id: event.data.id, revision: seq, source_seq: seq });
    }
    for await (const { seq, event } of readEventsOf(this.bus, ItemDeleted, until)) {
      if (seq > job.until_seq) break;
      latest.delete(event.data.id);
    }
    const items = [...latest.values()];
    for (let i = 0; i < items.length; i += 500) {
      await Promise.all(
        items.slice(i, i + 500).map((item) => {
          const text: TextJob = { task: 'text', ...item, spaces: [job.space] };
          return this.queue.enqueue(text, 'background', textJobId(text));
        }),
      );
      touch();
    }
    return { queued: items.length };
  }
}
