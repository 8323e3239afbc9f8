import {
  isEventOf,
  pdfMetaOf,
  ItemIngested,
  NotePut,
  type DataOf,
  type EventDefinition,
  type EventEnvelope,
  type PageRange,
} from '@memex/contracts';
import { draftOf, eventAt, type Bus } from '@memex/bus';
import type { BlobStore } from '@memex/blobs';
import { derivedId } from './ids.js';

/** What a job about one item needs of the event the item came in with. */
export interface Source {
  event: EventEnvelope;
  itemId: string;
  revision: number;
  title: string;
  text: () => Promise<string | undefined>;
  /** A PDF's pages (ranges of its text), when it is one. */
  pages: PageRange[] | null;
  /** The item.ingested data, when it came in that way (a note has none). */
  ingested?: DataOf<typeof ItemIngested>;
}

/**
 * The item a job points at (by its source event's sequence), or undefined when it is gone; its
 * `text` is undefined when the item was deleted since.
 */
export async function readSource(
  bus: Bus,
  blobs: BlobStore,
  job: { item_id: string; source_seq: number; revision: number },
): Promise<Source | undefined> {
  const event = await eventAt(bus, job.source_seq);
  // A deleted item's events are erased from the log (and what we publish is checked again after).
  if (!event || event.subject !== `item:${job.item_id}`) return undefined;
  if (isEventOf(NotePut, event)) {
    const data = event.data;
    return {
      event,
      itemId: data.id,
      revision: job.revision,
      title: data.title,
      text: async () => data.body,
      pages: null,
    };
  }
  if (isEventOf(ItemIngested, event)) {
    const data = event.data;
    return {
      event,
      itemId: data.id,
      revision: data.revision,
      title: data.title,
      pages: pdfMetaOf(data)?.pages ?? null,
      ingested: data,
      // Read once, however many tasks of the job ask.
      text: once(async () => {
        try {
          return (await blobs.get(data.text_sha256)).toString('utf8');
        } catch (error) {
          // Deleted meanwhile (its events are erased before its blobs): nothing to do. Otherwise the
          // blob should be there (a blobs mount gone on a worker, a disk restored without it): a
          // failure, retried and at last set aside where the owner sees it — not an item quietly
          // left without passages.
          if (!(await eventAt(bus, job.source_seq))) return undefined;
          throw error;
        }
      }),
    };
  }
  throw new Error(`job for ${job.item_id} points at seq ${job.source_seq}, a ${event.type} event`);
}

function once<T>(read: () => Promise<T>): () => Promise<T> {
  let reading: Promise<T> | undefined;
  return () => (reading ??= read());
}

/** An event derived from an item; `key` makes its id (the same work publishes the same ids). */
export interface Derived<E extends EventDefinition> {
  definition: E;
  key: string;
  data: DataOf<E>;
}

/**
 * The draft of an event derived from the item: its id from the source event and the key, and the
 * item's scope (labels, kind, spam), since it reveals the item's content.
 */
export function derivedDraft<E extends EventDefinition>(
  source: Source,
  { definition, key, data }: Derived<E>,
  pipeline: string,
) {
  const { event, ingested } = source;
  return draftOf(definition, {
    id: derivedId(event.id, key),
    subject: event.subject,
    actor: { kind: 'pipeline', id: pipeline },
    labels: event.labels,
    kind: event.kind ?? ingested?.kind ?? 'note',
    spam: event.spam ?? (ingested?.kind === 'email' && ingested.meta.spam),
    occurred_at: event.occurred_at,
    causation_id: event.id,
    ...(event.correlation_id ? { correlation_id: event.correlation_id } : {}),
    data,
  });
}
