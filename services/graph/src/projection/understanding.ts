import { sql } from 'kysely';
import type { CommitmentExtracted, DataOf, EvidenceRef, ItemUnderstood } from '@memex/contracts';
import { hashId, pipelineOf, slugify } from '../domain/keys.js';
import type { Trx } from './entities.js';

/** A link a model read in an item, as `links.inferred` states one. */
export interface ReadLink {
  src: string;
  rel: string;
  dst: string;
  confidence: number;
  valid_to?: string;
  evidence: EvidenceRef[];
}

export interface ReadLinks {
  links: ReadLink[];
  names: Record<string, string>;
}

/** How sure the graph takes a model's reading to be (below what rules and the owner say). */
export const TIER2_CONFIDENCE = 0.6;

const quoted = (item: string, quote?: string): EvidenceRef[] => [{ item, ...(quote ? { quote } : {}) }];

/**
 * Tier 2's topics, entities and claims as inferred links from the item (seed §5): `about`
 * topic:<name> (merged by name: one slug), `mentions` a person, organization, place or project
 * (joined by its key, an address or a domain, when the model read one; else by name, a new thing
 * until the owner merges it), and a paper's `claims` claim:<hash>. A summary is no link.
 */
export function understoodLinks(data: DataOf<typeof ItemUnderstood>): ReadLinks {
  const item = `item:${data.item_id}`;
  const links: ReadLink[] = [];
  const names: Record<string, string> = {};
  const add = (dst: string, rel: string, name: string, quote?: string) => {
    links.push({ src: item, rel, dst, confidence: TIER2_CONFIDENCE, evidence: quoted(data.item_id, quote) });
    names[dst] = name;
  };
  for (const topic of data.topics ?? []) add(`topic:${slugify(topic.name)}`, 'about', topic.name, topic.quote);
  for (const entity of data.entities ?? []) {
    const key = entityKey(entity.kind, entity.name, entity.key);
    if (key) add(key, 'mentions', entity.name, entity.quote);
  }
  for (const claim of data.claims ?? []) {
    add(`claim:${hashId(claim.text.trim().toLowerCase()).toString(36)}`, 'claims', claim.text, claim.quote);
  }
  return { links, names };
}

function entityKey(kind: string, name: string, key?: string): string | undefined {
  if (kind === 'person' && key?.includes('@')) return `person:${key}`;
  if (kind === 'org' && key && /^[a-z0-9.-]+\.[a-z]{2,}$/.test(key)) return `org:${key}`;
  const slug = slugify(name);
  return slug === 'untitled' ? undefined : `${kind}:${slug}`;
}

/**
 * Commitments as links: each promiser (by address, else by name) `committed_to` a commitment
 * thing named by what was promised, valid until it is due, with the sentence as evidence.
 */
export function commitmentLinks(data: DataOf<typeof CommitmentExtracted>): ReadLinks {
  const links: ReadLink[] = [];
  const names: Record<string, string> = {};
  for (const c of data.commitments) {
    const dst = `commitment:${commitmentId(data.item_id, data.made_by, c.key)}`;
    names[dst] = c.what;
    const due = c.due ? new Date(c.due.length === 10 ? `${c.due}T23:59:59Z` : c.due) : undefined;
    for (const party of c.by) {
      const src = party.address ? `person:${party.address}` : party.name ? `person:${slugify(party.name)}` : undefined;
      if (!src) continue;
      if (party.name) names[src] = party.name;
      links.push({
        src,
        rel: 'committed_to',
        dst,
        confidence: c.confidence,
        ...(due && !Number.isNaN(due.getTime()) ? { valid_to: due.toISOString() } : {}),
        evidence: [{ item: data.item_id, part: `chars:${c.start}-${c.end}`, quote: c.quote }],
      });
    }
  }
  return { links, names };
}

/** A commitment's id: its item, the maker's task (not its version) and its key, so a re-run keeps the owner's status. */
export function commitmentId(itemId: string, madeBy: string, key: string): string {
  return hashId(`${itemId}|${pipelineOf(madeBy)}|${key}`).toString(36);
}

/** A row of the commitments read model. */
export interface CommitmentRow {
  id: string;
  item: string;
  pipeline: string;
  made_by: string;
  due: string | null;
  body: DataOf<typeof CommitmentExtracted>['commitments'][number];
}

/** The commitments read model (`memex.commitments.list`): one maker task's list for the item replaces its last. */
export async function writeCommitments(trx: Trx, data: DataOf<typeof CommitmentExtracted>): Promise<void> {
  await sql`delete from commitments where item = ${data.item_id} and pipeline = ${pipelineOf(data.made_by)}`.execute(
    trx,
  );
  await insertCommitments(trx, commitmentRows(data));
}

export function commitmentRows(data: DataOf<typeof CommitmentExtracted>): CommitmentRow[] {
  return data.commitments.map((c) => ({
    id: commitmentId(data.item_id, data.made_by, c.key),
    item: data.item_id,
    pipeline: pipelineOf(data.made_by),
    made_by: data.made_by,
    due: c.due,
    body: c,
  }));
}

export async function insertCommitments(trx: Trx, rows: CommitmentRow[]): Promise<void> {
  if (rows.length === 0) return;
  await sql`
    insert into commitments (id, item, pipeline, made_by, due, body)
    select r.id, r.item, r.pipeline, r.made_by, r.due, r.body
    from jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) as r(id text, item text, pipeline text, made_by text, due text, body jsonb)
    on conflict (id) do update set made_by = excluded.made_by, due = excluded.due, body = excluded.body`.execute(trx);
}
