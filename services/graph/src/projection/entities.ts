import { sql, type Kysely, type RawBuilder, type Transaction } from 'kysely';
import type { Actor } from '@memex/contracts';
import { bulkLoading } from '@memex/runtime';
import { defaultName, foldText, hashId, kindOfKey } from '../domain/keys.js';
import type { GraphDatabase } from './schema.js';

export type Trx = Transaction<GraphDatabase>;

/** What a scope check needs of where something was seen (contracts' `Visibility`). */
export interface Vis {
  kind: string;
  labels: string[];
  spam: boolean;
}

/** Writing by the owner, an agent or a pipeline: `user`, `session:<id>`, `<pipeline>@<version>`. */
export function makerOf(actor: Actor): string {
  if (actor.kind === 'user') return 'user';
  if (actor.kind === 'session') return `session:${actor.id}`;
  if (actor.kind === 'pipeline') return actor.id;
  return `${actor.kind}:${actor.id}`;
}

/** Links and notes without evidence of their own are scoped like notes, by their labels. */
export function noteVis(labels: string[]): Vis {
  return { kind: 'note', labels: [...labels].sort(), spam: false };
}

/** The owner's links without evidence or labels: a kind no scope rule grants, so only the owner sees them. */
const OWNER_ONLY: Vis = { kind: 'owner_only', labels: [], spam: false };

/** How a caller's link without (or left without) evidence is scoped: by its labels, else the owner's alone. */
export function ownLinkVis(labels: string[]): Vis {
  return labels.length > 0 ? noteVis(labels) : OWNER_ONLY;
}

/** Each key's entity, creating a thing for keys not seen before (its id derives from the key). */
export async function ensureKeys(trx: Trx, keys: Iterable<string>): Promise<Map<string, number>> {
  const { ids, created } = await createKeys(trx, [...new Set(keys)].sort());
  await refreshEntities(trx, created, true);
  return ids;
}

/**
 * Each key's entity, creating things for keys not seen before in the order given (a hash
 * collision, rare at 52 bits, probes the next id: the order decides who probes, so a replay,
 * which sees the same order, probes alike). The new things are not refreshed yet.
 */
export async function createKeys(trx: Trx, keys: string[]): Promise<{ ids: Map<string, number>; created: number[] }> {
  const ids = new Map<string, number>();
  if (keys.length === 0) return { ids, created: [] };
  const known = await sql<{ key: string; entity: number }>`
    select key, entity from entity_keys where key = any(${keys}::text[])`.execute(trx);
  for (const row of known.rows) ids.set(row.key, Number(row.entity));
  const missing = keys.filter((key) => !ids.has(key));
  if (missing.length === 0) return { ids, created: [] };
  const taken = new Set(
    (
      await sql<{ id: number }>`select id from entities where id = any(${missing.map(hashId)}::bigint[])`.execute(trx)
    ).rows.map((r) => Number(r.id)),
  );
  const rows = missing.map((key) => {
    let id = hashId(key);
    while (taken.has(id)) id = (id + 1) % 2 ** 52;
    taken.add(id);
    ids.set(key, id);
    return { id, kind: kindOfKey(key), key, name: defaultName(key) };
  });
  await sql`
    with made as (
      insert into entities (id, kind, key, name)
      select r.id, r.kind, r.key, r.name from jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) as r(id bigint, kind text, key text, name text)
      returning id, key)
    insert into entity_keys (key, entity) select key, id from made`.execute(trx);
  return { ids, created: rows.map((r) => r.id) };
}

function visKey(key: string, vis: Vis): string {
  return JSON.stringify([key, vis.kind, vis.labels, vis.spam]);
}

/** Counts per (key, visibility class), summed before writing so one event is one statement per table. */
export class KeyCounts {
  private readonly rows = new Map<string, { key: string; vis: Vis; n: number }>();

