import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { sql, type Kysely, type RawBuilder } from 'kysely';
import {
  meaningText,
  MemexError,
  ModelsList,
  parseQuery,
  Search,
  Similar,
  type ParamsOf,
  type ResultOf,
  type Scope,
  type SearchHit,
  type SearchMode,
} from '@memex/contracts';
import { createDatabase, visibleTo } from '@memex/db';
import { defaultProvider, GLOVE_SIF_SPACE, isZeroVector } from '@memex/embeddings';
import type { MemexConfig } from '@memex/config';
import { CONFIG, DATABASE, RpcMethod, type CallContext } from '@memex/runtime';
import type { SearchDatabase } from '../schema.js';
import { freshTables, vectorLiteral, vectorTables, type SpaceRow } from '../projection/vectors.js';
import { fieldMatches, TEXT_CONFIG } from '../domain/text.js';
import { QueryEmbedder } from './embedder.js';
import { allOf, filterConditions } from './filters.js';
import { keywordQuery, type KeywordQuery } from './keyword.js';
import { nearestRows, type Arm } from './nearest.js';

/** Candidates each signal contributes before fusion (more when a page reaches deeper). */
const CANDIDATES = 100;
/** Passages the vector index returns per candidate item sought (an item has several passages). */
const PASSAGES_PER_CANDIDATE = 3;
/** The deepest page: `offset` stops at 900, so no signal ranks more than 1,000 candidates. */
const PAGED_AT_MOST = 900;
/**
 * Matching passages ranked at most, per query: a word found in a fifth of everything would
 * otherwise rank tens of thousands of passages. Past this many, the first found are ranked (and
 * the total is a lower bound). Finding and ranking them is most of a common word's query time.
 */
const RANKED_AT_MOST = 1000;
/**
 * The memory a keyword query may take (`work_mem`), past which its bitmap of matching passages
 * holds pages rather than passages (lossy). GIN answers a word with a bitmap of every passage
 * holding it, built whole before the first is read, and only the first `RANKED_AT_MOST` are read:
 * for a word in a seventh of 10^6 passages, 138,000 entries built to read 1,000. A lossy bitmap
 * costs a fraction of that to build, and reading its first pages (each passage on them checked
 * again) finds the same passages in the same order. Below some 8,000 pages of matches (32,000
 * passages) the bitmap stays exact: a smaller archive sees no change. Measured at 10^6 passages
 * (the search bench's corpus, server-side, five rounds in turn, the same rows returned): one
 * common word p50/p95 31.1/51.2 ms at the server's 16 MB, 19.2/28.4 at 512 kB (with `m` holding
 * ranks, not tsvectors: see keywordCandidates), 20.9/31.0 at 1 MB; two or three words, whose
 * bitmap is their intersection, 10.7/15.2 and 10.3/14.7.
 */
const KEYWORD_WORK_MEM = '512kB';
/** Reciprocal rank fusion's constant (Cormack et al.): damps the weight of the very top ranks. */
const RRF_K = 60;
/**
 * Meaning hits less similar than this share of the best hit's similarity (or not similar at all)
 * are not hits: without a floor, a query that matches nothing still returns the nearest,
 * unrelated, items. On the judged set every relevant item in a query's first ten is within 49%
 * of its best (so 0.4 loses none); 0.6 lost a tenth of meaning recall.
 */
const MEANING_FLOOR = 0.4;
/**
 * Settings of search's connections: no parallel workers. A query is short and bounded (ranked
 * passages at most, nearest vectors limited), and a Gather's workers take milliseconds to start
 * and the cores a hybrid query's other statements (its meaning shards) run on: at 10^6 passages on
 * two cores, keyword p95 45.0–47.7 ms with them, 39.7–42.4 without; hybrid 60.0–63.4, 57.5–58.2.
 */
export const SEARCH_DATABASE_SETTINGS = { max_parallel_workers_per_gather: '0' };
/** Hits per kind in `groups`. */
const PER_GROUP = 5;
const HEADLINE =
  'StartSel=**, StopSel=**, MaxWords=35, MinWords=15, ShortWord=3, MaxFragments=2, FragmentDelimiter=" … "';

/** One item found by one signal: its rank order, score, and the passage that scored. */
interface Candidate {
  id: string;
  kind: string;
  ordinal: number | null;
  score: number;
}

