import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { ParsedQuery, Scope } from '@memex/contracts';
import { visibleTo } from '@memex/db';
import { TEXT_CONFIG, wordQuery } from '../domain/text.js';
import type { SearchDatabase } from '../schema.js';

export interface Expansion {
  word: string;
  matches: string[];
  how: 'prefix' | 'typo' | 'substring';
}

type TsQuery = RawBuilder<unknown>;

const plain = (text: string): TsQuery => wordQuery(text);
const phrase = (text: string): TsQuery => sql`phraseto_tsquery(${TEXT_CONFIG}, ${text})`;
const or = (parts: TsQuery[]): TsQuery => sql`(${sql.join(parts, sql` || `)})`;
const and = (parts: TsQuery[]): TsQuery => sql`(${sql.join(parts, sql` && `)})`;

/** `invoi*` as a tsquery: each letter/digit run a lexeme, the last one a prefix. */
function prefix(text: string): TsQuery | undefined {
  const runs = text.match(/[\p{L}\p{N}]+/gu);
  if (!runs) return undefined;
  const query = runs.map((run, i) => `'${run}'${i === runs.length - 1 ? ':*' : ''}`).join(' & ');
  return sql`to_tsquery(${TEXT_CONFIG}, ${query})`;
}

/** The full-text side of a query, as tsquery expressions built from the parsed query. */
export interface KeywordQuery {
  /** Every word, prefix and phrase must match (none when the query has no positive terms). */
  all?: TsQuery;
  /** Any word or prefix, every phrase: the fallback when `all` finds nothing. */
  any?: TsQuery;
  /** What to highlight in snippets: any positive term. */
  highlight?: TsQuery;
  /** Phrases every hit must contain, whatever the signal (quotes mean "exactly this"). */
  phrases?: TsQuery;
  /** What no hit may contain. */
  excluded?: TsQuery;
  /** Words not found in the index, replaced by indexed words near them. */
  expansions: Expansion[];
  /** How many words and prefixes (an OR fallback only makes sense for two or more). */
  terms: number;
}

/**
 * Builds the tsqueries for a parsed query. A word the index does not hold (not even by its
 * stem) is widened to indexed words it is the start of, else near spellings (trigram
 * similarity), else words containing it: typos and half-typed words still find something.
 */
export async function keywordQuery(
  db: Kysely<SearchDatabase>,
  scope: Scope,
  parsed: ParsedQuery,
): Promise<KeywordQuery> {
  const expansions = await expandUnknown(db, scope, parsed.words);
  const terms: TsQuery[] = parsed.words.map((word) => {
    const expansion = expansions.find((e) => e.word === word);
    return expansion ? or([plain(word), ...expansion.matches.map(plain)]) : plain(word);
  });
  terms.push(...parsed.prefixes.map(prefix).filter((q): q is TsQuery => q !== undefined));
  const phrases = parsed.phrases.map(phrase);
  const result: KeywordQuery = { expansions, terms: terms.length };
  if (phrases.length > 0) result.phrases = and(phrases);
  if (terms.length + phrases.length > 0) {
    result.all = and([...terms, ...phrases]);
    result.any = terms.length > 0 ? and([or(terms), ...phrases]) : result.all;
    result.highlight = or([...terms, ...phrases]);
  }
  if (parsed.excluded.length > 0)
    result.excluded = or(parsed.excluded.map((x) => (/\s/.test(x) ? phrase(x) : plain(x))));
  return result;
}

/**
 * Widens the query words the index does not hold. For an agent, "holds" means in what its scope
 * lets it see, and only visible words are offered: the vocabulary is shared by every scope, and
 * neither an expansion nor its absence may reveal a word of an item the caller cannot see.
 */
async function expandUnknown(db: Kysely<SearchDatabase>, scope: Scope, words: string[]): Promise<Expansion[]> {
  const candidates = [...new Set(words.filter((w) => /^[\p{L}\p{N}]{3,40}$/u.test(w)))];
  if (candidates.length === 0) return [];
  const owner = scope.kind === 'owner';
  const known = owner
    ? new Set(
        (await db.selectFrom('words').select('word').where('word', 'in', candidates).execute()).map((r) => r.word),
      )
    : new Set<string>();
  const expansions: Expansion[] = [];
  for (const word of candidates.filter((w) => !known.has(w))) {
    // Known by its stem ("meetings" when the text says "meeting"): nothing to widen.
    if ((await visibleWords(db, scope, [word])).length > 0) continue;
    for (const find of [startingWith, nearSpellings, containing]) {
      const found = await find(db, word, owner ? 5 : 20);
      const matches = found && (owner ? found.matches : (await visibleWords(db, scope, found.matches)).slice(0, 5));
      if (found && matches && matches.length > 0) {
        expansions.push({ ...found, matches });
        break;
      }
    }
  }
  return expansions;
}

/** The words (in order) that occur in a passage or title the scope lets the caller see. */
async function visibleWords(db: Kysely<SearchDatabase>, scope: Scope, words: string[]): Promise<string[]> {
  const parts = visibleTo(scope, { kind: 'p.kind', labels: 'p.labels', spam: 'p.spam' });
  const items = visibleTo(scope, { kind: 'i.kind', labels: 'i.labels', spam: 'i.spam' });
  const { rows } = await sql<{ w: string }>`select w from unnest(${words}::text[]) with ordinality as u (w, n)
    where exists (select 1 from parts p where p.tsv @@ ${wordQuery(sql.ref('w'))} and ${parts})
      or exists (select 1 from items i where i.title_tsv @@ ${wordQuery(sql.ref('w'))} and ${items})
    order by n`.execute(db);
  return rows.map((r) => r.w);
}

async function startingWith(db: Kysely<SearchDatabase>, word: string, limit: number): Promise<Expansion | undefined> {
  const rows = await db
    .selectFrom('words')
    .select('word')
    .where(sql<boolean>`word like ${`${escapeLike(word)}%`}`)
    .orderBy(sql`length(word)`)
    .orderBy('word')
    .limit(limit)
    .execute();
  return rows.length > 0 ? { word, matches: rows.map((r) => r.word), how: 'prefix' } : undefined;
}

async function nearSpellings(db: Kysely<SearchDatabase>, word: string, limit: number): Promise<Expansion | undefined> {
  const { rows } = await sql<{
    word: string;
  }>`select word from words where word % ${word} and similarity(word, ${word}) >= 0.4
    order by similarity(word, ${word}) desc, length(word), word limit ${limit}`.execute(db);
  return rows.length > 0 ? { word, matches: rows.map((r) => r.word), how: 'typo' } : undefined;
}

async function containing(db: Kysely<SearchDatabase>, word: string, limit: number): Promise<Expansion | undefined> {
  if (word.length < 4) return undefined;
  const rows = await db
    .selectFrom('words')
    .select('word')
    .where(sql<boolean>`word like ${`%${escapeLike(word)}%`}`)
    .orderBy(sql`length(word)`)
    .orderBy('word')
    .limit(limit)
    .execute();
  return rows.length > 0 ? { word, matches: rows.map((r) => r.word), how: 'substring' } : undefined;
}

export function escapeLike(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}