  add(key: string, vis: Vis, n: number): void {
    const id = visKey(key, vis);
    const row = this.rows.get(id);
    if (row) row.n += n;
    else this.rows.set(id, { key, vis, n });
  }

  addAll(other: KeyCounts): void {
    for (const row of other.rows.values()) this.add(row.key, row.vis, row.n);
  }

  get size(): number {
    return this.rows.size;
  }

  /** In the order of their `visKey`s (the map's own keys: made once per row, not per comparison). */
  list(): { key: string; vis: Vis; n: number }[] {
    return [...this.rows]
      .filter(([, r]) => r.n !== 0)
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([, r]) => r);
  }

  keys(): string[] {
    return [...new Set([...this.rows.values()].map((r) => r.key))];
  }
}

/**
 * Applies observation deltas (key_scope) and keeps each thing's weight, the sum of its keys'
 * observations, in step.
 */
export async function observe(trx: Trx, counts: KeyCounts): Promise<void> {
  const rows = counts.list();
  if (rows.length === 0) return;
  await sql`
    insert into key_scope (key, kind, labels, spam, n)
    select r.key, r.kind, array(select jsonb_array_elements_text(r.labels)), r.spam, r.n
    from jsonb_to_recordset(${JSON.stringify(rows.map((r) => ({ key: r.key, kind: r.vis.kind, labels: r.vis.labels, spam: r.vis.spam, n: r.n })))}::jsonb)
      as r(key text, kind text, labels jsonb, spam boolean, n integer)
    on conflict (key, kind, labels, spam) do update set n = key_scope.n + excluded.n`.execute(trx);
  if (rows.some((r) => r.n < 0))
    await sql`delete from key_scope where key = any(${counts.keys()}::text[]) and n <= 0`.execute(trx);
  const perKey = new Map<string, number>();
  for (const row of rows) perKey.set(row.key, (perKey.get(row.key) ?? 0) + row.n);
  const keys = [...perKey.keys()];
  // The keys by `= any` of the array, whose length the planner sees: joined to a recordset it
  // guesses at 100 rows, it read the whole of entity_keys.
  const { rows: weighed } = await sql<{ id: number; retiered: boolean }>`
    update entities e set weight = e.weight + d.n
    from (select k.entity, sum(r.n)::int as n
          from unnest(${keys}::text[], ${[...perKey.values()]}::int[]) as r(key, n)
          join entity_keys k on k.key = r.key where k.key = any(${keys}::text[]) group by k.entity) d
    where e.id = d.entity
    returning e.id, ${tierSql(sql`e.weight`)} <> ${tierSql(sql`e.weight - d.n`)} as retiered`.execute(trx);
  // A rebuild's bulk load writes every prefix with its tier at its end (`finishBulkLoad`).
  if (await bulkLoading(trx)) return;
  // Most weights stay in their tier: only the prefixes of those that left it are rewritten.
  await retier(
    trx,
    weighed.filter((row) => row.retiered).map((row) => Number(row.id)),
  );
}

/**
 * Things' @-mention prefixes at most this long are stored; longer prefixes are looked up among the
 * terms, which few share. Every stored prefix is a row written when its thing is made and again
 * whenever its weight changes tier: at 8 characters a person had about 20 (name, surname,
 * address), and writing and re-tiering them was 95 s of Postgres' statement time in a
 * 50,000-message import; at 5, about 12.
 */
export const PREFIX_CHARS = 5;

/** Tiers below this are one weight each. */
export const EXACT_TIERS = 4;

/**
 * SQL: a thing's tier in @-mention order, from its weight: the weight itself below EXACT_TIERS,
 * then one tier per doubling. A thing changing tier rewrites all of its prefix rows (about 80,
 * each in two indexes), which was most of the graph projector's time in a large import while
 * the first sixteen weights were a tier each (a thing seen a hundred times changed tier 26
 * times; now 8). Within a tier of one weight the order is plain; above, a query sorts by the weight.
 */