/** A signal's best candidates, how many items it found in all, and whether a limit cut that count. */
interface Found {
  hits: Candidate[];
  total: number;
  exact: boolean;
}

const NOTHING: Found = { hits: [], total: 0, exact: true };

type Field = 'title' | 'text' | 'people';

interface Fused {
  id: string;
  kind: string;
  score: number;
  ordinal: number | null;
  why: SearchHit['why'];
}

const scopeOf = (scope: Scope, alias: string) =>
  visibleTo(scope, { kind: `${alias}.kind`, labels: `${alias}.labels`, spam: `${alias}.spam` });

/**
 * `memex.search`, `memex.similar` and `memex.models.list` over the search read model. The
 * caller's scope is a condition of every statement that reads items or passages, so what a
 * scope hides is never ranked, counted, grouped or quoted.
 */
@Injectable()
export class SearchService implements OnApplicationShutdown {
  private readonly embedder = new QueryEmbedder();

  /** Connections for the further shards of a nearest-vector query (see `nearestRows`): one per shard past the first. */
  private readonly followers: Kysely<SearchDatabase>;

  constructor(
    @Inject(DATABASE) private readonly db: Kysely<SearchDatabase>,
    @Inject(CONFIG) config: MemexConfig,
  ) {
    this.followers = createDatabase<SearchDatabase>(config.databaseUrl, {
      schema: 'search',
      max: 4,
      applicationName: 'memex-search-shards',
      settings: SEARCH_DATABASE_SETTINGS,
    });
  }

  @RpcMethod(Search)
  async search(params: ParamsOf<typeof Search>, call: CallContext): Promise<ResultOf<typeof Search>> {
    const parsed = parseQuery(params.q);
    const mode: SearchMode = params.mode ?? 'hybrid';
    const limit = params.limit ?? 20;
    const offset = params.offset ?? 0;
    const conditions = filterConditions(params, parsed);
    const filters = allOf(conditions);
    const text = meaningText(parsed);
    // The query's words and the space to embed it in, then the two signals: side by side, each on its own connection.
    const [keyword, space] = await Promise.all([
      keywordQuery(this.db, call.scope, parsed),
      text && mode !== 'keyword' ? this.activeSpace() : undefined,
    ]);
    // Each signal ranks as deep as the page reaches (a later page ranks deeper than the first).
    const ctx = {
      scope: call.scope,
      filters,
      filtered: conditions.length > 0,
      keyword,
      candidates: Math.max(CANDIDATES, offset + limit),
    };
    let matched = keyword.all;
    const [byKeyword, byMeaning] = await Promise.all([
      (async () => {
        if (!keyword.all || mode === 'meaning') return NOTHING;
        const found = await this.keywordCandidates(ctx, keyword.all);
        if (found.hits.length > 0 || keyword.terms < 2 || !keyword.any) return found;
        matched = keyword.any;
        return this.keywordCandidates(ctx, keyword.any);
      })(),
      space ? this.meaningCandidates(ctx, space, text) : Promise.resolve(NOTHING),
    ]);
    const fused = keyword.all || text ? fuse(mode, byKeyword.hits, byMeaning.hits) : await this.latest(ctx);
    const total =
      keyword.all || text
        ? totalOf(byKeyword, byMeaning)
        : { total: fused.length, exact: fused.length < ctx.candidates };

    // Groups come from all candidates, so a kind crowded out of the first `limit` hits still shows.
    const groups = new Map<string, Fused[]>();
    for (const hit of fused) {
      const group = groups.get(hit.kind) ?? [];
      if (group.length < PER_GROUP) groups.set(hit.kind, [...group, hit]);
    }
    const shown = fused.slice(offset, offset + limit);
    const more = offset + limit < Math.max(fused.length, total.total) && offset + limit <= PAGED_AT_MOST;
    const selected = new Map([...shown, ...[...groups.values()].flat()].map((hit) => [hit.id, hit]));
    const details = await this.details(call.scope, [...selected.values()], keyword.highlight, matched);
    const toHit = (hit: Fused): SearchHit[] => {
      const detail = details.get(hit.id);
      if (!detail) return [];
      const { fields, ...rest } = detail;
      return [{ ...rest, score: round(hit.score), why: withFields(hit.why, fields) }];
    };
    return {
      hits: shown.flatMap(toHit),
      next_offset: more ? offset + limit : null,
      groups: Object.fromEntries([...groups].map(([kind, hits]) => [kind, hits.flatMap(toHit)])),
      query: {
        words: parsed.words,
        phrases: parsed.phrases,
        excluded: parsed.excluded,
        filters: Object.fromEntries(Object.entries(parsed.filters).filter(([, values]) => values.length > 0)),
        expansions: keyword.expansions,
      },
      mode,
      total: total.total,
      total_exact: total.exact,
      space: space && mode !== 'keyword' ? space.space : null,
    };
  }

