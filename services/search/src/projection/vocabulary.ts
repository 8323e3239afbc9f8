import { sql, type Kysely, type RawBuilder, type Transaction } from 'kysely';
import { bulkLoading } from '@memex/runtime';
import type { SearchDatabase } from '../schema.js';

/**
 * The vocabulary (query words are widened to it: prefixes, typos, substrings) holds exactly the
 * words of the current titles and passages, counted, so a deleted item's words leave it and a
 * replay rebuilds it identically. Counts live in `word_uses` (updates touch no index); `words`,
 * with the trigram and prefix indexes, only sees a word arrive and go.
 *
 * Words are found here, in the projector, not in SQL: splitting a passage with a regular
 * expression in Postgres cost more than its tsvector (about a third of a replay).
 */

const WORD = /[\p{L}\p{N}]{2,}/gu;
/** The same runs in a text of ASCII only (most mail), found twice as fast as by Unicode properties. */
const ASCII_WORD = /[a-z0-9]{2,}/g;
const NON_ASCII = /[^\x00-\x7f]/;
const SURROGATE = /[\uD800-\uDFFF]/;

/** The words of a text: lowercase runs of letters and digits of 2 to 40 characters, each once. */
export function wordsOf(text: string): Set<string> {
  const words = new Set<string>();
  const lower = text.toLowerCase();
  const ascii = !NON_ASCII.test(lower);
  for (const word of lower.match(ascii ? ASCII_WORD : WORD) ?? []) {
    // In characters, not UTF-16 units: a letter beyond the BMP is one.
    const length = !ascii && SURROGATE.test(word) ? [...word].length : word.length;
    if (length <= 40) words.add(word);
  }
  return words;
}

/** How many of `texts` hold each word. */
export function countWords(texts: Iterable<string>): Map<string, number> {
  const counts = new Map<string, number>();
  for (const text of texts) for (const word of wordsOf(text)) counts.set(word, (counts.get(word) ?? 0) + 1);
  return counts;
}

/**
 * Word counts change once per batch of events, not once per passage (a passage holds a hundred
 * words, and their counters were most of a passage's cost): events stage their changes in
 * `word_delta`, a temp table of the batch's transaction, and `flushWords` applies the sums. A
 * rebuild's bulk load, whose lanes would wait on each other's words, stages them in
 * `word_delta_bulk` for all its batches and applies the sums once at the end.
 */
export async function stageWords(trx: Transaction<SearchDatabase>): Promise<void> {
  await sql`create temp table if not exists word_delta (w text not null, n int not null) on commit drop`.execute(trx);
}

/** Stages `counts` as additions (negative: removals); `preamble` may run first in the same statement (CTEs, ending in a comma). */
export async function addWords(
  trx: Transaction<SearchDatabase>,
  counts: Map<string, number>,
  preamble?: RawBuilder<unknown>,
): Promise<void> {
  if (counts.size === 0 && !preamble) return;
  const staged = sql.table((await bulkLoading(trx)) ? 'word_delta_bulk' : 'word_delta');
  await sql`with ${preamble ?? sql``} c (w, n) as (select * from unnest(${[...counts.keys()]}::text[], ${[...counts.values()]}::int[]))
    insert into ${staged} (w, n) select w, n from c`.execute(trx);
}

/** Stages `counts` as removals. */
export async function removeWords(trx: Transaction<SearchDatabase>, counts: Map<string, number>): Promise<void> {
  await addWords(trx, new Map([...counts].map(([word, n]) => [word, -n])));
}

/**
 * Applies what was staged (in `word_delta`, or a bulk load's `word_delta_bulk`): new words join
 * the vocabulary, words nothing uses any more leave it.
 */
export async function flushWords(
  db: Kysely<SearchDatabase>,
  staged: 'word_delta' | 'word_delta_bulk' = 'word_delta',
): Promise<void> {
  await sql`with d as (select w, sum(n)::int as n from ${sql.table(staged)} group by w having sum(n) <> 0),
      u as (insert into word_uses (word, uses) select w, n from d
        on conflict (word) do update set uses = word_uses.uses + excluded.uses returning word, xmax = 0 as fresh)
    insert into words (word) select word from u where fresh on conflict do nothing`.execute(db);
  await sql`with d as (delete from word_uses where uses <= 0 returning word)
    delete from words where word in (select word from d)`.execute(db);
  await sql`delete from ${sql.table(staged)}`.execute(db);
}
