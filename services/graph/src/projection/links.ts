import { sql, type RawBuilder } from 'kysely';
import type { EvidenceRef } from '@memex/contracts';
import { parseRef, pipelineOf, refString, type Ref } from '../domain/keys.js';
import { ensureKeys, KeyCounts, observe, ownLinkVis, type Trx, type Vis } from './entities.js';

export interface EvidenceRow {
  item: string;
  part: string;
  quote: string | null;
}

/** A link as the projector writes it; `id` derives from ends, relation and maker. */
export interface LinkRow {
  id: string;
  src: Ref;
  rel: string;
  dst: Ref;
  validFrom: string | null;
  validTo: string | null;
  confidence: number;
  basis: 'observed' | 'inferred';
  madeBy: string;
  /** The caller's labels (owner's links): how the link is scoped if it has, or is left with, no evidence. */
  labels?: string[];
  /** Set for links without evidence (the owner's): they are scoped like a note with `labels`. */
  vis: Vis | null;
  evidence: EvidenceRow[];
  /** The item whose reading produced the evidence ('' for a caller's link). */
  via: string;
}

function keyOf(ref: Ref): string | null {
  return 'key' in ref ? ref.key : null;
}

function itemOf(ref: Ref): string | null {
  return 'item' in ref ? ref.item : null;
}

/** Visibility of items the graph knows; unknown ids are absent. `read`: items the caller has read already. */
export async function itemVis(
  trx: Trx,
  ids: string[],
  read: ReadonlyMap<string, Vis & { made_by: string }> = new Map(),
): Promise<Map<string, Vis & { madeBy: string }>> {
  const out = new Map<string, Vis & { madeBy: string }>();
  for (const id of ids) {
    const item = read.get(id);
    if (item) out.set(id, { kind: item.kind, labels: item.labels, spam: item.spam, madeBy: item.made_by });
  }
  const unread = [...new Set(ids.filter((id) => !out.has(id)))];
  if (unread.length === 0) return out;
  const rows = await sql<{ id: string; kind: string; labels: string[]; spam: boolean; made_by: string }>`
    select id, kind, labels, spam, made_by from items where id = any(${unread}::text[])`.execute(trx);
  for (const row of rows.rows)
    out.set(row.id, { kind: row.kind, labels: row.labels, spam: row.spam, madeBy: row.made_by });
  return out;
}

/** What a caller of `writeLinks` has read already: the things of keys (`createKeys`), items. */
export interface Known {
  keys: ReadonlyMap<string, number>;
  items: ReadonlyMap<string, Vis & { made_by: string }>;
}

/**
 * The same link made again: active, over the union of both times, with the later confidence
 * (what `writeLinks`' upsert does to a stored link, so a batch may carry a link more than once).
 */
function remade(before: LinkRow, after: LinkRow): LinkRow {
  const from = [before.validFrom, after.validFrom].filter((t): t is string => t !== null);
  return {
    ...before,
    validFrom: from.length > 0 ? from.reduce((a, b) => (Date.parse(a) <= Date.parse(b) ? a : b)) : null,
    validTo:
      before.validTo === null || after.validTo === null
        ? null
        : Date.parse(before.validTo) >= Date.parse(after.validTo)
          ? before.validTo
          : after.validTo,
    confidence: after.confidence,
  };
}

/**
 * Writes links and their evidence: a link made again gains evidence (and is active again), and
 * each new evidence row is an observation of the link's keys in that item's visibility class.
 */
