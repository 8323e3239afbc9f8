import { sql } from 'kysely';
import type { EventOf, StructureExtracted } from '@memex/contracts';
import { linkId, pipelineOf, refString } from '../domain/keys.js';
import type { Participant } from '../domain/mail.js';
import { nameOf, SIGNATURE_CONFIDENCE, signatureFacts } from '../domain/signature.js';
import { KeyCounts, nameKey, nameKeys, prune, type Trx, type Vis } from './entities.js';
import { dropEvidence, writeLinks, type LinkRow } from './links.js';

/**
 * Tier 0's reading of an item: a mail's signature block becomes observed links on the sender's
 * person, each with the line it was read from as evidence (`chars:<start>-<end>` of the item's
 * text, and the words). What the same task read from the item before is replaced, so a new
 * version of the rules takes back facts the old one got wrong. The names it gives are kept in the
 * item's participants (as a card lists them), so deleting the item takes them back.
 */
/** What the graph keeps of an item that this needs (the projector's `storedItem`). */
export interface StoredItem {
  kind: string;
  labels: string[];
  spam: boolean;
  occurred_at: Date | null;
  participants: Participant[] | null;
}

export async function applyStructure(
  trx: Trx,
  event: EventOf<typeof StructureExtracted>,
  item: StoredItem | undefined,
): Promise<void> {
  const { item_id: itemId, made_by: madeBy, signature } = event.data;
  // A deleted item (or one the graph never kept) gets nothing.
  if (!item) return;
  const touched = await dropEvidence(trx, { via: itemId, pipeline: pipelineOf(madeBy), basis: 'observed' });
  if (signature && !item.spam) {
    const person = { key: `person:${signature.sender.toLowerCase()}`, kind: 'person' };
    const at = item.occurred_at?.toISOString() ?? null;
    const facts = signatureFacts(signature);
    const links: LinkRow[] = facts.map((fact) => ({
      id: linkId(person.key, fact.rel, refString(fact.dst), madeBy),
      src: person,
      rel: fact.rel,
      dst: fact.dst,
      validFrom: at,
      validTo: null,
      confidence: SIGNATURE_CONFIDENCE,
      basis: 'observed',
      madeBy,
      vis: null,
      evidence: [{ item: itemId, part: `chars:${fact.start}-${fact.end}`, quote: fact.quote }],
      via: itemId,
    }));
    await writeLinks(trx, links);
    const name = nameOf(signature);
    const named: Participant[] = [
      ...(name ? [{ rel: 'listed' as const, address: signature.sender, name, key: person.key }] : []),
      ...facts
        .filter((f) => f.rel === 'works_at')
        .map((f) => ({ rel: 'listed' as const, address: signature.sender, name: f.name, key: f.dst.key })),
    ];
    await giveNames(trx, itemId, item, named);
  }
  await prune(trx, touched.sort());
}

/** Names the item gives that it did not give before (a replayed or re-run event names once). */
async function giveNames(trx: Trx, itemId: string, item: StoredItem, named: Participant[]): Promise<void> {
  const had = item.participants ?? [];
  const fresh = named.filter((n) => !had.some((p) => p.key === n.key && p.name === n.name));
  if (fresh.length === 0) return;
  const vis: Vis = { kind: item.kind, labels: item.labels, spam: item.spam };
  const counts = new KeyCounts();
  for (const n of fresh) counts.add(nameKey(n.key!, n.name), vis, 1);
  await nameKeys(trx, counts);
  await sql`update items set participants = ${JSON.stringify([...had, ...fresh])}::jsonb where id = ${itemId}`.execute(
    trx,
  );
}
