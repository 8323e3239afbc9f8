import { sql, type RawBuilder, type Transaction } from 'kysely';
import type { SearchDatabase } from '../schema.js';

/**
 * The vocabulary (query words are widened to it: prefixes, typos, substrings) holds exactly the
 * words of the current titles and passages, counted, so a deleted item's words leave it and a
 * replay rebuilds it identically. Counts live in `word_uses` (updates touch no index); `words`,
 * with the trigram and prefix indexes, only sees a word arrive and go.
 */

/** The words of a text (lowercase runs of letters and digits), as a subquery of `w`. */
export const wordsOf = (text: unknown): RawBuilder<unknown> =>
  sql`(select distinct w from regexp_split_to_table(lower(${text}), '[^[:alnum:]]+') w where length(w) between 2 and 40)`;

/** `(w, n)` rows: each word of one text, once. */
export const countsOf = (text: string): RawBuilder<unknown> => sql`select w, 1 as n from ${wordsOf(text)} x`;

/** `(w, n)` rows: each word with the number of an item's passages holding it (`from` names them, e.g. a CTE). */
export const passageCounts = (from: RawBuilder<unknown>): RawBuilder<unknown> =>
  sql`select w, count(*)::int as n from ${from} p, lateral ${wordsOf(sql.ref('p.text'))} x group by w`;

/**
 * Word counts change once per batch of events, not once per passage (a passage holds a hundred
 * words, and their counters were most of a passage's cost): events stage their changes in
 * `word_delta`, a temp table of the batch's transaction, and `flushWords` applies the sums.
 */
export async function stageWords(trx: Transaction<SearchDatabase>): Promise<void> {
  await sql`create temp table if not exists word_delta (w text not null, n int not null) on commit drop`.execute(trx);
}

/** Stages `counts` as additions; `preamble` may define CTEs they read (ending in a comma). */
export async function addWords(
  trx: Transaction<SearchDatabase>,
  counts: RawBuilder<unknown>,
  preamble = sql``,
): Promise<void> {
  await sql`with ${preamble} c as (${counts}) insert into word_delta (w, n) select w, n from c`.execute(trx);
}

/** Stages `counts` as removals. */
export async function removeWords(trx: Transaction<SearchDatabase>, counts: RawBuilder<unknown>): Promise<void> {
  await sql`with c as (${counts}) insert into word_delta (w, n) select w, -n from c`.execute(trx);
}

/** Applies what was staged: new words join the vocabulary, words nothing uses any more leave it. */
export async function flushWords(trx: Transaction<SearchDatabase>): Promise<void> {
  await sql`with d as (select w, sum(n)::int as n from word_delta group by w having sum(n) <> 0),
      u as (insert into word_uses (word, uses) select w, n from d
        on conflict (word) do update set uses = word_uses.uses + excluded.uses returning word, xmax = 0 as fresh)
    insert into words (word) select word from u where fresh on conflict do nothing`.execute(trx);
  await sql`with d as (delete from word_uses where uses <= 0 returning word)
    delete from words where word in (select word from d)`.execute(trx);
  await sql`delete from word_delta`.execute(trx);
}
