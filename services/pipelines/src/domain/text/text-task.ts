import { EmbeddingComputed, encodeVector, PartExtracted, type DataOf } from '@memex/contracts';
import { eventsOf, lastEventOf, type Bus, type EventPublisher } from '@memex/bus';
import type { BlobStore } from '@memex/blobs';
import { isZeroVector, l2normalize, type EmbeddingProvider } from '@memex/embeddings';
import { derivedDraft, readSource, type Derived, type Source } from '../../jobs/source.js';
import { eraseDerived, isDeleted } from '../../jobs/log.js';
import type { TextJob } from '../../jobs/queue.js';
import type { ModelRegistry } from '../models/registry.js';
import { splitPassages, TEXT_PIPELINE, type Passage } from './passages.js';

type PartsData = DataOf<typeof PartExtracted>;

/** Room for the envelope under the log's 1 MB message limit. */
export const MAX_EVENT_BYTES = 900_000;
/** Texts per provider call, so a long document reports progress between calls. */
const EMBED_BATCH = 256;

/**
 * One `text` job: the item's passages (split from its text, or read back from the log when an
 * earlier job published them) and their vectors in each requested space, published as events
 * with ids derived from the job, so doing it twice changes nothing.
 */
export class TextTask {
  constructor(
    private readonly bus: Bus,
    private readonly publisher: EventPublisher,
    private readonly blobs: BlobStore,
    private readonly models: ModelRegistry,
  ) {}

  /**
   * Returns what was published; `touch` keeps the job's lease alive during long work. A first
   * attempt of a job for new content (the scheduler's) has nothing in the log to reuse, so it
   * does not look.
   */
  async run(
    job: TextJob,
    touch: () => void,
    attempt = 1,
    source?: Source,
  ): Promise<{ parts: number; vectors: number; skipped?: string }> {
    source ??= await readSource(this.bus, this.blobs, job);
    if (!source) return { parts: 0, vectors: 0, skipped: 'the item or its event is gone' };
    const drafts: Derived<typeof PartExtracted | typeof EmbeddingComputed>[] = [];
    let passages = job.all_spaces && attempt === 1 ? undefined : await this.publishedPassages(job);
    if (!passages) {
      const text = await source.text();
      if (text === undefined) return { parts: 0, vectors: 0, skipped: 'the item was deleted meanwhile' };
      passages = splitPassages(text, source.pages);
      drafts.push(...this.partEvents(source, passages));
    }
    let vectors = 0;
    for (const space of job.spaces) {
      const provider = await this.models.provider(space);
      const computed = await this.embed(provider, source.title, passages, touch);
      vectors += computed.length;
      drafts.push(...this.embeddingEvents(source, provider, computed));
    }
    // One pipelined publish: parts first, so a projector never sees vectors before their passages.
    await this.publish(source, drafts);
    // Deleted while we worked: take back what we just wrote.
    if (await isDeleted(this.bus, job.item_id)) await eraseDerived(this.bus, job.item_id);
    return { parts: passages.length, vectors };
  }

  /** The passages a previous run published for this revision, if all its pieces are in the log. */
  private async publishedPassages(job: TextJob): Promise<Passage[] | undefined> {
    const matches = (data: PartsData) => data.revision === job.revision && data.pipeline === TEXT_PIPELINE;
    const last = (await lastEventOf(this.bus, PartExtracted, `item:${job.item_id}`))?.event;
    if (!last || !matches(last.data)) return undefined;
    const pieces = last.data.pieces === 1 ? [last] : await eventsOf(this.bus, PartExtracted, `item:${job.item_id}`);
    const byPiece = new Map<number, PartsData>();
    for (const { data } of pieces) if (matches(data)) byPiece.set(data.piece, data);
    const first = byPiece.get(0);
    if (!first || byPiece.size !== first.pieces) return undefined;
    return [...byPiece.values()]
      .sort((a, b) => a.piece - b.piece)
      .flatMap((data) => data.parts.map((part) => ({ ...part, kind: 'passage' as const })));
  }