export function tierSql(weight: RawBuilder<unknown>): RawBuilder<number> {
  const exact = sql.lit(EXACT_TIERS);
  return sql<number>`(case when ${weight} < ${exact} then greatest(${weight}, 0)
    else ${exact} + floor(ln(${weight} / ${exact}::numeric) / ln(2))::int end)::smallint`;
}

/**
 * Moves the prefix rows of these things to the tier of their weight now, found by their primary
 * key through `= any` of the ids, whose count the planner sees (joined to the weights a statement
 * returned, guessed at 100 things, it scanned every prefix row each batch: 0.1 s over the 860,000
 * of a 40,000-message import, growing with the archive).
 */
async function retier(trx: Trx, ids: number[]): Promise<void> {
  if (ids.length === 0) return;
  await sql`update mention_prefixes m set tier = ${tierSql(sql`e.weight`)}
    from entities e where m.entity = any(${ids}::bigint[]) and e.id = any(${ids}::bigint[]) and e.id = m.entity
      and m.tier <> ${tierSql(sql`e.weight`)}`.execute(trx);
}

/**
 * Writes the @-mention prefixes (1 to PREFIX_CHARS characters of each term, `exact` when a term
 * is the whole prefix) of every thing from its terms (a migration's backfill, the bench's load,
 * the end of a rebuild's bulk load through `finishBulkLoad`).
 */
export async function writePrefixes(db: Kysely<GraphDatabase>): Promise<void> {
  await sql`
    insert into mention_prefixes (prefix, exact, tier, entity)
    select left(t.term, n), bool_or(length(t.term) = n), ${tierSql(sql`e.weight`)}, t.entity
    from mention_terms t join entities e on e.id = t.entity
    cross join generate_series(1, least(length(t.term), ${PREFIX_CHARS})) n
    group by t.entity, left(t.term, n), e.weight
    -- In the primary key's order: rows appended to its index, not inserted all over it (half the time).
    order by t.entity, left(t.term, n)`.execute(db);
}

/**
 * The end of a rebuild's bulk load, which put the things' refreshes (`putOff`) and the prefixes
 * off: the refreshes, then every thing's prefixes from its terms, with the tier of its weight
 * then, as the live projection keeps them in step (a batch that fell back to events one by one
 * may have written some: they go first).
 */
export async function finishBulkLoad(db: Kysely<GraphDatabase>): Promise<void> {
  await db.transaction().execute(async (trx) => {
    // The load's schema has no statistics yet: planned without them, the refresh scanned the
    // tables for each thing (~20x slower on a 2,000-message import's 800 things).
    await sql`analyze entities, entity_keys, key_names, places, papers, mention_terms`.execute(trx);
    await refreshPutOff(trx);
    await sql`delete from mention_prefixes`.execute(trx);
    // Its primary key built over the rows at once, not kept up row by row (~a third of the time).
    await sql`alter table mention_prefixes drop constraint mention_prefixes_pkey`.execute(trx);
    await writePrefixes(trx);
    await sql`alter table mention_prefixes add primary key (entity, prefix)`.execute(trx);
  });
}

/** The prefixes `writePrefixes` makes of terms, each with whether a term is the whole prefix (in characters, as SQL's left()). */
function prefixesOf(terms: Iterable<string>): Map<string, boolean> {
  const prefixes = new Map<string, boolean>();
  for (const term of terms) {
    const chars = [...term];
    for (let n = 1; n <= Math.min(chars.length, PREFIX_CHARS); n++) {
      const prefix = chars.slice(0, n).join('');
      prefixes.set(prefix, prefixes.get(prefix) === true || chars.length === n);
    }
  }
  return prefixes;
}

/** Deletes a term or prefix table's rows of these (entity, term or prefix) pairs. */
async function deleteOfEntities(
  trx: Trx,
  table: 'mention_terms' | 'mention_prefixes',
  column: 'term' | 'prefix',
  rows: { entity: number; value: string }[],
): Promise<void> {
  if (rows.length === 0) return;
  await sql`
    delete from ${sql.table(table)} t using jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) as r(entity bigint, value text)
    where t.entity = r.entity and ${sql.ref(`t.${column}`)} = r.value`.execute(trx);
}