  @RpcMethod(Similar)
  async similar(params: ParamsOf<typeof Similar>, call: CallContext): Promise<ResultOf<typeof Similar>> {
    const visible = await this.db
      .selectFrom('items as i')
      .select('i.id')
      .where('i.id', '=', params.id)
      .where(scopeOf(call.scope, 'i'))
      .executeTakeFirst();
    if (!visible) throw new MemexError('not_found', `no item ${params.id}`);
    const space = await this.activeSpace();
    const [indexed, fresh] = space ? [vectorTables(space.ord), freshTables(space.ord)] : [];
    // A fresh item vector is newer than an indexed one (see storeVectors).
    const { rows: own } =
      indexed && fresh
        ? await sql<{ embedding: string | null }>`select coalesce(
            (select embedding::text from ${sql.table(fresh.items)} where item_id = ${params.id}),
            (select embedding::text from ${sql.table(indexed.items)} where item_id = ${params.id} limit 1)) as embedding`.execute(
            this.db,
          )
        : { rows: [] };
    const vector = own[0]?.embedding;
    if (!space || !indexed || !fresh || !vector)
      throw new MemexError('not_found', `item ${params.id} has no vector in the active space yet`);
    const limit = params.limit ?? 10;
    // An indexed item vector that a fresh one replaces is not read.
    const nearest: Arm = (table, { fresh: own, shard }) => sql`(
        select v.item_id as id, v.embedding <=> ${vector}::halfvec as distance
        from ${table} v join items i on i.id = v.item_id
        where ${scopeOf(call.scope, 'i')} and v.item_id <> ${params.id} ${shard ? sql`and ${shard}` : sql``}
          ${own ? sql`` : sql`and not exists (select 1 from ${sql.table(fresh.items)} f where f.item_id = v.item_id)`}
        order by v.embedding <=> ${vector}::halfvec limit ${limit})`;
    const neighbours = (
      await nearestRows(
        this.db,
        this.followers,
        space.ord,
        'items',
        nearest,
        (arms) =>
          sql<{
            id: string;
            distance: number;
          }>`select * from (${sql.join(arms, sql` union all `)}) n order by distance, id limit ${limit}`,
      )
    )
      // Ties (copies of one text) by id: the same answer whichever tables hold them.
      .sort((a, b) => a.distance - b.distance || a.id.localeCompare(b.id))
      .slice(0, limit);
    const hits = neighbours.map((n, i) => ({
      id: n.id,
      score: 1 - n.distance,
      ordinal: 0,
      why: { meaning: { rank: i + 1, similarity: round(1 - n.distance) } },
    }));
    const details = await this.details(call.scope, hits);
    return {
      hits: hits.flatMap((hit) => {
        const detail = details.get(hit.id);
        if (!detail) return [];
        const { fields: _fields, ...rest } = detail;
        return [{ ...rest, score: round(hit.score), why: hit.why }];
      }),
      space: space.space,
    };
  }

  @RpcMethod(ModelsList)
  async models(): Promise<ResultOf<typeof ModelsList>> {
    const state = await this.db.selectFrom('state').selectAll().where('id', '=', 1).executeTakeFirstOrThrow();
    const active = state.active ?? GLOVE_SIF_SPACE;
    const chosen = state.chosen ?? GLOVE_SIF_SPACE;
    const spaces = await this.db.selectFrom('spaces').selectAll().orderBy('ord').execute();
    const models = spaces.map((row) => ({
      space: row.space,
      kind: row.kind,
      dims: row.dims,
      source: row.spec,
      embedded_items: row.embedded_items,
      total_items: state.text_items,
      state:
        row.space === active
          ? ('active' as const)
          : row.space === chosen
            ? ('filling' as const)
            : row.embedded_items >= state.text_items
              ? ('ready' as const)
              : ('incomplete' as const),
    }));
    if (!spaces.some((row) => row.space === GLOVE_SIF_SPACE)) {
      const builtin = (await defaultProvider()).describe();
      models.unshift({
        space: builtin.space,
        kind: builtin.kind,
        dims: builtin.dims,
        source: builtin.source,
        embedded_items: 0,
        total_items: state.text_items,
        state: active === builtin.space ? 'active' : 'ready',
      });
    }
    return { active, chosen, models };
  }

