import { sql } from 'kysely';
import type { EventOf, PaperExtracted, PaperHeader, PaperReference } from '@memex/contracts';
import { linkId, pipelineOf, refString, slugify, type Ref } from '../domain/keys.js';
import type { Participant } from '../domain/mail.js';
import { KeyCounts, nameKey, nameKeys, prune, type Trx, type Vis } from './entities.js';
import { dropEvidence, dropLinks, writeLinks, type LinkRow } from './links.js';
import type { StoredItem } from './signatures.js';

/** How alike two normalized titles must be (pg_trgm similarity) to be one paper, within a year of each other. */
export const TITLE_MATCH = 0.6;

/** What a `cites` link rests on: how its target was found. */
const CONFIDENCE = { arxiv: 1, doi: 1, title: 0.8, stub: 0.9 } as const;

/**
 * Tier 0's reading of a paper (`paper.extracted`): the paper is a `paper:` thing (keyed by its
 * arXiv id, else its DOI, else its item) named by its title, its item a `copy_of` it, its authors
 * people who `authored` it, and each reference a `cites` link to the paper it names, with the
 * reference's text and page as evidence. A reference is resolved to a paper the graph has read by
 * arXiv id, DOI, or a title alike within a year; else it is a stub paper thing named by its title
 * (keyed by its arXiv id, DOI, or year and title), which a paper read later takes over. What the
 * same rules said of the item before is replaced.
 */
export async function applyPaper(
  trx: Trx,
  event: EventOf<typeof PaperExtracted>,
  item: StoredItem | undefined,
): Promise<void> {
  if (!item) return;
  const { item_id: itemId, made_by: madeBy, paper, references } = event.data;
  const vis: Vis = { kind: item.kind, labels: item.labels, spam: item.spam };
  const touched = await dropEvidence(trx, { via: itemId, pipeline: pipelineOf(madeBy), basis: 'observed' });
  await sql`delete from papers where item = ${itemId}`.execute(trx);
  const names = new KeyCounts();
  const kept = (item.participants ?? []).filter((p) => {
    if (p.rel !== 'paper') return true;
    names.add(nameKey(p.key!, p.name), vis, -1);
    return false;
  });
  const given: Participant[] = [];
  const name = (key: string, text: string) => {
    names.add(nameKey(key, text), vis, 1);
    given.push({ rel: 'paper', address: '', name: text, key });
  };
  if (paper) {
    // Titles are matched with pg_trgm's `%` (its index) at this threshold, in this transaction only.
    await sql`select set_config('pg_trgm.similarity_threshold', ${String(TITLE_MATCH)}, true)`.execute(trx);
    const self = paperKey(paper, itemId);
    const at = item.occurred_at?.toISOString() ?? null;
    const link = (src: Ref, rel: string, dst: Ref, part: string, quote: string, confidence = 1): LinkRow => ({
      id: linkId(refString(src), rel, refString(dst), madeBy),
      src,
      rel,
      dst,
      validFrom: at,
      validTo: null,
      confidence,
      basis: 'observed',
      madeBy,
      vis: null,
      evidence: [{ item: itemId, part, quote }],
      via: itemId,
    });
    const paperRef = { key: self, kind: 'paper' };
    await sql`
      insert into papers (item, key, title, norm_title, year, doi, arxiv, venue)
      values (${itemId}, ${self}, ${paper.title}, ${normalizeTitle(paper.title)}, ${paper.year}, ${paper.doi}, ${paper.arxiv}, ${paper.venue})`.execute(
      trx,
    );
    touched.push(...(await adoptStubs(trx, self, paper)));
    const links: LinkRow[] = [link({ item: itemId }, 'copy_of', paperRef, 'page:1', paper.title)];
    name(self, paper.title);
    for (const author of paper.authors) {
      const person = { key: `person:${slugify(author)}`, kind: 'person' };
      links.push(link(person, 'authored', paperRef, 'page:1', author));
      name(person.key, author);
    }
    const targets = await resolveAll(trx, references);
    const stubs: Array<{ key: string; norm_title: string; year: number | null }> = [];
    references.forEach((reference, i) => {
      const target = targets[i];
      if (!target || target.key === self) return;
      const part = `${reference.page ? `page:${reference.page};` : ''}chars:${reference.start}-${reference.end}`;
      links.push(
        link(paperRef, 'cites', { key: target.key, kind: 'paper' }, part, reference.text, CONFIDENCE[target.how]),
      );
      if (target.how === 'stub' && reference.title) {
        name(target.key, reference.title);
        stubs.push({ key: target.key, norm_title: normalizeTitle(reference.title), year: reference.year });
      }
    });
    if (stubs.length > 0)
      await sql`
        insert into paper_stubs (key, norm_title, year)
        select r.key, r.norm_title, r.year from jsonb_to_recordset(${JSON.stringify(stubs)}::jsonb) as r(key text, norm_title text, year integer)
        on conflict (key) do nothing`.execute(trx);
    await writeLinks(trx, links);
  }
  await nameKeys(trx, names);
  await sql`update items set participants = ${JSON.stringify([...kept, ...given])}::jsonb where id = ${itemId}`.execute(
    trx,
  );
  await prune(trx, [...new Set(touched)].sort());
}

/** A read paper's key: its arXiv id, else its DOI, else its item. */
function paperKey(paper: PaperHeader, itemId: string): string {
  return paper.arxiv ? `paper:arxiv:${paper.arxiv}` : paper.doi ? `paper:doi:${paper.doi}` : `paper:item:${itemId}`;
}

