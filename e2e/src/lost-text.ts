import { createHash } from 'node:crypto';
import { ItemIngested } from '@memex/contracts';
import { EventPublisher, newId, type Bus } from '@memex/bus';
import { itemMeta } from '@memex/testing';

export /** An item.ingested whose text blob is not in the store (a disk restored without it): what ingest would log. */
async function logWithoutItsText(bus: Bus, words: string): Promise<{ id: string; seq: number; text: Buffer }> {
  const text = Buffer.from(words);
  const textSha = createHash('sha256').update(text).digest('hex');
  const id = newId();
  const { seq } = await new EventPublisher(bus, 'ingest').publish(ItemIngested, {
    subject: `item:${id}`,
    actor: { kind: 'import', id: 'test' },
    kind: 'document',
    spam: false,
    labels: [],
    data: {
      id,
      ...itemMeta('document', {}, text.length),
      revision: 1,
      title: 'Lost text',
      source: { kind: 'import:folder', id: 'x' },
      external_id: `${id}.txt`,
      identity: `sha256:${textSha}`,
      origin: 'imported',
      content_type: 'text/plain',
      content_sha256: textSha,
      size: text.length,
      text_sha256: textSha,
      text_length: text.length,
    },
  });
  return { id, seq, text };
}