/**
 * Moves things' @-mention terms and prefixes from those stored to their new ones, writing only
 * the difference (a new alias adds a few rows; rewriting all of a busy thing's costs a batch).
 */
async function rewriteTerms(
  trx: Trx,
  things: { id: number; stored: string[]; terms: string[] }[],
  write: { prefixes: boolean },
): Promise<void> {
  const termsGone: { entity: number; value: string }[] = [];
  const termsAdded: { entity: number; term: string }[] = [];
  const prefixesGone: { entity: number; value: string }[] = [];
  const prefixesSet: { entity: number; prefix: string; exact: boolean }[] = [];
  for (const { id: entity, stored, terms } of things) {
    const before = new Set(stored);
    const after = new Set(terms);
    for (const term of before) if (!after.has(term)) termsGone.push({ entity, value: term });
    for (const term of after) if (!before.has(term)) termsAdded.push({ entity, term });
    if (!write.prefixes) continue;
    const old = prefixesOf(before);
    const now = prefixesOf(after);
    for (const prefix of old.keys()) if (!now.has(prefix)) prefixesGone.push({ entity, value: prefix });
    for (const [prefix, exact] of now) if (old.get(prefix) !== exact) prefixesSet.push({ entity, prefix, exact });
  }
  await deleteOfEntities(trx, 'mention_terms', 'term', termsGone);
  if (termsAdded.length > 0) {
    await sql`
      insert into mention_terms (term, entity)
      select r.term, r.entity from jsonb_to_recordset(${JSON.stringify(termsAdded)}::jsonb) as r(entity bigint, term text)`.execute(
      trx,
    );
  }
  // A rebuild's bulk load writes every prefix at its end (`finishBulkLoad`).
  if (!write.prefixes) return;
  await deleteOfEntities(trx, 'mention_prefixes', 'prefix', prefixesGone);
  if (prefixesSet.length > 0) {
    await sql`
      insert into mention_prefixes (prefix, exact, tier, entity)
      select r.prefix, r.exact, ${tierSql(sql`e.weight`)}, r.entity
      from jsonb_to_recordset(${JSON.stringify(prefixesSet)}::jsonb) as r(entity bigint, prefix text, exact boolean)
        join entities e on e.id = r.entity
      on conflict (entity, prefix) do update set exact = excluded.exact`.execute(trx);
  }
}

/** Adds (or with negative counts, removes) names seen for keys, then refreshes their things. */
export async function nameKeys(trx: Trx, counts: KeyCounts): Promise<void> {
  const keys = await countNames(trx, counts);
  await refreshEntities(trx, await entitiesOfKeys(trx, keys));
}

/** `nameKeys` without the refresh (for a caller that refreshes once for many); answers the keys named. */
export async function countNames(trx: Trx, counts: KeyCounts): Promise<string[]> {
  const rows = counts.list();
  if (rows.length === 0) return [];
  await sql`
    insert into key_names (key, name, kind, labels, spam, n)
    select r.key, r.name, r.kind, array(select jsonb_array_elements_text(r.labels)), r.spam, r.n
    from jsonb_to_recordset(${JSON.stringify(
      rows.map((r) => {
        const [key, name] = JSON.parse(r.key) as [string, string];
        return { key, name, kind: r.vis.kind, labels: r.vis.labels, spam: r.vis.spam, n: r.n };
      }),
    )}::jsonb) as r(key text, name text, kind text, labels jsonb, spam boolean, n integer)
    on conflict (key, name, kind, labels, spam) do update set n = key_names.n + excluded.n`.execute(trx);
  const keys = [...new Set(rows.map((r) => (JSON.parse(r.key) as [string])[0]))];
  if (rows.some((r) => r.n < 0))
    await sql`delete from key_names where key = any(${keys}::text[]) and n <= 0`.execute(trx);
  return keys;
}