/** A stub's key when no read paper matches: the reference's arXiv id, DOI, or year and title. */
function stubKey(reference: PaperReference): string | undefined {
  if (reference.arxiv) return `paper:arxiv:${reference.arxiv}`;
  if (reference.doi) return `paper:doi:${reference.doi}`;
  if (!reference.title) return undefined;
  return `paper:ref:${reference.year ?? 'undated'}:${slugify(reference.title).slice(0, 120)}`;
}

/** Lowercase letters and digits, accents dropped, single spaces: how titles are compared. */
export function normalizeTitle(title: string): string {
  return slugify(title).replace(/-/g, ' ');
}

type Target = { key: string; how: 'arxiv' | 'doi' | 'title' | 'stub' };

/** Each reference's target, in two queries for the lot: by identifier, then by title for the rest. */
async function resolveAll(trx: Trx, references: PaperReference[]): Promise<Array<Target | undefined>> {
  const arxivs = references.flatMap((r) => (r.arxiv ? [r.arxiv] : []));
  const dois = references.flatMap((r) => (r.doi ? [r.doi] : []));
  const byArxiv = new Map<string, string>();
  const byDoi = new Map<string, string>();
  if (arxivs.length + dois.length > 0) {
    const rows = await sql<{ key: string; arxiv: string | null; doi: string | null }>`
      select key, arxiv, doi from papers where arxiv = any(${arxivs}::text[]) or doi = any(${dois}::text[])
      order by item`.execute(trx);
    for (const row of rows.rows) {
      if (row.arxiv && !byArxiv.has(row.arxiv)) byArxiv.set(row.arxiv, row.key);
      if (row.doi && !byDoi.has(row.doi)) byDoi.set(row.doi, row.key);
    }
  }
  const targets: Array<Target | undefined> = references.map((r) => {
    const arxiv = r.arxiv ? byArxiv.get(r.arxiv) : undefined;
    if (arxiv) return { key: arxiv, how: 'arxiv' };
    const doi = r.doi ? byDoi.get(r.doi) : undefined;
    return doi ? { key: doi, how: 'doi' } : undefined;
  });
  const byTitle = references
    .map((r, i) => ({ i, title: r.title ? normalizeTitle(r.title) : '', year: r.year }))
    .filter(({ i, title }) => !targets[i] && title !== '');
  if (byTitle.length > 0) {
    const rows = await sql<{ i: number; key: string }>`
      select t.i, p.key
      from jsonb_to_recordset(${JSON.stringify(byTitle)}::jsonb) as t(i integer, title text, year integer)
      cross join lateral (
        select key from papers
        where norm_title % t.title and (year is null or t.year is null or abs(year - t.year) <= 1)
        order by similarity(norm_title, t.title) desc, item limit 1) p`.execute(trx);
    for (const row of rows.rows) targets[row.i] = { key: row.key, how: 'title' };
  }
  return references.map((r, i) => {
    if (targets[i]) return targets[i];
    const stub = stubKey(r);
    return stub ? { key: stub, how: 'stub' } : undefined;
  });
}

/**
 * A paper read now takes over the stubs references made for it before: those keyed by its other
 * identifier, and those whose title is alike within a year. Their `cites` links are written
 * again to the paper (same evidence) and the stubs' links dropped. Answers the keys touched.
 */
async function adoptStubs(trx: Trx, self: string, paper: PaperHeader): Promise<string[]> {
  const norm = normalizeTitle(paper.title);
  const ids = [paper.arxiv && `paper:arxiv:${paper.arxiv}`, paper.doi && `paper:doi:${paper.doi}`].filter(
    (k): k is string => !!k && k !== self,
  );
  const stubs = (
    await sql<{ key: string }>`
      select key from entity_keys where key = any(${ids}::text[])
      union
      select s.key from paper_stubs s join entity_keys k on k.key = s.key
      where s.norm_title % ${norm}
        and (${paper.year}::int is null or s.year is null or abs(s.year - ${paper.year}::int) <= 1)`.execute(trx)
  ).rows
    .map((r) => r.key)
    .filter((key) => key !== self)
    .sort();
  if (stubs.length === 0) return [];
  const cited = (
    await sql<{
      id: string;
      src_key: string;
      made_by: string;
      confidence: number;
      valid_from: Date | null;
      item: string;
      part: string;
      quote: string | null;
      via: string;
    }>`
      select l.id, l.src_key, l.made_by, l.confidence, l.valid_from, ev.item, ev.part, ev.quote, ev.via
      from links l join evidence ev on ev.link = l.id
      where l.dst_key = any(${stubs}::text[]) and l.rel = 'cites' and l.src_key is not null
      order by l.id, ev.item, ev.part`.execute(trx)
  ).rows;
  const moved: LinkRow[] = cited
    .filter((row) => row.src_key !== self)
    .map((row) => ({
      id: linkId(row.src_key, 'cites', self, row.made_by),
      src: { key: row.src_key, kind: 'paper' },
      rel: 'cites',
      dst: { key: self, kind: 'paper' },
      validFrom: row.valid_from?.toISOString() ?? null,
      validTo: null,
      confidence: row.confidence,
      basis: 'observed',
      madeBy: row.made_by,
      vis: null,
      evidence: [{ item: row.item, part: row.part, quote: row.quote }],
      via: row.via,
    }));
  const touched = await dropLinks(trx, [...new Set(cited.map((row) => row.id))]);
  await writeLinks(trx, moved);
  return [...touched, ...stubs];
}
