import { mailMetaOf, StructureExtracted, type Mention } from '@memex/contracts';
import type { Bus, EventPublisher } from '@memex/bus';
import type { BlobStore } from '@memex/blobs';
import { eraseDerived, isDeleted } from '../jobs/log.js';
import type { StructureJob } from '../jobs/queue.js';
import { derivedDraft, readSource } from '../jobs/source.js';
import { MAX_EVENT_BYTES } from '../text/text-task.js';
import { mentionsIn } from './mentions.js';
import { signatureIn } from './signature.js';

/** The task and its rules' version: bump it when the rules change, so a re-run's output is told apart. */
export const STRUCTURE_PIPELINE = 'structure@1';

/**
 * One tier-0 job: the item's text read with rules (no model) into mentions with spans, and a
 * mail's signature block, as one `structure.extracted` event whose id derives from the job.
 */
export class StructureTask {
  constructor(
    private readonly bus: Bus,
    private readonly publisher: EventPublisher,
    private readonly blobs: BlobStore,
  ) {}

  async run(job: StructureJob): Promise<{ mentions: number; signature: boolean; skipped?: string }> {
    const source = await readSource(this.bus, this.blobs, job);
    if (!source) return { mentions: 0, signature: false, skipped: 'the item or its event is gone' };
    const text = await source.text();
    if (text === undefined) return { mentions: 0, signature: false, skipped: 'the text blob is gone' };
    const { mentions, truncated } = capped(mentionsIn(text, new Date(source.event.occurred_at)));
    const sender = source.ingested ? mailMetaOf(source.ingested)?.from[0]?.address : undefined;
    const signature = sender ? signatureIn(text, sender) : undefined;
    await this.publisher.publishAll([
      derivedDraft(
        source,
        {
          definition: StructureExtracted,
          key: `structure|${source.revision}|${STRUCTURE_PIPELINE}`,
          data: {
            item_id: source.itemId,
            revision: source.revision,
            made_by: STRUCTURE_PIPELINE,
            mentions,
            truncated,
            ...(signature ? { signature } : {}),
          },
        },
        STRUCTURE_PIPELINE,
      ),
    ]);
    if (await isDeleted(this.bus, job.item_id)) await eraseDerived(this.bus, job.item_id);
    return { mentions: mentions.length, signature: signature !== undefined };
  }
}

/** The first mentions that fit in one event (a long PDF can name thousands of dates). */
function capped(all: Mention[]): { mentions: Mention[]; truncated: boolean } {
  let used = 0;
  const budget = MAX_EVENT_BYTES - 100_000;
  for (const [i, mention] of all.entries()) {
    used += Buffer.byteLength(JSON.stringify(mention)) + 1;
    if (used > budget) return { mentions: all.slice(0, i), truncated: true };
  }
  return { mentions: all, truncated: false };
}
