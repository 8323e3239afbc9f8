import { ItemDeleted, ItemIngested, NotePut, pdfMetaOf } from '@memex/contracts';
import { readEventsOf, type Bus } from '@memex/bus';
import type { BackfillJob, JobQueue, StructureBackfillJob, StructureJob, TextJob, Tier0Reading } from './queue.js';
import { textJobId } from './scheduler.js';

/**
 * Fills a new embedding space: a background `text` job for every item the log holds (its latest
 * version; deleted items are left out). The jobs reuse the passages already in the log. And reads
 * old items again when tier 0 gains a reading: `structure` jobs limited to what it added.
 */
export class BackfillTask {
  constructor(
    private readonly bus: Bus,
    private readonly queue: JobQueue,
  ) {}

  async run(job: BackfillJob, touch: () => void): Promise<{ queued: number }> {
    const items = await latestItems(this.bus, job.until_seq);
    for (let i = 0; i < items.length; i += 500) {
      await Promise.all(
        items.slice(i, i + 500).map(({ item_id, revision, source_seq }) => {
          const text: TextJob = { task: 'text', item_id, revision, source_seq, spaces: [job.space] };
          return this.queue.enqueue(text, 'background', textJobId(text));
        }),
      );
      touch();
    }
    return { queued: items.length };
  }

  /** PDFs and mail, as the new readings ask (papers, commitments), each read again by those readings only. */
  async runStructure(job: StructureBackfillJob, touch: () => void): Promise<{ queued: number }> {
    const reads = (reading: Tier0Reading) => job.readings.includes(reading);
    const items = (await latestItems(this.bus, job.until_seq)).filter(
      (item) => reads('structure') || (reads('paper') && item.pdf) || (reads('commitments') && item.mail),
    );
    for (let i = 0; i < items.length; i += 500) {
      await Promise.all(
        items.slice(i, i + 500).map(({ item_id, revision, source_seq }) => {
          const structure: StructureJob = { task: 'structure', item_id, revision, source_seq, readings: job.readings };
          return this.queue.enqueue(structure, 'background', `structure|${item_id}|${revision}|${job.version}`);
        }),
      );
      touch();
    }
    return { queued: items.length };
  }
}

/** An item as the log last gave it: what a job about it starts from. */
export interface LatestItem {
  item_id: string;
  revision: number;
  source_seq: number;
  kind: string;
  occurred_at: string;
  /** Characters of its text (for estimates). */
  text_length: number;
  /** Mail marked spam: no model reads it. */
  spam: boolean;
  /** Whether it is a PDF (a document, paper or attachment with pages) or a mail: what tier 0's readings apply to. */
  pdf: boolean;
  mail: boolean;
}

/** Every item the log holds up to `untilSeq` (its latest version; deleted items left out). */
export async function latestItems(bus: Bus, untilSeq = Number.MAX_SAFE_INTEGER): Promise<LatestItem[]> {
  const latest = new Map<string, LatestItem>();
  const until = { untilCaughtUp: true };
  for await (const { seq, event } of readEventsOf(bus, ItemIngested, until)) {
    if (seq > untilSeq) break;
    const { id, revision, kind, text_length } = event.data;
    latest.set(id, {
      item_id: id,
      revision,
      source_seq: seq,
      kind,
      occurred_at: event.occurred_at,
      text_length,
      spam: event.data.kind === 'email' && event.data.meta.spam,
      pdf: pdfMetaOf(event.data) !== null,
      mail: event.data.kind === 'email',
    });
  }
  for await (const { seq, event } of readEventsOf(bus, NotePut, until)) {
    if (seq > untilSeq) break;
    // Notes have no revision number: each put is newer than the last, so its sequence serves.
    latest.set(event.data.id, {
      item_id: event.data.id,
      revision: seq,
      source_seq: seq,
      kind: 'note',
      occurred_at: event.occurred_at,
      text_length: event.data.body.length,
      spam: false,
      pdf: false,
      mail: false,
    });
  }
  for await (const { seq, event } of readEventsOf(bus, ItemDeleted, until)) {
    if (seq > untilSeq) break;
    latest.delete(event.data.id);
  }
  return [...latest.values()];
}