export async function writeLinks(trx: Trx, links: LinkRow[], known?: Known): Promise<void> {
  if (links.length === 0) return;
  const keys = links.flatMap((l) => [keyOf(l.src), keyOf(l.dst)].filter((k): k is string => k !== null));
  const ids = known && keys.every((key) => known.keys.has(key)) ? known.keys : await ensureKeys(trx, keys);
  const byId = new Map<string, LinkRow>();
  for (const link of links) {
    const seen = byId.get(link.id);
    byId.set(link.id, seen ? remade(seen, link) : link);
  }
  const rows = [...byId.values()].map((l) => ({
    id: l.id,
    src_key: keyOf(l.src),
    src_entity: keyOf(l.src) ? ids.get(keyOf(l.src)!)! : null,
    src_item: itemOf(l.src),
    rel: l.rel,
    dst_key: keyOf(l.dst),
    dst_entity: keyOf(l.dst) ? ids.get(keyOf(l.dst)!)! : null,
    dst_item: itemOf(l.dst),
    valid_from: l.validFrom,
    valid_to: l.validTo,
    confidence: l.confidence,
    basis: l.basis,
    made_by: l.madeBy,
    pipeline: pipelineOf(l.madeBy),
    vis_kind: l.vis?.kind ?? null,
    labels: l.vis?.labels ?? [...(l.labels ?? [])].sort(),
  }));
  const inserted = await sql<{ id: string; fresh: boolean }>`
    insert into links (id, src_key, src_entity, src_item, rel, dst_key, dst_entity, dst_item, valid_from, valid_to,
                       confidence, basis, made_by, pipeline, vis_kind, labels)
    select r.id, r.src_key, r.src_entity, r.src_item, r.rel, r.dst_key, r.dst_entity, r.dst_item, r.valid_from, r.valid_to,
           r.confidence, r.basis, r.made_by, r.pipeline, r.vis_kind, array(select jsonb_array_elements_text(r.labels))
    from jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) as r(
      id text, src_key text, src_entity bigint, src_item text, rel text, dst_key text, dst_entity bigint, dst_item text,
      valid_from timestamptz, valid_to timestamptz, confidence real, basis text, made_by text, pipeline text, vis_kind text, labels jsonb)
    on conflict (id) do update set
      status = 'active',
      valid_from = least(links.valid_from, excluded.valid_from),
      valid_to = case when links.valid_to is null or excluded.valid_to is null then null else greatest(links.valid_to, excluded.valid_to) end,
      confidence = excluded.confidence
    returning id, (xmax = 0) as fresh`.execute(trx);
  const fresh = new Set(inserted.rows.filter((r) => r.fresh).map((r) => r.id));
  const counts = new KeyCounts();
  const observeLink = (link: LinkRow, vis: Vis) => {
    for (const key of [keyOf(link.src), keyOf(link.dst)]) if (key) counts.add(key, vis, 1);
  };
  for (const link of byId.values()) if (link.vis && fresh.has(link.id)) observeLink(link, link.vis);

  const evidence = links.flatMap((l) =>
    l.evidence.map((e) => ({ link: l.id, item: e.item, part: e.part, quote: e.quote, via: l.via })),
  );
  if (evidence.length > 0) {
    const added = await sql<{ link: string; item: string }>`
      insert into evidence (link, item, part, quote, via)
      select r.link, r.item, r.part, r.quote, r.via
      from jsonb_to_recordset(${JSON.stringify(evidence)}::jsonb) as r(link text, item text, part text, quote text, via text)
      on conflict do nothing
      returning link, item`.execute(trx);
    const vis = await itemVis(
      trx,
      added.rows.map((r) => r.item),
      known?.items,
    );
    for (const row of added.rows) {
      const v = vis.get(row.item);
      if (v) observeLink(byId.get(row.link)!, { kind: v.kind, labels: v.labels, spam: v.spam });
    }
  }
  await observe(trx, counts);
}

/** Deletes evidence rows matching `filter` (on `ev` and its link `l`) and their observations. */
async function removeEvidence(
  trx: Trx,
  filter: RawBuilder<unknown>,
): Promise<{ link: string; src_key: string | null; dst_key: string | null }[]> {
  const removed = await sql<{ link: string; item: string; src_key: string | null; dst_key: string | null }>`
    with gone as (delete from evidence ev using links l where l.id = ev.link and ${filter} returning ev.link, ev.item, l.src_key, l.dst_key)
    select * from gone`.execute(trx);
  const vis = await itemVis(
    trx,
    removed.rows.map((r) => r.item),
  );
  const counts = new KeyCounts();
  for (const row of removed.rows) {
    const v = vis.get(row.item);
    if (!v) continue;
    for (const key of [row.src_key, row.dst_key])
      if (key) counts.add(key, { kind: v.kind, labels: v.labels, spam: v.spam }, -1);
  }
  await observe(trx, counts);
  return removed.rows;
}

/**
 * Removes evidence rows (and their observations); links of pipelines left with no evidence go
 * too (the owner's links stand on their own). Returns the keys touched, for pruning.
 */
