import { sql } from 'kysely';
import type { CommitmentExtracted, EventOf, EvidenceRef, LinksInferred, StructureExtracted } from '@memex/contracts';
import { linkId, normalizeKey, parseRef, pipelineOf, refString } from '../domain/keys.js';
import type { Participant } from '../domain/mail.js';
import {
  countNames,
  createKeys,
  entitiesOfKeys,
  KeyCounts,
  nameKey,
  noteVis,
  refreshEntities,
  type Trx,
  type Vis,
} from './entities.js';
import { dedupe, writeLinks, type EvidenceRow, type LinkRow } from './links.js';
import { namesGiven, setParticipants, signatureReading, type StoredItem } from './signatures.js';
import { commitmentLinks, commitmentRows, insertCommitments, type CommitmentRow } from './understanding.js';

/** A link as `links.inferred` states it (its evidence defaults to the item). */
export type LinkInput = EventOf<typeof LinksInferred>['data']['links'][number];

/** What a link read in an item rests on: its own evidence, else the item. */
export function evidenceOf(link: LinkInput, itemId: string): EvidenceRef[] {
  return link.evidence?.length ? link.evidence : [{ item: itemId }];
}

/** The inferred link a maker read in an item, on the evidence that stands. */
export function inferredRow(link: LinkInput, madeBy: string, itemId: string, evidence: EvidenceRow[]): LinkRow {
  const src = parseRef(link.src);
  const dst = parseRef(link.dst);
  return {
    id: linkId(refString(src), link.rel, refString(dst), madeBy),
    src,
    rel: link.rel,
    dst,
    validFrom: link.valid_from ?? null,
    validTo: link.valid_to ?? null,
    confidence: link.confidence,
    basis: 'inferred',
    madeBy,
    vis: null,
    evidence,
    via: itemId,
  };
}

/** The keys a reading names (each a thing, made if new) and the names it gives them, seen in `vis`. */
export function namesOf(names: Record<string, string> | undefined, vis: Vis): { keys: string[]; counts: KeyCounts } {
  const counts = new KeyCounts();
  if (!names) return { keys: [], counts };
  for (const [key, name] of Object.entries(names)) counts.add(nameKey(normalizeKey(key), name.trim()), vis, 1);
  return { keys: Object.keys(names).map(normalizeKey), counts };
}

/** The keys `ensureKeys` makes for links' ends, in its order. */
function linkKeys(links: LinkRow[]): string[] {
  return [...new Set(links.flatMap((l) => [l.src, l.dst].flatMap((end) => ('key' in end ? [end.key] : []))))].sort();
}

/**
 * What deciding whether an event writes something for the first time needs, read for a run's
 * items at once: the items, which are deleted, and what earlier readings left on them (evidence by
 * pipeline and basis, commitments and refused evidence by pipeline) — what a reading would replace.
 * Items new in the run, not yet written, are added as the run takes them (`added`).
 */
export class ReadItems {
  private constructor(
    readonly items: Map<string, StoredItem & { made_by: string }>,
    private readonly left: Set<string>,
  ) {}

  static async of(trx: Trx, ids: string[]): Promise<ReadItems> {
    const unique = [...new Set(ids)];
    const items = await sql<StoredItem & { id: string; made_by: string }>`
      select id, kind, labels, spam, occurred_at, participants, made_by from items where id = any(${unique}::text[])`.execute(
      trx,
    );
    const left = await sql<{ what: string }>`
      select 'deleted ' || id as what from tombstones where id = any(${unique}::text[])
      union select 'evidence ' || ev.via || ' ' || l.pipeline || ' ' || l.basis
        from evidence ev join links l on l.id = ev.link where ev.via = any(${unique}::text[]) and ev.via <> ''
      union select 'commitments ' || item || ' ' || pipeline from commitments where item = any(${unique}::text[])
      union select 'refused ' || item || ' ' || split_part(made_by, '@', 1) from refused_evidence where item = any(${unique}::text[])`.execute(
      trx,
    );
    return new ReadItems(new Map(items.rows.map((row) => [row.id, row])), new Set(left.rows.map((r) => r.what)));
  }

  deleted(id: string): boolean {
    return this.left.has(`deleted ${id}`);
  }

  /** The graph has the item, or had it (deleted). */
  has(id: string): boolean {
    return this.items.has(id) || this.deleted(id);
  }

  /** An item new in the run, as the graph will store it, for the readings after it. */
  added(id: string, item: StoredItem & { made_by: string }): void {
    this.items.set(id, item);
  }

  /** An earlier reading of the item by this pipeline left something a new one would replace. */
  readBefore(id: string, pipeline: string, basis: 'observed' | 'inferred'): boolean {
    return (
      this.left.has(`evidence ${id} ${pipeline} ${basis}`) ||
      (basis === 'inferred' &&
        (this.left.has(`commitments ${id} ${pipeline}`) || this.left.has(`refused ${id} ${pipeline}`)))
    );
  }
}

