import { sql, type RawBuilder } from 'kysely';

/**
 * How text becomes searchable words, in one place for the projector and the queries. The SQL
 * functions and the `memex` text search configuration are created by migration 003:
 * - `memex`: English stems of accent-folded words (`unaccent`), so `zoe` finds Zoë and `muller`
 *   and `müller` both find Müller;
 * - `doc_tsv(text, weight)`: a text's words plus its CJK runs as overlapping bigrams and single
 *   characters (the parser keeps a run of Han, kana or Hangul as one word, so `山田` would never
 *   match inside `山田太郎です`);
 * - `people_words(lines)`: senders' and recipients' `name <address>` lines as words: the names,
 *   the whole address, its local part split into words and its domain;
 * - `word_query(word)`: a query word as a tsquery (a CJK word as the phrase of its bigrams);
 * - `name_words(text)` (migration 011): a text with its file names' parts added, for titles: the
 *   parser takes `meeting-notes.docx` or `IMG_5195.HEIC` for one host name.
 */
export const TEXT_CONFIG = sql`'memex'::regconfig`;

/** The people of an item (weight C: below its title and text). */
export const peopleTsv = (from: unknown, to: unknown): RawBuilder<unknown> =>
  sql`doc_tsv(people_words(${from}::text || E'\\n' || ${to}::text), 'C')`;

/** An item's title (weight A), a file name in it also by its parts (`IMG_5195.HEIC`: img, 5195, heic). */
export const titleWordsTsv = (title: unknown): RawBuilder<unknown> => sql`doc_tsv(name_words(${title}::text), 'A')`;

/** An item's own words: its title (weight A) and its people (weight C). */
export const titleTsv = (title: unknown, from: unknown, to: unknown): RawBuilder<unknown> =>
  sql`${titleWordsTsv(title)} || ${peopleTsv(from, to)}`;

/**
 * A passage's words from its item's title and people as `titleWordsTsv` and `peopleTsv` give
 * them (computed once for an item's passages): the title (A) ahead of the text (B), then the people (C).
 */
export const passageTsv = (titleWords: unknown, text: unknown, people: unknown): RawBuilder<unknown> =>
  sql`${titleWords} || doc_tsv(${text}::text, 'B') || ${people}`;

/** A passage's words: its item's title (A) ahead of its own text (B), then its item's people (C). */
export const partTsv = (title: unknown, text: unknown, from: unknown, to: unknown): RawBuilder<unknown> =>
  passageTsv(titleWordsTsv(title), text, peopleTsv(from, to));

/**
 * Which of a hit's fields hold the matched words (for `why.keyword.fields`), read from the words
 * stored by weight (`passageTsv`, `titleTsv`: title A, text B, people C) rather than by parsing
 * the fields again, which cost a hit about a millisecond. `item` is the item's `title_tsv`,
 * `passage` the hit's passage `tsv` (null for an item with no passages).
 */
export const fieldMatches = (matched: RawBuilder<unknown>, words: { item: unknown; passage: unknown }) => {
  const own = sql`coalesce(${words.passage}, ${words.item})`;
  return {
    title: sql<boolean>`ts_filter(${own}, '{a}') @@ ${matched}`,
    text: sql<boolean>`coalesce(ts_filter(${words.passage}, '{b}') @@ ${matched}, false)`,
    people: sql<boolean>`ts_filter(${own}, '{c}') @@ ${matched}`,
  };
};

/** A query word as a tsquery (its stem, accents folded; a CJK word as the phrase of its bigrams). */
export const wordQuery = (word: unknown): RawBuilder<unknown> => sql`word_query(${word}::text)`;
