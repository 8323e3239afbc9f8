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

/** Adds `counts` in one statement; `preamble` may define CTEs they read (ending in a comma). */
export async function addWords(
  trx: Transaction<SearchDatabase>,
  counts: RawBuilder<unknown>,
  preamble = sql``,
): Promise<void> {
  await sql`with ${preamble} c as (${counts}),
      u as (insert into word_uses (word, uses) select w, n from c
        on conflict (word) do update set uses = word_uses.uses + excluded.uses returning word, xmax = 0 as fresh)
    insert into words (word) select word from u where fresh on conflict do nothing`.execute(trx);
}

/** Takes `counts` back out; words no title or passage uses any more leave the vocabulary. */
export async function removeWords(trx: Transaction<SearchDatabase>, counts: RawBuilder<unknown>): Promise<void> {
  const { rows } = await sql<{ word: string; uses: number }>`with c as (${counts})
    update word_uses set uses = word_uses.uses - c.n from c where word_uses.word = c.w
    returning word_uses.word, word_uses.uses`.execute(trx);
  const gone = rows.filter((r) => r.uses <= 0).map((r) => r.word);
  if (gone.length === 0) return;
  await sql`with d as (delete from word_uses where word = any(${gone}::text[]))
    delete from words where word = any(${gone}::text[])`.execute(trx);
}