/** `KeyCounts` keyed by key and name together, for `nameKeys`. */
export function nameKey(key: string, name: string): string {
  return JSON.stringify([key, name]);
}

export async function entitiesOfKeys(trx: Trx, keys: string[]): Promise<number[]> {
  if (keys.length === 0) return [];
  const rows = await sql<{
    entity: number;
  }>`select distinct entity from entity_keys where key = any(${keys}::text[])`.execute(trx);
  return rows.rows.map((r) => Number(r.entity));
}

interface EntityState {
  id: number;
  kind: string;
  key: string;
  name: string;
  aliases: string[];
  attrs: Record<string, unknown>;
  keys: string[] | null;
  names: { name: string; n: number }[] | null;
  /** What the media pipeline said of the place keys it owns (`places`), by key. */
  places: PlaceAttrs[] | null;
  /** What tier 0 read of the paper (`papers`), one per copy read. */
  papers: Record<string, unknown>[] | null;
  /** Its @-mention terms as stored. */
  terms: string[] | null;
}

/** A GeoNames place's attrs: ISO country code, admin1 code, its centre. */
export interface PlaceAttrs {
  geonames_id: number;
  country: string;
  admin1: string;
  latitude: number;
  longitude: number;
}

/**
 * The things a rebuild's bulk load has yet to refresh (`refreshEntities`), and those of them whose
 * terms are to be rebuilt whatever they show. What a thing shows follows from the keys it owns and
 * what was seen of them, and nothing a projection applies reads it but the refresh itself, so a
 * bulk load refreshes each thing once: before its keys change (`pointKeysAt`, `prune`: a thing
 * merged away keeps what it showed then) and at the load's end (`refreshPutOff`), not in every
 * batch that names it. Held here because a load's batches are transactions of their own; one
 * rebuild runs at a time, and a thing refreshed once more than needed is unchanged by it.
 */
const putOff = { ids: new Set<number>(), forced: new Set<number>() };

/**
 * Recomputes what a thing shows from the keys it owns: its name (the name seen most often),
 * aliases (the other names), attrs and @-mention terms. Things merged away own no keys and keep
 * what they had, so a split finds them as they were. In a rebuild's bulk load, put off (`putOff`).
 *
 * `force`: rebuild the terms even when name, aliases and attrs stand (new things, things split
 * back out) — of all `ids`, or of those in the set.
 */
export async function refreshEntities(
  trx: Trx,
  ids: number[],
  force: boolean | ReadonlySet<number> = false,
): Promise<void> {
  if (ids.length === 0) return;
  if (!(await bulkLoading(trx))) return refreshNow(trx, ids, force, { prefixes: true });
  for (const id of ids) {
    putOff.ids.add(id);
    if (force === true || (force !== false && force.has(id))) putOff.forced.add(id);
  }
}

/**
 * The refreshes a bulk load put off, done now (before keys move, and at the load's end). Prefix
 * rows are not written: the load's end writes them all (`finishBulkLoad`).
 */
async function refreshPutOff(trx: Trx): Promise<void> {
  if (putOff.ids.size === 0) return;
  const ids = [...putOff.ids];
  const forced = new Set(putOff.forced);
  putOff.ids.clear();
  putOff.forced.clear();
  await refreshNow(trx, ids, forced, { prefixes: false });
}

/** In a bulk load, the refreshes put off, before keys move to another thing or go. */
async function refreshBeforeKeysMove(trx: Trx): Promise<void> {
  // A live projector's transaction (beside a rebuild) leaves the rebuild's things alone.
  if (putOff.ids.size > 0 && (await bulkLoading(trx))) await refreshPutOff(trx);
}