  private partEvents(source: Source, passages: Passage[]): Derived<typeof PartExtracted>[] {
    const pieces = splitBySize(passages, (p) => Buffer.byteLength(JSON.stringify(p)) + 1);
    return pieces.map((parts, piece) => ({
      definition: PartExtracted,
      key: `parts|${source.revision}|${TEXT_PIPELINE}|${piece}`,
      data: {
        item_id: source.itemId,
        revision: source.revision,
        pipeline: TEXT_PIPELINE,
        total: passages.length,
        piece,
        pieces: pieces.length,
        parts,
      },
    }));
  }

  /**
   * Each passage is embedded with the item's title in front (a short context header helps short
   * or generic passages); passages the model cannot represent get no vector.
   */
  private async embed(
    provider: EmbeddingProvider,
    title: string,
    passages: Passage[],
    touch: () => void,
  ): Promise<Array<{ ordinal: number; vector: Float32Array }>> {
    const texts = passages.map((p) => (title && !p.text.startsWith(title) ? `${title}\n${p.text}` : p.text));
    const out: Array<{ ordinal: number; vector: Float32Array }> = [];
    for (let i = 0; i < texts.length; i += EMBED_BATCH) {
      const vectors = await provider.embed(texts.slice(i, i + EMBED_BATCH));
      vectors.forEach((vector, j) => {
        if (!isZeroVector(vector)) out.push({ ordinal: passages[i + j]!.ordinal, vector });
      });
      touch();
    }
    return out;
  }

  private embeddingEvents(
    source: Source,
    provider: EmbeddingProvider,
    computed: Array<{ ordinal: number; vector: Float32Array }>,
  ): Derived<typeof EmbeddingComputed>[] {
    const vectors = computed.map(({ ordinal, vector }) => ({ ordinal, vector: encodeVector(vector) }));
    const pieces = splitBySize(vectors, (v) => v.vector.length + 30);
    const item = itemVector(
      computed.map((c) => c.vector),
      provider.dims,
    );
    return pieces.map((piece, index) => ({
      definition: EmbeddingComputed,
      key: `vectors|${source.revision}|${TEXT_PIPELINE}|${provider.space}|${index}`,
      data: {
        item_id: source.itemId,
        revision: source.revision,
        pipeline: TEXT_PIPELINE,
        space: provider.space,
        dims: provider.dims,
        total: vectors.length,
        piece: index,
        pieces: pieces.length,
        ...(index === 0 && item ? { item: encodeVector(item) } : {}),
        vectors: piece,
      },
    }));
  }

  /** One pipelined publish of the job's events. */
  private async publish(
    source: Source,
    events: Derived<typeof PartExtracted | typeof EmbeddingComputed>[],
  ): Promise<void> {
    await this.publisher.publishAll(events.map((derived) => derivedDraft(source, derived, TEXT_PIPELINE)));
  }
}

/** The item-level vector: the normalized mean of its passages' vectors (none when it has none). */
export function itemVector(vectors: Float32Array[], dims: number): Float32Array | undefined {
  if (vectors.length === 0) return undefined;
  const mean = new Float32Array(dims);
  for (const vector of vectors) for (let i = 0; i < dims; i++) mean[i]! += vector[i]!;
  return isZeroVector(mean) ? undefined : l2normalize(mean);
}

/** Consecutive groups whose estimated sizes stay under MAX_EVENT_BYTES (always at least one group). */
export function splitBySize<T>(items: T[], size: (item: T) => number, budget = MAX_EVENT_BYTES): T[][] {
  const groups: T[][] = [[]];
  let used = 0;
  for (const item of items) {
    const bytes = size(item);
    if (used + bytes > budget && groups[groups.length - 1]!.length > 0) {
      groups.push([]);
      used = 0;
    }
    groups[groups.length - 1]!.push(item);
    used += bytes;
  }
  return groups;
}