/** A write in a `FirstWrites`: its links, and the keys it makes things of, in the order it makes them. */
interface Entry {
  links: LinkRow[];
  /** Read when the group is written: a new item's links gain works_at links just before. */
  keys: () => string[];
}

/**
 * What events that write for the first time write, together: new items' names and links (the
 * items themselves are the projector's) and tier 0's first readings of items (signatures,
 * commitments) — the effect of `applyStructure`, the projector's `commitmentExtracted` and its
 * ingest of a new item on each in turn. A reading counts when it reads an item no earlier reading
 * of its task left anything on (nothing to replace) and its evidence all stands (nothing refused).
 * These commute but for the things they make, which are made in the order the events one by one
 * would make them (so a hash collision probes alike).
 */
export class FirstWrites {
  private readonly entries: Entry[] = [];
  private readonly names = new KeyCounts();
  private readonly participants: { id: string; participants: Participant[] }[] = [];
  private readonly commitments: CommitmentRow[] = [];

  /**
   * A new item's names and links, as its ingest makes them: its people (the links' sources)
   * first, then its organizations. `links` is read at `write`, so works_at links pushed onto it
   * before count.
   */
  addItem(names: KeyCounts, links: LinkRow[]): void {
    const keys = (ends: ('src' | 'dst')[]) =>
      [...new Set(links.flatMap((l) => ends.flatMap((end) => ('key' in l[end] ? [l[end].key] : []))))].sort();
    this.names.addAll(names);
    this.entries.push({ links, keys: () => [...keys(['src']), ...keys(['src', 'dst'])] });
  }

  /** Takes the event if it is a first reading; false when it must be applied alone. */
  add(event: EventOf<typeof StructureExtracted> | EventOf<typeof CommitmentExtracted>, known: ReadItems): boolean {
    return event.type === 'structure.extracted' ? this.addSignature(event, known) : this.addCommitments(event, known);
  }

  private addSignature(event: EventOf<typeof StructureExtracted>, known: ReadItems): boolean {
    const { item_id: itemId, made_by: madeBy } = event.data;
    const item = known.items.get(itemId);
    // An item the graph lacks (or deleted) gets nothing.
    if (!item) return true;
    if (known.readBefore(itemId, pipelineOf(madeBy), 'observed')) return false;
    const reading = signatureReading(event.data, item);
    if (!reading) return true;
    const keys = linkKeys(reading.links);
    this.entries.push({ links: reading.links, keys: () => keys });
    const given = namesGiven(item, reading.named);
    if (given) {
      this.names.addAll(given.counts);
      this.participants.push({ id: itemId, participants: given.participants });
    }
    return true;
  }

  private addCommitments(event: EventOf<typeof CommitmentExtracted>, known: ReadItems): boolean {
    const { data } = event;
    const itemId = data.item_id;
    const item = known.items.get(itemId);
    if (known.deleted(itemId)) return true;
    // Evidence on an item the graph lacks, or on an agent's note, is refused: alone.
    if (!item || (item.kind === 'note' && item.made_by !== 'user')) return false;
    if (known.readBefore(itemId, pipelineOf(data.made_by), 'inferred')) return false;
    const read = commitmentLinks(data);
    const rows: LinkRow[] = [];
    for (const link of read.links) {
      const evidence: EvidenceRow[] = [];
      for (const e of evidenceOf(link, itemId)) {
        // Evidence elsewhere is checked alone.
        if (!('item' in e) || e.item !== itemId) return false;
        evidence.push({ item: itemId, part: e.part ?? '', quote: e.quote ?? null });
      }
      rows.push(inferredRow(link, data.made_by, itemId, evidence));
    }
    this.commitments.push(...commitmentRows(data));
    const names = namesOf(read.names, noteVis(event.labels));
    this.names.addAll(names.counts);
    const links = dedupe(rows);
    const keys = [...[...new Set(names.keys)].sort(), ...linkKeys(links)];
    this.entries.push({ links, keys: () => keys });
    return true;
  }

  /**
   * Writes it all, after the new items themselves (readings' evidence and participants are on
   * them); `known` is the run's items, as read and added.
   */
  async write(trx: Trx, known: ReadItems): Promise<void> {
    await insertCommitments(trx, this.commitments);
    const { ids, created } = await createKeys(trx, [...new Set(this.entries.flatMap((entry) => entry.keys()))]);
    const named = await countNames(trx, this.names);
    await writeLinks(
      trx,
      this.entries.flatMap((entry) => entry.links),
      { keys: ids, items: known.items },
    );
    await setParticipants(trx, this.participants);
    // One refresh for the new things (their terms written whatever they show) and those named
    // (the keys named are those of the links, so their things are known but for a stray one).
    const createdSet = new Set(created);
    const namedThings = [
      ...named.flatMap((key) => (ids.has(key) ? [ids.get(key)!] : [])),
      ...(await entitiesOfKeys(
        trx,
        named.filter((key) => !ids.has(key)),
      )),
    ];
    await refreshEntities(trx, [...created, ...new Set(namedThings.filter((id) => !createdSet.has(id)))], createdSet);
  }
}