async function refreshNow(
  trx: Trx,
  ids: number[],
  force: boolean | ReadonlySet<number>,
  write: { prefixes: boolean },
): Promise<void> {
  const states = await sql<EntityState>`
    select e.id, e.kind, e.key, e.name, e.aliases, e.attrs,
      (select array_agg(k.key order by k.key) from entity_keys k where k.entity = e.id) as keys,
      (select jsonb_agg(jsonb_build_object('name', x.name, 'n', x.n) order by x.n desc, x.name)
         from (select kn.name, sum(kn.n)::int as n from key_names kn join entity_keys k on k.key = kn.key
               where k.entity = e.id group by kn.name) x) as names,
      (select jsonb_agg(to_jsonb(p) - 'key' order by p.key) from places p join entity_keys k on k.key = p.key
         where k.entity = e.id) as places,
      (select jsonb_agg(jsonb_build_object('year', pp.year, 'venue', pp.venue, 'doi', pp.doi, 'arxiv', pp.arxiv) order by pp.item)
         from papers pp join entity_keys k on k.key = pp.key where k.entity = e.id) as papers,
      (select array_agg(t.term) from mention_terms t where t.entity = e.id) as terms
    from entities e where e.id = any(${[...new Set(ids)]}::bigint[])`.execute(trx);
  // Things without keys (merged away) lose their terms; the others get new ones if they changed.
  const emptied: number[] = [];
  const changed: { id: number; name: string; aliases: string[]; attrs: Record<string, unknown> }[] = [];
  const retermed: { id: number; stored: string[]; terms: string[] }[] = [];
  for (const state of states.rows) {
    const id = Number(state.id);
    if (!state.keys) {
      emptied.push(id);
      continue;
    }
    const names = (state.names ?? []).map((n) => n.name);
    const name = names[0] ?? defaultName(state.key);
    const aliases = names.slice(1);
    const attrs = attrsOf(state.kind, state.keys, state.places ?? [], state.papers ?? []);
    const unchanged =
      name === state.name &&
      JSON.stringify(aliases) === JSON.stringify(state.aliases) &&
      JSON.stringify(attrs) === JSON.stringify(state.attrs);
    // Terms follow from name, aliases and keys: when those stand, the terms do too.
    if (unchanged && !(force === true || (force !== false && force.has(id)))) continue;
    if (!unchanged) changed.push({ id, name, aliases, attrs });
    // Aliases often only change order (as their counts do): the same terms are not written again.
    const terms = mentionTerms([name, ...aliases], state.keys);
    const stored = new Set(state.terms ?? []);
    if (terms.length !== stored.size || terms.some((term) => !stored.has(term)))
      retermed.push({ id, stored: state.terms ?? [], terms });
  }
  if (changed.length > 0) {
    await sql`
      update entities e set name = r.name, aliases = array(select jsonb_array_elements_text(r.aliases)), attrs = r.attrs
      from jsonb_to_recordset(${JSON.stringify(changed)}::jsonb) as r(id bigint, name text, aliases jsonb, attrs jsonb)
      where e.id = r.id`.execute(trx);
  }
  if (emptied.length > 0) {
    await sql`delete from mention_terms where entity = any(${emptied}::bigint[])`.execute(trx);
    await sql`delete from mention_prefixes where entity = any(${emptied}::bigint[])`.execute(trx);
  }
  await rewriteTerms(trx, retermed, write);
}

/** Keys sorted, so attrs are the same whatever order the keys arrived in. */
function attrsOf(
  kind: string,
  keys: string[],
  places: PlaceAttrs[],
  papers: Record<string, unknown>[],
): Record<string, unknown> {
  const values = (prefix: string) => keys.filter((k) => k.startsWith(prefix)).map((k) => k.slice(prefix.length));
  if (kind === 'person') return { addresses: values('person:') };
  if (kind === 'org') return { domains: values('org:') };
  // A place merged with others shows the first GeoNames place's (in key order).
  if (kind === 'place' && places[0]) return { ...places[0] };
  // A paper read from several copies shows the first copy's year, venue and identifiers.
  if (kind === 'paper' && papers[0]) return Object.fromEntries(Object.entries(papers[0]).filter(([, v]) => v !== null));
  return {};
}

