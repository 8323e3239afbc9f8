import type { PageRange } from '@memex/contracts';

/** A line of the item's text with its offset, and the PDF page it is on. */
export interface Line {
  text: string;
  start: number;
  page: number | null;
}

/** The text's lines with their offsets (trimmed lines; the offset is of the trimmed text). */
export function linesOf(text: string, pages: PageRange[] | null): Line[] {
  const out: Line[] = [];
  let at = 0;
  for (const raw of text.split('\n')) {
    const lead = raw.length - raw.trimStart().length;
    const start = at + lead;
    const page = pages?.find((p) => p.start <= start && start < Math.max(p.end, p.start + 1))?.page ?? null;
    out.push({ text: raw.trim(), start, page });
    at += raw.length + 1;
  }
  return out;
}

/** A line that only a page adds: a page number, or a running header like `2 Z. Shen et al.`. */
export function isPageFurniture(line: string): boolean {
  return /^\d{1,4}$/.test(line) || /^(?:\d{1,4}\s+)?[\p{Lu}][\p{L}.\s-]{0,40} et al\.(?:\s+\d{1,4})?$/u.test(line);
}

/**
 * Lines repeated at the top of several pages (a running title): what a page break puts in the
 * middle of a section.
 */
export function runningHeaders(lines: Line[]): Set<string> {
  const firsts = new Map<string, Set<number>>();
  let lastPage: number | null = null;
  for (const line of lines) {
    if (line.page === null || line.page === lastPage || line.text === '') continue;
    lastPage = line.page;
    const pages = firsts.get(line.text) ?? new Set<number>();
    pages.add(line.page);
    firsts.set(line.text, pages);
  }
  return new Set([...firsts].filter(([, pages]) => pages.size >= 2).map(([text]) => text));
}

/**
 * Names split out of an author list, footnote marks and symbols dropped: `Aligon, J., P. Marcel,
 * et E. Negre` → `J. Aligon`, `P. Marcel`, `E. Negre`.
 */
export function splitAuthors(list: string): string[] {
  const pieces = list
    .replace(/\bet al\.?/g, '')
    .split(/\s*,\s*(?:and|et|&|und|y)\s+|\s+(?:and|et|&|und|y)\s+|\s*[,;]\s*/u)
    .map((p) =>
      p
        .replace(/[^\p{L}\s.'’-]+/gu, ' ')
        .replace(/\s+/g, ' ')
        .trim(),
    )
    .filter((p) => p !== '');
  const names: string[] = [];
  for (const piece of pieces) {
    // `Surname, I.`: the initials follow the surname they belong to.
    if (/^(?:\p{Lu}\.\s?-?)+$/u.test(piece) && names.length > 0 && !names[names.length - 1]!.includes(' '))
      names[names.length - 1] = `${piece.replace(/\s+/g, ' ')} ${names[names.length - 1]}`;
    else names.push(piece);
  }
  return names.filter((n) => /\p{L}{2}/u.test(n) && n.length <= 80);
}

/** Whether a line reads as a list of names (an author line), not prose or an affiliation. */
export function looksLikeNames(line: string): boolean {
  if (
    /@|(?<!\p{L})(?:university|université|universität|universidad|institute|institut|department|laboratory|laboratoire|school|college|inc|ltd|gmbh|research|center|centre)(?!\p{L})/iu.test(
      line,
    )
  )
    return false;
  const names = splitAuthors(line);
  if (names.length === 0) return false;
  // One name alone is two or three words ("Learning Based Document Image Analysis" is a title line).
  if (names.length === 1 && !/^\S+(?:\s\S+){1,2}$/.test(names[0]!)) return false;
  return names.every(
    (name) =>
      name.split(' ').length <= 5 &&
      /^(?:[\p{Lu}][\p{L}'’.-]*\.?\s)+(?:(?:van|von|de|der|da|di|du|la|le)\s)*[\p{Lu}][\p{L}'’-]+$/u.test(name),
  );
}
