import { MemexError } from './errors.js';

// The query language of memex.search, here because mail rules (mail-sync) are written in it too.

/**
 * The query syntax's filters (`from:ann`, `kind:email`, `before:2021-03`, `author:shen` for a paper's
 * authors, `object:dog` and `tag:beach` for what media saw in a photo or video...).
 */
export const FILTER_FIELDS = [
  'from',
  'to',
  'kind',
  'before',
  'after',
  'label',
  'source',
  'author',
  'object',
  'tag',
] as const;
export type FilterField = (typeof FILTER_FIELDS)[number];

export interface ParsedQuery {
  /** Bare words, as typed (lowercased), in order. */
  words: string[];
  /** Words typed with a trailing `*`, without it. */
  prefixes: string[];
  phrases: string[];
  /** `-word` and `-"a phrase"`. */
  excluded: string[];
  filters: Record<FilterField, string[]>;
}

/** One token: `-`? then `field:`? then a "quoted run" or a bare run. */
const TOKEN = /(-?)(?:([a-z]+):)?(?:"([^"]*)"?|(\S+))/gi;

/** Punctuation around a word is not part of it ("(budget)," → budget); inside it is (e-mail, 3.5). */
function trimWord(raw: string): string {
  return raw.replace(/^[^\p{L}\p{N}]+|[^\p{L}\p{N}*]+$/gu, '');
}

/**
 * Reads what a person types into a search box: words, "quoted phrases", `-exclusions`,
 * `prefix*`, and filters from:, to:, kind:, before:, after:, label:, source:, author:, object:, tag: (values may be
 * quoted: from:"Ann Lee"). An unknown `field:` stays a word (re:, http:).
 */
export function parseQuery(q: string): ParsedQuery {
  const parsed: ParsedQuery = {
    words: [],
    prefixes: [],
    phrases: [],
    excluded: [],
    filters: Object.fromEntries(FILTER_FIELDS.map((f) => [f, []])) as unknown as Record<FilterField, string[]>,
  };
  for (const match of q.matchAll(TOKEN)) {
    const [whole, minus, rawField, quoted, bare] = match;
    const field = rawField?.toLowerCase();
    if (field && (FILTER_FIELDS as readonly string[]).includes(field)) {
      const value = (quoted ?? bare ?? '').trim();
      if (value) parsed.filters[field as FilterField].push(value);
      continue;
    }
    // A field we do not know is part of the text: put it back.
    const text = field ? whole.slice(minus!.length) : (quoted ?? bare ?? '');
    if (quoted !== undefined && !field) {
      const phrase = quoted.trim().toLowerCase();
      if (!phrase) continue;
      if (minus) parsed.excluded.push(phrase);
      else if (/\s/.test(phrase)) parsed.phrases.push(phrase);
      else parsed.words.push(trimWord(phrase));
      continue;
    }
    const word = trimWord(text.toLowerCase());
    if (!word || word === '*') continue;
    if (minus) parsed.excluded.push(word.replace(/\*$/, ''));
    else if (word.endsWith('*')) parsed.prefixes.push(word.replace(/\*+$/, ''));
    else parsed.words.push(word);
  }
  parsed.words = parsed.words.filter(Boolean);
  parsed.prefixes = parsed.prefixes.filter(Boolean);
  return parsed;
}

/** A parsed query written back in the syntax (parseQuery of it gives the same), e.g. after dropping a filter. */
export function formatQuery(parsed: ParsedQuery): string {
  const quote = (value: string) => (/[\s"]/.test(value) || value === '' ? `"${value.replace(/"/g, '')}"` : value);
  return [
    ...parsed.words.map(quote),
    ...parsed.prefixes.map((p) => `${p}*`),
    ...parsed.phrases.map((p) => `"${p.replace(/"/g, '')}"`),
    ...parsed.excluded.map((e) => `-${quote(e)}`),
    ...FILTER_FIELDS.flatMap((field) => parsed.filters[field].map((value) => `${field}:${quote(value)}`)),
  ].join(' ');
}

/** The free text of a query (words, prefixes and phrases), for the meaning signal. */
export function meaningText(parsed: ParsedQuery): string {
  return [...parsed.words, ...parsed.prefixes, ...parsed.phrases].join(' ');
}

/**
 * The start of a date given as YYYY, YYYY-MM, YYYY-MM-DD or a full ISO date-time (UTC).
 * `before:X` keeps what happened before X began; `after:X` what happened from X on.
 */
export function parseDate(value: string, what: string): Date {
  const partial = /^(\d{4})(?:[-/](\d{1,2}))?(?:[-/](\d{1,2}))?$/.exec(value);
  const date = partial
    ? new Date(Date.UTC(Number(partial[1]), Number(partial[2] ?? 1) - 1, Number(partial[3] ?? 1)))
    : new Date(value);
  if (Number.isNaN(date.getTime()) || (partial && date.getUTCMonth() !== Number(partial[2] ?? 1) - 1)) {
    throw new MemexError(
      'invalid_params',
      `${what}: "${value}" is not a date (use YYYY, YYYY-MM, YYYY-MM-DD or ISO 8601)`,
    );
  }
  return date;
}