  /** The space search answers from, once it has vectors (none on a memex with no text yet). */
  private async activeSpace(): Promise<SpaceRow | undefined> {
    return this.db
      .selectFrom('spaces')
      .innerJoin('state', (join) => join.on('state.id', '=', 1))
      .selectAll('spaces')
      .where(sql<boolean>`spaces.space = coalesce(state.active, ${GLOVE_SIF_SPACE})`)
      .executeTakeFirst();
  }

  /**
   * Items whose passages (title weighted above text) match, best passage per item, ranked by
   * cover density; items with no passages yet match by title.
   */
  private async keywordCandidates(ctx: QueryContext, query: RawBuilder<unknown>): Promise<Found> {
    const excluded = ctx.keyword.excluded ? sql`and not (p.tsv @@ ${ctx.keyword.excluded})` : sql``;
    // Passages carry their item's scope; only filters read the item (a join per match otherwise).
    const items = ctx.filtered ? sql`join items i on i.id = p.item_id` : sql``;
    // Beside the first matching passages found, those of items whose title matches: in a large
    // archive a subject's words are common enough that the first found rarely include the one
    // message whose subject they are (0 of 39 sampled subjects in the top ten at 50,000 messages).
    // A passage both find is ranked twice and kept once (`distinct on` below): cheaper than
    // `union`, which sorted the passages' tsvectors to find it (7 ms of 61 for a common word at 10^6).
    // Each is ranked where it is found, so `m` holds no tsvectors: 2,000 of them (3 MB) would
    // outgrow `KEYWORD_WORK_MEM` and go to a temporary file.
    const statement = sql<Candidate & { found: number; capped: boolean }>`with m as (
        (select p.item_id, p.kind, p.ordinal, ts_rank_cd(p.tsv, ${query}) as score, true as by_text
        from parts p ${items}
        where p.tsv @@ ${query} and ${scopeOf(ctx.scope, 'p')} and ${ctx.filters} ${excluded}
        limit ${RANKED_AT_MOST})
        union all
        (select p.item_id, p.kind, p.ordinal, ts_rank_cd(p.tsv, ${query}), false
        from items i join parts p on p.item_id = i.id
        where i.title_tsv @@ ${query} and i.has_text and p.tsv @@ ${query}
          and ${scopeOf(ctx.scope, 'i')} and ${ctx.filters} ${excluded}
        limit ${RANKED_AT_MOST})
      ), found as (
        select distinct on (m.item_id) m.item_id as id, m.kind, m.ordinal, m.score
        from m order by m.item_id, m.score desc
      )
      select id, kind, ordinal, score, count(*) over ()::int as found,
        (select count(*) filter (where by_text) >= ${RANKED_AT_MOST}
          or count(*) filter (where not by_text) >= ${RANKED_AT_MOST} from m) as capped
      from (
        select * from found
        union all
        select i.id, i.kind, null, ts_rank_cd(i.title_tsv, ${query}) from items i
        where not i.has_text and i.title_tsv @@ ${query} and ${scopeOf(ctx.scope, 'i')} and ${ctx.filters}
          ${ctx.keyword.excluded ? sql`and not (i.title_tsv @@ ${ctx.keyword.excluded})` : sql``}
      ) x
      order by score desc, id limit ${ctx.candidates}`;
    const { rows } = await this.db.transaction().execute(async (trx) => {
      await sql`select set_config('work_mem', ${KEYWORD_WORK_MEM}, true)`.execute(trx);
      return statement.execute(trx);
    });
    return {
      hits: rows.map(({ id, kind, ordinal, score }) => ({ id, kind, ordinal, score })),
      total: rows[0]?.found ?? 0,
      exact: !(rows[0]?.capped ?? false),
    };
  }