/**
 * What @-mentions match by prefix: each name and alias from each word on ("ann lee", "lee"),
 * and each key's value (address, its local part, domain, slug).
 */
export function mentionTerms(names: string[], keys: string[]): string[] {
  const terms = new Set<string>();
  const add = (text: string) => {
    const folded = foldText(text).slice(0, 200);
    if (!folded) return;
    const words = folded.split(/[\s,;()"'-]+/).filter(Boolean);
    terms.add(folded);
    for (let i = 1; i < words.length; i++) terms.add(words.slice(i).join(' '));
  };
  names.forEach(add);
  for (const key of keys) {
    const value = key.slice(key.indexOf(':') + 1);
    terms.add(foldText(value).slice(0, 200));
    if (value.includes('@')) terms.add(foldText(value.slice(0, value.indexOf('@'))));
  }
  terms.delete('');
  return [...terms].sort();
}

/** Every column that follows a key to its thing, pointed at `entity` for these keys. */
export async function pointKeysAt(trx: Trx, keys: string[], entity: number): Promise<void> {
  if (keys.length === 0) return;
  await refreshBeforeKeysMove(trx);
  await sql`update entity_keys set entity = ${entity} where key = any(${keys}::text[])`.execute(trx);
  await sql`update links set src_entity = ${entity} where src_key = any(${keys}::text[])`.execute(trx);
  await sql`update links set dst_entity = ${entity} where dst_key = any(${keys}::text[])`.execute(trx);
  await sql`update verdicts set src_entity = ${entity} where src_key = any(${keys}::text[])`.execute(trx);
  await sql`update verdicts set dst_entity = ${entity} where dst_key = any(${keys}::text[])`.execute(trx);
  await sql`update trail_steps set target_entity = ${entity} where target_key = any(${keys}::text[])`.execute(trx);
}

async function recomputeWeights(trx: Trx, ids: number[]): Promise<void> {
  await sql`
    update entities e set weight = coalesce((select sum(s.n)::int from key_scope s join entity_keys k on k.key = s.key where k.entity = e.id), 0)
    where e.id = any(${ids}::bigint[])`.execute(trx);
  if (!(await bulkLoading(trx))) await retier(trx, ids);
}

/** The thing a key belongs to now (keys always point at a thing that was not merged away). */
export async function entityOfKey(trx: Trx, key: string): Promise<number | null> {
  const row = await sql<{ entity: number }>`select entity from entity_keys where key = ${key}`.execute(trx);
  return row.rows[0] ? Number(row.rows[0].entity) : null;
}

export async function merge(trx: Trx, mergeId: string, fromKey: string, intoKey: string, at: string): Promise<void> {
  const from = await entityOfKey(trx, fromKey);
  const into = await entityOfKey(trx, intoKey);
  if (from === null || into === null || from === into) return;
  const keys = (
    await sql<{ key: string }>`select key from entity_keys where entity = ${from} order by key`.execute(trx)
  ).rows.map((r) => r.key);
  await pointKeysAt(trx, keys, into);
  await sql`update entities set merged_into = ${into} where id = ${from}`.execute(trx);
  await recomputeWeights(trx, [from, into]);
  await refreshEntities(trx, [from, into]);
  await sql`insert into merges (merge_id, from_entity, into_entity, keys, at) values (${mergeId}, ${from}, ${into}, ${keys}::text[], ${at})`.execute(
    trx,
  );
}

/** Undoes a merge: the keys it moved (those still with the thing it went into) go back. */
export async function split(trx: Trx, mergeId: string): Promise<void> {
  const row = (
    await sql<{ from_entity: number; into_entity: number; keys: string[] }>`
      select from_entity, into_entity, keys from merges where merge_id = ${mergeId}`.execute(trx)
  ).rows[0];
  if (!row) return;
  const from = Number(row.from_entity);
  const holder = await canonical(trx, Number(row.into_entity));
  const moved = (
    await sql<{
      key: string;
    }>`select key from entity_keys where key = any(${row.keys}::text[]) and entity = ${holder} order by key`.execute(
      trx,
    )
  ).rows.map((r) => r.key);
  await pointKeysAt(trx, moved, from);
  await sql`update entities set merged_into = null where id = ${from}`.execute(trx);
  await recomputeWeights(trx, [from, holder]);
  await refreshEntities(trx, [from, holder], true);
  await sql`delete from merges where merge_id = ${mergeId}`.execute(trx);
}

async function canonical(trx: Trx, id: number): Promise<number> {
  const row = await sql<{ id: number }>`
    with recursive chain(id, merged_into, depth) as (
      select id, merged_into, 0 from entities where id = ${id}
      union all select e.id, e.merged_into, c.depth + 1 from entities e join chain c on e.id = c.merged_into where c.depth < 100)
    select id from chain where merged_into is null limit 1`.execute(trx);
  return row.rows[0] ? Number(row.rows[0].id) : id;
}

/**
 * Forgets keys nothing rests on any more (no observation, link or trail step), and things left
 * without keys with whatever was merged into them: a person known only from a deleted message
 * is gone, as a replay without that message would have it.
 */
export async function prune(trx: Trx, keys: string[]): Promise<void> {
  if (keys.length === 0) return;
  const dead = (
    await sql<{ key: string; entity: number }>`
      select k.key, k.entity from entity_keys k where k.key = any(${keys}::text[])
        and not exists (select 1 from key_scope s where s.key = k.key)
        and not exists (select 1 from links l where l.src_key = k.key)
        and not exists (select 1 from links l where l.dst_key = k.key)
        and not exists (select 1 from trail_steps t where t.target_key = k.key)`.execute(trx)
  ).rows;
  if (dead.length === 0) return;
  await refreshBeforeKeysMove(trx);
  const deadKeys = dead.map((r) => r.key);
  await sql`delete from entity_keys where key = any(${deadKeys}::text[])`.execute(trx);
  await sql`delete from key_names where key = any(${deadKeys}::text[])`.execute(trx);
  await sql`delete from places where key = any(${deadKeys}::text[])`.execute(trx);
  // The owner's rejection outlives the thing: a re-run of the model that says it again stays
  // rejected (seed §3.3). It goes with the item it is about (forgetItem).
  await sql`delete from verdicts where (src_key = any(${deadKeys}::text[]) or dst_key = any(${deadKeys}::text[]))
    and verdict = 'confirmed'`.execute(trx);
  const touched = [...new Set(dead.map((r) => Number(r.entity)))];
  const empty = (
    await sql<{ id: number }>`
      select id from entities e where id = any(${touched}::bigint[]) and not exists (select 1 from entity_keys k where k.entity = e.id)`.execute(
      trx,
    )
  ).rows.map((r) => Number(r.id));
  if (empty.length > 0) {
    const gone = (
      await sql<{ id: number }>`
        with recursive sub(id) as (select unnest(${empty}::bigint[]) union select e.id from entities e join sub on e.merged_into = sub.id)
        select id from sub`.execute(trx)
    ).rows.map((r) => Number(r.id));
    await sql`delete from mention_terms where entity = any(${gone}::bigint[])`.execute(trx);
    await sql`delete from mention_prefixes where entity = any(${gone}::bigint[])`.execute(trx);
    await sql`delete from merges where from_entity = any(${gone}::bigint[]) or into_entity = any(${gone}::bigint[])`.execute(
      trx,
    );
    await sql`delete from entities where id = any(${gone}::bigint[])`.execute(trx);
  }
  await refreshEntities(
    trx,
    touched.filter((id) => !empty.includes(id)),
  );
}
