import { CommitmentExtracted, pdfMetaOf, PaperExtracted, StructureExtracted } from '@memex/contracts';
import type { Bus, Drafted, EventPublisher } from '@memex/bus';
import type { BlobStore } from '@memex/blobs';
import { eraseDerived, isDeleted } from '../../jobs/log.js';
import type { StructureJob, Tier0Reading } from '../../jobs/queue.js';
import { derivedDraft, readSource, type Source } from '../../jobs/source.js';
import { PAPER_RULES, readPaper } from '../papers/index.js';
import { MAX_EVENT_BYTES } from '../text/text-task.js';
import { COMMITMENT_RULES, commitmentsIn } from './commitments.js';
import { mentionsIn } from './mentions.js';
import { signatureIn } from './signature.js';

/** The task and its rules' version: bump it when the rules change, so a re-run's output is told apart. */
export const STRUCTURE_PIPELINE = 'structure@1';
/**
 * Tier 0 as a whole, and what its version added: version 2 read papers (papers@1) and
 * commitments (commitments@1). A new version is logged once (structure.upgraded, tier0.ts) and
 * old items are read again by what it added, in the background.
 */
export const TIER0_VERSION = 'tier0@2';
export const TIER0_ADDED: Tier0Reading[] = ['paper', 'commitments'];

export interface StructureResult {
  mentions: number;
  signature: boolean;
  /** References read, when the item is a paper. */
  references?: number;
  commitments?: number;
  skipped?: string;
}

/**
 * One tier-0 job: the item's text read with rules (no model) into mentions with spans and a
 * mail's signature block (`structure.extracted`), a PDF's paper header and references
 * (`paper.extracted`), a mail's commitments (`commitment.extracted`); event ids derive from the
 * job, so doing it twice changes nothing.
 */
export class StructureTask {
  constructor(
    private readonly bus: Bus,
    private readonly publisher: EventPublisher,
    private readonly blobs: BlobStore,
  ) {}

  /** `source`: the item as the job's caller read it already (a text job's tier 0). */
  async run(job: StructureJob, source?: Source): Promise<StructureResult> {
    source ??= await readSource(this.bus, this.blobs, job);
    if (!source) return { mentions: 0, signature: false, skipped: 'the item or its event is gone' };
    const text = await source.text();
    if (text === undefined) return { mentions: 0, signature: false, skipped: 'the item was deleted meanwhile' };
    const sent = new Date(source.event.occurred_at);
    const reads = (reading: Tier0Reading) => !job.readings || job.readings.includes(reading);
    const mail = source.ingested?.kind === 'email' ? source.ingested.meta : null;
    const sender = mail?.from[0];
    const drafts: Drafted<typeof StructureExtracted | typeof PaperExtracted | typeof CommitmentExtracted>[] = [];
    const result: StructureResult = { mentions: 0, signature: false };
    if (reads('structure')) {
      const { kept: mentions, truncated } = capped(mentionsIn(text, sent));
      const signature = sender ? signatureIn(text, sender.address) : undefined;
      result.mentions = mentions.length;
      result.signature = signature !== undefined;
      drafts.push(
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
      );
    }
    if (source.pages && reads('paper')) {
      const reading = readPaper(text, source.pages, (source.ingested && pdfMetaOf(source.ingested)?.info) ?? {}, {
        title: source.title,
        year: source.event.occurred_at ? sent.getUTCFullYear() : null,
      });
      const references = capped(reading.references);
      result.references = references.kept.length;
      drafts.push(
        derivedDraft(
          source,
          {
            definition: PaperExtracted,
            key: `paper|${source.revision}|${PAPER_RULES}`,
            data: {
              item_id: source.itemId,
              revision: source.revision,
              made_by: PAPER_RULES,
              paper: reading.paper,
              references: references.kept,
              truncated: references.truncated,
            },
          },
          PAPER_RULES,
        ),
      );
    }
    if (mail && sender && !mail.spam && reads('commitments')) {
      const commitments = commitmentsIn(text, {
        itemId: source.itemId,
        sent,
        from: party(sender),
        to: mail.to.map(party),
      });
      result.commitments = commitments.length;
      drafts.push(
        derivedDraft(
          source,
          {
            definition: CommitmentExtracted,
            key: `commitments|${source.revision}|${COMMITMENT_RULES}`,
            data: {
              item_id: source.itemId,
              revision: source.revision,
              made_by: COMMITMENT_RULES,
              commitments: capped(commitments).kept,
            },
          },
          COMMITMENT_RULES,
        ),
      );
    }
    if (drafts.length > 0) await this.publisher.publishAll(drafts);
    if (await isDeleted(this.bus, job.item_id)) await eraseDerived(this.bus, job.item_id);
    return result;
  }
}

function party(address: { address: string; name?: string | null }): { address: string; name?: string } {
  return address.name ? { address: address.address, name: address.name } : { address: address.address };
}

/** The first entries that fit in one event (a long PDF can name thousands of dates). */
function capped<T>(all: T[]): { kept: T[]; truncated: boolean } {
  let used = 0;
  const budget = MAX_EVENT_BYTES - 100_000;
  for (const [i, entry] of all.entries()) {
    used += Buffer.byteLength(JSON.stringify(entry)) + 1;
    if (used > budget) return { kept: all.slice(0, i), truncated: true };
  }
  return { kept: all, truncated: false };
}