export async function dropEvidence(
  trx: Trx,
  where: { item?: string; via?: string; pipeline?: string; basis?: 'observed' | 'inferred' },
): Promise<string[]> {
  const conditions = [
    ...(where.item !== undefined ? [sql`ev.item = ${where.item}`] : []),
    ...(where.via !== undefined ? [sql`ev.via = ${where.via}`] : []),
    // A pipeline's own links: its inferences, or (tier 0's rules) what it observed in the text.
    ...(where.pipeline !== undefined
      ? [sql`l.pipeline = ${where.pipeline} and l.basis = ${where.basis ?? 'inferred'}`]
      : []),
  ];
  const removed = await removeEvidence(trx, sql.join(conditions, sql` and `));
  if (removed.length === 0) return [];
  const linkIds = [...new Set(removed.map((r) => r.link))];
  const bare = (
    await sql<{ id: string; made_by: string; labels: string[]; src_key: string | null; dst_key: string | null }>`
      select id, made_by, labels, src_key, dst_key from links l where id = any(${linkIds}::text[]) and vis_kind is null
        and not exists (select 1 from evidence ev where ev.link = l.id)`.execute(trx)
  ).rows;
  // The owner's word stands without its evidence, scoped as if it never had any (as a replay
  // after the item's erasure builds it); anyone else's inference goes with its evidence.
  const counts = new KeyCounts();
  for (const link of bare.filter((l) => l.made_by === 'user')) {
    const vis = ownLinkVis(link.labels);
    await sql`update links set vis_kind = ${vis.kind} where id = ${link.id}`.execute(trx);
    for (const key of [link.src_key, link.dst_key]) if (key) counts.add(key, vis, 1);
  }
  await observe(trx, counts);
  const keys = await dropLinks(
    trx,
    bare.filter((l) => l.made_by !== 'user').map((l) => l.id),
  );
  // What is left of the structure's links starts at its earliest remaining evidence.
  await sql`
    update links l set valid_from = (select min(i.occurred_at) from evidence ev join items i on i.id = ev.item where ev.link = l.id)
    where l.id = any(${linkIds}::text[]) and l.made_by like 'ingest@%' and l.rel = 'works_at'`.execute(trx);
  return [
    ...new Set([...removed.flatMap((r) => [r.src_key, r.dst_key]), ...keys].filter((k): k is string => k !== null)),
  ];
}

/** Deletes links with their evidence and observations; returns the keys touched. */
export async function dropLinks(trx: Trx, ids: string[]): Promise<string[]> {
  if (ids.length === 0) return [];
  await removeEvidence(trx, sql`ev.link = any(${ids}::text[])`);
  const gone = await sql<{ src_key: string | null; dst_key: string | null; vis_kind: string | null; labels: string[] }>`
    delete from links where id = any(${ids}::text[]) returning src_key, dst_key, vis_kind, labels`.execute(trx);
  const counts = new KeyCounts();
  const keys: string[] = [];
  for (const row of gone.rows) {
    for (const key of [row.src_key, row.dst_key]) {
      if (!key) continue;
      keys.push(key);
      if (row.vis_kind) counts.add(key, { kind: row.vis_kind, labels: row.labels, spam: false }, -1);
    }
  }
  await observe(trx, counts);
  return [...new Set(keys)];
}

export interface CheckedEvidence {
  accepted: EvidenceRow[];
  refused: { evidence: string; item: string; reason: string }[];
}

/**
 * The honesty rule (seed §3.3): what supports an inference must be observed. An item counts
 * unless it is a note written by an agent or a pipeline; another link counts only when it is
 * observed or confirmed, and then it lends its own evidence items. The owner's own assertions
 * (`inference` false) may cite anything that exists: saying so is the confirmation.
 */
export async function checkEvidence(trx: Trx, evidence: EvidenceRef[], inference: boolean): Promise<CheckedEvidence> {
  const result: CheckedEvidence = { accepted: [], refused: [] };
  const items = await itemVis(
    trx,
    evidence.flatMap((e) => ('item' in e ? [e.item] : [])),
  );
  for (const entry of evidence) {
    if ('item' in entry) {
      const item = items.get(entry.item);
      if (!item)
        result.refused.push({ evidence: `item:${entry.item}`, item: entry.item, reason: 'the graph has no such item' });
      else if (inference && item.kind === 'note' && item.madeBy !== 'user') {
        result.refused.push({
          evidence: `item:${entry.item}`,
          item: entry.item,
          reason: `a note by ${item.madeBy} is itself an inference`,
        });
      } else result.accepted.push({ item: entry.item, part: entry.part ?? '', quote: entry.quote ?? null });
      continue;
    }
    const support = await sql<{ basis: string; status: string; confirmed: boolean }>`
      select l.basis, l.status, ${confirmedSql(sql.ref('l'))} as confirmed from links l where l.id = ${entry.link}`.execute(
      trx,
    );
    const row = support.rows[0];
    const refuse = (reason: string) => result.refused.push({ evidence: `link:${entry.link}`, item: '', reason });
    if (!row || row.status !== 'active') refuse('no such active link');
    else if (inference && row.basis !== 'observed' && !row.confirmed)
      refuse('an unconfirmed inference is not evidence');
    else {
      const rows =
        await sql<EvidenceRow>`select item, part, quote from evidence where link = ${entry.link} order by item, part`.execute(
          trx,
        );
      result.accepted.push(...rows.rows);
    }
  }
  return result;
}