  /**
   * Nearest passages to the query in the active space (IVFFlat, iterating past passages the scope
   * or filters reject), best passage per item. Quoted phrases and exclusions hold here too.
   */
  private async meaningCandidates(ctx: QueryContext, space: SpaceRow, text: string): Promise<Found> {
    const vector = await this.embedder.embed(space, text).catch((error: Error) => {
      throw new MemexError('unavailable', `cannot embed the query in ${space.space}: ${error.message}`);
    });
    if (isZeroVector(vector)) return NOTHING;
    const literal = vectorLiteral(vector);
    const { phrases, excluded } = ctx.keyword;
    const passages = PASSAGES_PER_CANDIDATE * ctx.candidates;
    // The nearest passages in each indexed table (IVFFlat) and among the fresh vectors not in one yet (exact).
    const nearest: Arm = (table, { shard }) => sql`(
        select v.item_id as id, i.kind, v.ordinal, v.embedding <=> ${literal}::halfvec as distance
        from ${table} v join items i on i.id = v.item_id
        where ${scopeOf(ctx.scope, 'i')} and ${ctx.filters} ${shard ? sql`and ${shard}` : sql``}
          ${phrases ? sql`and exists (select 1 from parts x where x.item_id = v.item_id and x.tsv @@ ${phrases})` : sql``}
          ${excluded ? sql`and not exists (select 1 from parts x where x.item_id = v.item_id and x.tsv @@ ${excluded})` : sql``}
        order by v.embedding <=> ${literal}::halfvec limit ${passages})`;
    const rows = await nearestRows(
      this.db,
      this.followers,
      space.ord,
      'parts',
      nearest,
      (arms) =>
        sql<{ id: string; kind: string; ordinal: number; distance: number }>`
        select * from (${sql.join(arms, sql` union all `)}) n order by distance limit ${passages}`,
    );
    const sorted = rows.sort((a, b) => a.distance - b.distance || a.id.localeCompare(b.id)).slice(0, passages);
    const floor = Math.max(0, MEANING_FLOOR * (1 - (sorted[0]?.distance ?? 1)));
    const best = new Map<string, Candidate>();
    for (const row of sorted) {
      const similarity = 1 - row.distance;
      if (similarity <= floor) break;
      if (!best.has(row.id)) best.set(row.id, { id: row.id, kind: row.kind, ordinal: row.ordinal, score: similarity });
    }
    const hits = [...best.values()];
    // Exact when the nearest passages ran out, or reached below the floor, before any limit did.
    const below = sorted.length < passages || 1 - sorted[sorted.length - 1]!.distance <= floor;
    return {
      hits: hits.slice(0, ctx.candidates),
      total: hits.length,
      exact: below && hits.length <= ctx.candidates,
    };
  }

  /** With filters and no words: the newest matching items. */
  private async latest(ctx: QueryContext): Promise<Fused[]> {
    const excluded = ctx.keyword.excluded
      ? sql`and not exists (select 1 from parts x where x.item_id = i.id and x.tsv @@ ${ctx.keyword.excluded}) and not (i.title_tsv @@ ${ctx.keyword.excluded})`
      : sql``;
    const { rows } = await sql<{ id: string; kind: string }>`select i.id, i.kind from items i
      where ${scopeOf(ctx.scope, 'i')} and ${ctx.filters} ${excluded}
      order by i.occurred_at desc nulls last, i.id desc limit ${ctx.candidates}`.execute(this.db);
    return rows.map((row, i) => ({ id: row.id, kind: row.kind, score: 1 / (i + 1), ordinal: 0, why: {} }));
  }

  /** Titles, times and highlighted snippets of the hits (scope checked again: defence in depth). */
  private async details(
    scope: Scope,
    hits: Array<{ id: string; ordinal: number | null }>,
    highlight?: RawBuilder<unknown>,
    matched?: RawBuilder<unknown>,
  ): Promise<Map<string, Omit<SearchHit, 'score' | 'why'> & { fields: Field[] }>> {
    if (hits.length === 0) return new Map();
    const snippet = highlight ? sql`ts_headline(${TEXT_CONFIG}, p.text, ${highlight}, ${HEADLINE})` : sql`p.text`;
    const fields = matched
      ? fieldMatches(matched, { item: sql.ref('i.title_tsv'), passage: sql.ref('p.tsv') })
      : { title: sql<boolean>`false`, text: sql<boolean>`false`, people: sql<boolean>`false` };
    const { rows } = await sql<{
      id: string;
      kind: string;
      title: string;
      occurred_at: Date | null;
      snippet: string | null;
      title_match: boolean;
      text_match: boolean;
      people_match: boolean;
    }>`select i.id, i.kind, i.title, i.occurred_at, ${snippet} as snippet,
        ${fields.title} as title_match, ${fields.text} as text_match, ${fields.people} as people_match
      from unnest(${hits.map((h) => h.id)}::text[], ${hits.map((h) => h.ordinal ?? 0)}::int[]) as c (id, ordinal)
      join items i on i.id = c.id
      left join parts p on p.item_id = c.id and p.ordinal = c.ordinal
      where ${scopeOf(scope, 'i')}`.execute(this.db);
    return new Map(
      rows.map((row) => [
        row.id,
        {
          id: row.id,
          kind: row.kind,
          title: row.title,
          occurred_at: row.occurred_at?.toISOString() ?? null,
          snippet: highlight ? (row.snippet ?? '') : lead(row.snippet ?? ''),
          fields: (['title', 'text', 'people'] as const).filter((field) => row[`${field}_match`]),
        },
      ]),
    );
  }

