import type { EventEnvelope, KindAndMeta } from '@memex/contracts';
import { ItemIngested } from '@memex/contracts';
import { BlobStore, sha256 } from '@memex/blobs';
import { Bus, draftOf, EventPublisher, newId, readLog, typeFilter } from '@memex/bus';
import { itemMeta } from '@memex/testing';

/** Events of a type about an item, waiting until `count` are there. */
export async function eventsOf(bus: Bus, type: string, itemId: string, count: number): Promise<EventEnvelope[]> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const found: EventEnvelope[] = [];
    for await (const { event } of readLog(bus, { filter: typeFilter(type), untilCaughtUp: true })) {
      if (event.subject === `item:${itemId}`) found.push(event);
    }
    if (found.length >= count) return found;
    if (Date.now() > deadline) throw new Error(`expected ${count} ${type} events for ${itemId}, found ${found.length}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

export interface TextItem {
  title: string;
  text: string;
  labels?: string[];
  /** Its kind and meta (`itemMeta('email', {...})`); a plain-text document by default. */
  typed?: KindAndMeta;
  occurred_at?: string;
}

/** An item.ingested as ingest writes one for generated text, its text put in the blob store first. */
export async function textItemDraft(blobs: BlobStore, item: TextItem, made = { by: 'test', source: 'fixtures' }) {
  const id = newId();
  const text = Buffer.from(item.text);
  const textSha = await blobs.put(text);
  const typed = item.typed ?? itemMeta('document', {}, text.length);
  return draftOf(ItemIngested, {
    subject: `item:${id}`,
    actor: { kind: 'import', id: made.by },
    kind: typed.kind,
    labels: item.labels ?? [],
    ...(item.occurred_at ? { occurred_at: item.occurred_at } : {}),
    data: {
      id,
      ...typed,
      revision: 1,
      title: item.title,
      source: { kind: made.by, id: made.source },
      external_id: null,
      identity: `sha256:${sha256(text)}`,
      origin: 'imported',
      content_type: 'text/plain',
      content_sha256: textSha,
      size: text.length,
      text_sha256: textSha,
      text_length: item.text.length,
    },
  });
}

/** Publishes an item.ingested the way ingest does: the text in a blob first. */
export async function ingest(
  publisher: EventPublisher,
  blobs: BlobStore,
  item: TextItem,
): Promise<{ id: string; seq: number }> {
  const draft = await textItemDraft(blobs, item);
  const { seq } = await publisher.publish(draft.definition, draft.draft);
  return { id: draft.draft.data.id, seq };
}
