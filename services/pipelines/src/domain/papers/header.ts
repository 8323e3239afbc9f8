import { REFERENCES_HEADING, type PaperHeader, type PaperIds } from '@memex/contracts';
import { looksLikeNames, splitAuthors, type Line } from './text.js';

const ARXIV_STAMP =
  /^arXiv:\d{4}\.\d{4,5}(?:v\d+)?\s*\[([a-z-]+(?:\.[A-Za-z]{2})?)\]\s*(?:\d{1,2}\s+\p{L}{3,}\s+(\d{4}))?/u;
const VENUE =
  /\b(?:Proceedings|Proc\.|Conference|Journal|Transactions|Workshop|Symposium|Letters|Review|Annals|Preprint)\b/;
const ABSTRACT = /^(?:abstract|résumé|zusammenfassung|summary)(?!\p{L})\s*[.:—–-]?\s*/iu;
const AFTER_ABSTRACT =
  /^(?:keywords|key words|index terms|mots[- ]clés|ccs concepts|(?:1|I)\.?\s+introduction|introduction)\b/i;
/** A line on a paper's first page that is not its title: a stamp, a licence, a venue header. */
const NOT_TITLE = /^(?:arXiv:|preprint|under review|accepted|published|©|copyright|https?:\/\/|doi:|\d+$)/i;

/**
 * A paper's header read from its first page: the title (the document information's, when it is
 * a real one, else the first lines), the authors (the lines of names under it, or the
 * information's Author), the abstract, the venue line, the year (arXiv's stamp, a venue line,
 * the PDF's date) and its identifiers.
 */
export function paperHeaderOf(
  firstPage: Line[],
  info: Record<string, string>,
  ids: PaperIds,
  fallback: { title: string; year: number | null },
): PaperHeader {
  const lines = firstPage.filter((l) => l.text !== '');
  const stamp = lines.map((l) => ARXIV_STAMP.exec(l.text)).find((m) => m);
  const body = lines.filter((l) => !ARXIV_STAMP.test(l.text));
  const top = body.findIndex((l) => !NOT_TITLE.test(l.text) && !(VENUE.test(l.text) && /\d/.test(l.text)));
  const titleLines: string[] = [];
  let i = Math.max(top, 0);
  for (; i < body.length && titleLines.length < 3; i++) {
    const text = body[i]!.text;
    if (titleLines.length > 0 && (looksLikeNames(text) || ABSTRACT.test(text) || /[.:]$/.test(text) || text.length < 3))
      break;
    titleLines.push(text);
  }
  let authorBlock = '';
  for (; i < body.length; i++) {
    const joined = authorBlock ? `${authorBlock} ${body[i]!.text}` : body[i]!.text;
    if (!looksLikeNames(joined)) break;
    authorBlock = joined;
  }
  const infoTitle = plausibleInfo(info['Title']);
  const title = infoTitle ?? (titleLines.join(' ').replace(/\s+/g, ' ').trim() || fallback.title);
  const infoAuthors = plausibleInfo(info['Author']);
  const authors = infoAuthors ? splitAuthors(infoAuthors) : splitAuthors(authorBlock);
  const venueLine = body.find((l) => VENUE.test(l.text) && l.text.length < 200 && !titleLines.includes(l.text));
  const venue = venueLine?.text ?? (stamp ? `arXiv (${stamp[1]})` : null);
  return {
    title: title.slice(0, 1000),
    authors,
    venue,
    year: yearOf(stamp?.[2], venueLine?.text, ids, fallback.year),
    abstract: abstractOf(body),
    doi: ids.doi,
    arxiv: ids.arxiv,
  };
}

/** The information dictionary's Title or Author when it says something (not a file name or a tool's default). */
function plausibleInfo(value: string | undefined): string | null {
  const text = value?.trim();
  if (!text || text.length < 4 || /\.(?:dvi|pdf|tex|docx?)$|^(?:untitled|microsoft word|author|title)\b/i.test(text))
    return null;
  return text;
}

function abstractOf(body: Line[]): string | null {
  const start = body.findIndex((l) => ABSTRACT.test(l.text));
  if (start < 0) return null;
  const parts = [body[start]!.text.replace(ABSTRACT, '')];
  for (const line of body.slice(start + 1)) {
    if (AFTER_ABSTRACT.test(line.text) || REFERENCES_HEADING.test(line.text)) break;
    parts.push(line.text);
  }
  const text = parts
    .filter((p) => p !== '')
    .reduce(
      (out, p) => (out === '' ? p : /\p{L}-$/u.test(out) && /^\p{Ll}/u.test(p) ? out.slice(0, -1) + p : `${out} ${p}`),
      '',
    );
  return text === '' ? null : text.slice(0, 10_000);
}

function yearOf(
  stampYear: string | undefined,
  venue: string | undefined,
  ids: PaperIds,
  fallback: number | null,
): number | null {
  if (stampYear) return Number(stampYear);
  const inVenue = venue ? /\b((?:19|20)\d{2})\b/.exec(venue)?.[1] : undefined;
  if (inVenue) return Number(inVenue);
  // New-style arXiv ids begin with the year and month they were submitted.
  const yymm = ids.arxiv ? /^(\d{2})(\d{2})\./.exec(ids.arxiv) : null;
  if (yymm) return 2000 + Number(yymm[1]);
  return fallback;
}