  async onApplicationShutdown(): Promise<void> {
    await this.embedder.close();
    await this.followers.destroy();
  }
}

interface QueryContext {
  scope: Scope;
  filters: RawBuilder<unknown>;
  /** Whether any filter is set (`filters` is more than `true`). */
  filtered: boolean;
  keyword: KeywordQuery;
  /** How many items each signal ranks. */
  candidates: number;
}

/**
 * One ranking from the signals the mode asks for: keyword or meaning alone, or their reciprocal
 * rank fusion, Σ w/(k + rank), which needs no calibration between the two kinds of score. A
 * keyword hit holds every word (w = 1); a meaning hit weighs its similarity (w < 1), so an item
 * only near in meaning never outranks the same rank's exact match: the one item holding a rare
 * word is not pushed down by a weak neighbour (similarity 0.4) that holds none of it.
 */
export function fuse(mode: SearchMode, keyword: Candidate[], meaning: Candidate[]): Fused[] {
  const fused = new Map<string, Fused>();
  const add = (list: Candidate[], signal: 'keyword' | 'meaning') => {
    list.forEach((candidate, index) => {
      const rank = index + 1;
      const entry = fused.get(candidate.id) ?? {
        id: candidate.id,
        kind: candidate.kind,
        score: 0,
        ordinal: candidate.ordinal,
        why: {},
      };
      if (signal === 'keyword') entry.why.keyword = { rank, score: round(candidate.score), fields: [] };
      else entry.why.meaning = { rank, similarity: round(candidate.score) };
      // The keyword passage is the better snippet: it holds the words.
      if (signal === 'keyword' || entry.ordinal === null) entry.ordinal = candidate.ordinal;
      const weight = signal === 'keyword' ? 1 : Math.max(candidate.score, 0);
      entry.score += mode === 'hybrid' ? weight / (RRF_K + rank) : candidate.score;
      fused.set(candidate.id, entry);
    });
  };
  if (mode !== 'meaning') add(keyword, 'keyword');
  if (mode !== 'keyword') add(meaning, 'meaning');
  return [...fused.values()].sort((a, b) => b.score - a.score || a.id.localeCompare(b.id));
}

/**
 * How many items the signals found together: keyword matches plus meaning hits the keyword list
 * does not hold (which may be keyword matches past its first candidates: then not exact).
 */
function totalOf(keyword: Found, meaning: Found): { total: number; exact: boolean } {
  const keywordIds = new Set(keyword.hits.map((hit) => hit.id));
  const meaningOnly = meaning.hits.filter((hit) => !keywordIds.has(hit.id)).length;
  const keywordComplete = keyword.hits.length === keyword.total;
  return {
    total: keyword.total + meaningOnly + (meaning.total - meaning.hits.length),
    exact: keyword.exact && meaning.exact && (keywordComplete || meaningOnly === 0),
  };
}

function withFields(why: SearchHit['why'], fields: Field[]): SearchHit['why'] {
  return why.keyword ? { ...why, keyword: { ...why.keyword, fields } } : why;
}

function round(value: number): number {
  return Math.round(value * 10_000) / 10_000;
}

/** The start of a passage, cut at a word, for hits with no words to highlight. */
function lead(text: string, max = 240): string {
  if (text.length <= max) return text;
  const cut = text.slice(0, max);
  return `${cut.slice(0, Math.max(cut.lastIndexOf(' '), max / 2))} …`;
}
