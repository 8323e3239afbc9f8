import { sql } from 'kysely';
import type { DataOf, EventOf, StructureExtracted } from '@memex/contracts';
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
  const { item_id: itemId, made_by: madeBy } = event.data;
  // A deleted item (or one the graph never kept) gets nothing.
  if (!item) return;
  const touched = await dropEvidence(trx, { via: itemId, pipeline: pipelineOf(madeBy), basis: 'observed' });
  const reading = signatureReading(event.data, item);
  if (reading) {
    await writeLinks(trx, reading.links);
    const given = namesGiven(item, reading.named);
    if (given) {
      await nameKeys(trx, given.counts);
      await setParticipants(trx, [{ id: itemId, participants: given.participants }]);
    }
  }
  await prune(trx, touched.sort());
}

/**
 * What a mail's signature says (none for spam or a mail without one): observed links on the
 * sender's person, and the names it gives.
 */
export function signatureReading(
  data: DataOf<typeof StructureExtracted>,
  item: StoredItem,
): { links: LinkRow[]; named: Participant[] } | undefined {
  const { item_id: itemId, made_by: madeBy, signature } = data;
  if (!signature || item.spam) return undefined;
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
  const name = nameOf(signature);
  const named: Participant[] = [
    ...(name ? [{ rel: 'listed' as const, address: signature.sender, name, key: person.key }] : []),
    ...facts
      .filter((f) => f.rel === 'works_at')
      .map((f) => ({ rel: 'listed' as const, address: signature.sender, name: f.name, key: f.dst.key })),
  ];
  return { links, named };
}

/**
 * Names the item gives that it did not give before (a replayed or re-run event names once): their
 * counts, and the item's participants with them; none when it gives no new name.
 */
export function namesGiven(
  item: StoredItem,
  named: Participant[],
): { counts: KeyCounts; participants: Participant[] } | undefined {
  const had = item.participants ?? [];
  const fresh = named.filter((n) => !had.some((p) => p.key === n.key && p.name === n.name));
  if (fresh.length === 0) return undefined;
  const vis: Vis = { kind: item.kind, labels: item.labels, spam: item.spam };
  const counts = new KeyCounts();
  for (const n of fresh) counts.add(nameKey(n.key!, n.name), vis, 1);
  return { counts, participants: [...had, ...fresh] };
}

/** Items' participants replaced, in one statement. */
export async function setParticipants(trx: Trx, rows: { id: string; participants: Participant[] }[]): Promise<void> {
  if (rows.length === 0) return;
  await sql`
    update items i set participants = r.participants
    from jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) as r(id text, participants jsonb) where i.id = r.id`.execute(
    trx,
  );
}
