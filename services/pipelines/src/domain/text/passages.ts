import type { PageRange } from '@memex/contracts';
/** Splitting an item's text into passages (tier 1): what gets embedded and returned as snippets. */

/** Bump when the split changes: parts (and vectors of them) from another version are replaced. */
export const TEXT_PIPELINE = 'text@1';

export interface Passage {
  ordinal: number;
  kind: 'passage';
  text: string;
  /** [start, end) into the item's text. */
  start: number;
  end: number;
  page?: number;
}

export interface PassageOptions {
  /** A passage closes at a sentence end once it has this many words... */
  minWords: number;
  /** ...and never grows past this many (a longer sentence is cut between words). */
  maxWords: number;
  /** The next passage starts with the previous one's last sentences, up to this many words. */
  overlapWords: number;
}

export const DEFAULT_PASSAGE_OPTIONS: PassageOptions = { minWords: 150, maxWords: 300, overlapWords: 40 };

interface Span {
  start: number;
  end: number;
  words: number;
  /** The span starts a paragraph: a good place to begin a passage. */
  paragraph: boolean;
}

const WORD = /\S+/g;

function countWords(text: string): number {
  return text.match(WORD)?.length ?? 0;
}

/**
 * Sentences (or lines, for text without sentence punctuation such as lists and headers) with
 * their offsets. A sentence ends at . ! ? or … followed by closing quotes/brackets and space;
 * a blank line always ends one and starts a paragraph.
 */
function sentences(text: string, from: number, to: number): Span[] {
  const spans: Span[] = [];
  const boundary = /([.!?…]+["'”’)\]]*)(\s+)|(\n[ \t]*\n\s*)|(\n)(?=\s*(?:[-*•>]|\d+[.)])\s)/g;
  boundary.lastIndex = from;
  let start = from;
  let paragraph = true;
  const push = (end: number, nextParagraph: boolean) => {
    let s = start;
    let e = end;
    while (s < e && /\s/.test(text[s]!)) s++;
    while (e > s && /\s/.test(text[e - 1]!)) e--;
    if (e > s) spans.push({ start: s, end: e, words: countWords(text.slice(s, e)), paragraph });
    paragraph = nextParagraph;
  };
  for (let m = boundary.exec(text); m && m.index < to; m = boundary.exec(text)) {
    const end = m[1] !== undefined ? m.index + m[1].length : m.index;
    push(Math.min(end, to), m[3] !== undefined || (m[2] !== undefined && /\n[ \t]*\n/.test(m[2])));
    start = Math.min(m.index + m[0].length, to);
  }
  push(to, true);
  return spans;
}

/** Cuts a span longer than `max` words into pieces of `max` words at word boundaries. */
function cutLong(text: string, span: Span, max: number): Span[] {
  if (span.words <= max) return [span];
  const pieces: Span[] = [];
  WORD.lastIndex = 0;
  const slice = text.slice(span.start, span.end);
  let count = 0;
  let pieceStart = span.start;
  let lastEnd = span.start;
  for (let m = WORD.exec(slice); m; m = WORD.exec(slice)) {
    if (count === max) {
      pieces.push({ start: pieceStart, end: lastEnd, words: count, paragraph: pieces.length === 0 && span.paragraph });
      pieceStart = span.start + m.index;
      count = 0;
    }
    count++;
    lastEnd = span.start + m.index + m[0].length;
  }
  pieces.push({ start: pieceStart, end: lastEnd, words: count, paragraph: pieces.length === 0 && span.paragraph });
  return pieces;
}

/**
 * Groups sentences into passages of minWords..maxWords, closing early at a paragraph break once
 * past minWords, and starting each passage with the previous one's last sentences (up to
 * overlapWords) so a thought cut at a boundary is still whole in one of them.
 */
function group(text: string, spans: Span[], options: PassageOptions): Array<{ start: number; end: number }> {
  const out: Array<{ start: number; end: number }> = [];
  let current: Span[] = [];
  let words = 0;
  let fresh = 0; // sentences in `current` not carried over from the previous passage
  const close = () => {
    if (fresh === 0) return;
    out.push({ start: current[0]!.start, end: current[current.length - 1]!.end });
    const carried: Span[] = [];
    let carriedWords = 0;
    for (let i = current.length - 1; i > 0; i--) {
      if (carriedWords + current[i]!.words > options.overlapWords) break;
      carried.unshift(current[i]!);
      carriedWords += current[i]!.words;
    }
    current = carried;
    words = carriedWords;
    fresh = 0;
  };
  for (const span of spans.flatMap((s) => cutLong(text, s, options.maxWords))) {
    if (words >= options.minWords && span.paragraph) close();
    else if (words + span.words > options.maxWords) close();
    // Still too long with the carried overlap: drop the overlap rather than exceed the maximum.
    if (words + span.words > options.maxWords) {
      current = [];
      words = 0;
    }
    current.push(span);
    words += span.words;
    fresh++;
  }
  // A short tail joins the passage before it when both fit together.
  if (fresh > 0 && out.length > 0 && words - overlapOf(current, fresh) < options.minWords / 3) {
    const previous = out[out.length - 1]!;
    const tailEnd = current[current.length - 1]!.end;
    if (countWords(text.slice(previous.start, tailEnd)) <= options.maxWords) {
      previous.end = tailEnd;
      return out;
    }
  }
  close();
  return out;
}

function overlapOf(current: Span[], fresh: number): number {
  return current.slice(0, current.length - fresh).reduce((sum, s) => sum + s.words, 0);
}

/**
 * The passages of an item's text, in order. With `pages` (a PDF: each page's range of the text,
 * as the document handler writes them), passages never cross a page and carry its number.
 */
export function splitPassages(
  text: string,
  pages?: PageRange[] | null,
  options: PassageOptions = DEFAULT_PASSAGE_OPTIONS,
): Passage[] {
  const ranges: Array<{ start: number; end: number; page?: number }> = [];
  const located = pages ? checkedPages(text, pages) : undefined;
  if (located) {
    for (const { page, start, end } of located) {
      for (const r of group(text, sentences(text, start, end), options)) ranges.push({ ...r, page });
    }
  } else {
    ranges.push(...group(text, sentences(text, 0, text.length), options));
  }
  return ranges.map((r, ordinal) => ({
    ordinal,
    kind: 'passage',
    text: text.slice(r.start, r.end),
    start: r.start,
    end: r.end,
    ...(r.page !== undefined ? { page: r.page } : {}),
  }));
}

/** The pages' ranges that hold text, or undefined when they do not fit the text (then they are ignored rather than trusted). */
function checkedPages(text: string, pages: PageRange[]): PageRange[] | undefined {
  const located = pages.filter((p) => p.end > p.start);
  let offset = 0;
  for (const { start, end } of located) {
    if (start < offset || end > text.length) return undefined;
    offset = end;
  }
  return located.length > 0 ? located : undefined;
}