type SqlRef = ReturnType<typeof sql.ref>;

/**
 * SQL: row `o` states the same claim as link `l` (same relation, same ends). Each end is an entity
 * or an item, never both, so plain equalities say it; spelt out as the four kinds of link, each
 * arm has an index that finds its few rows (a hub's thousands of links to items are never read).
 */
function sameClaim(o: SqlRef, l: SqlRef) {
  return sql`${o}.rel = ${l}.rel and (
    (${o}.src_entity = ${l}.src_entity and ${o}.dst_entity = ${l}.dst_entity)
    or (${o}.src_entity = ${l}.src_entity and ${o}.dst_item = ${l}.dst_item)
    or (${o}.src_item = ${l}.src_item and ${o}.dst_entity = ${l}.dst_entity)
    or (${o}.src_item = ${l}.src_item and ${o}.dst_item = ${l}.dst_item))`;
}

/**
 * SQL: the claim of link `l` is confirmed, by the owner's verdict or by an observed active link
 * stating the same.
 */
export function confirmedSql(l: SqlRef) {
  return sql<boolean>`(exists (select 1 from verdicts v where v.verdict = 'confirmed' and ${sameClaim(sql.ref('v'), l)})
    or exists (select 1 from links o where o.basis = 'observed' and o.status = 'active' and ${sameClaim(sql.ref('o'), l)}))`;
}

/** SQL: the owner rejected the claim of link `l`. */
export function rejectedSql(l: SqlRef) {
  return sql<boolean>`exists (select 1 from verdicts v where v.verdict = 'rejected' and ${sameClaim(sql.ref('v'), l)})`;
}

/** Records the owner's word on the claim a link states. */
export async function recordVerdict(
  trx: Trx,
  linkId: string,
  verdict: 'confirmed' | 'rejected',
  at: string,
): Promise<void> {
  const link = (
    await sql<{
      src_key: string | null;
      src_entity: number | null;
      src_item: string | null;
      rel: string;
      dst_key: string | null;
      dst_entity: number | null;
      dst_item: string | null;
    }>`
      select src_key, src_entity, src_item, rel, dst_key, dst_entity, dst_item from links where id = ${linkId}`.execute(
      trx,
    )
  ).rows[0];
  if (!link) return;
  const src: Ref = link.src_key ? parseRef(link.src_key) : { item: link.src_item! };
  const dst: Ref = link.dst_key ? parseRef(link.dst_key) : { item: link.dst_item! };
  const claim = `${refString(src)} ${link.rel} ${refString(dst)}`;
  await sql`
    insert into verdicts (claim, src_key, src_entity, src_item, rel, dst_key, dst_entity, dst_item, verdict, decided_at)
    values (${claim}, ${link.src_key}, ${link.src_entity}, ${link.src_item}, ${link.rel}, ${link.dst_key}, ${link.dst_entity}, ${link.dst_item}, ${verdict}, ${at})
    on conflict (claim) do update set verdict = excluded.verdict, decided_at = excluded.decided_at`.execute(trx);
}

/** One row per link id, evidence merged: the same claim twice in one event is one link. */
export function dedupe(links: LinkRow[]): LinkRow[] {
  const byId = new Map<string, LinkRow>();
  for (const link of links) {
    const seen = byId.get(link.id);
    if (seen)
      seen.evidence.push(
        ...link.evidence.filter((e) => !seen.evidence.some((s) => s.item === e.item && s.part === e.part)),
      );
    else byId.set(link.id, { ...link, evidence: [...link.evidence] });
  }
  return [...byId.values()];
}
