import {
  ARXIV_PATTERN,
  arxivBase,
  DOI_PATTERN,
  REFERENCES_HEADING,
  trimIdentifier,
  type PaperReference,
} from '@memex/contracts';
import { isPageFurniture, runningHeaders, splitAuthors, type Line } from './text.js';

/** Where a reference list ends: the next section after it. */
const AFTER_REFERENCES =
  /^(?:[A-Z](?:\.\d+)*\.?\s+)?(?:appendix|appendices|supplementary(?: material)?|summary|acknowledge?ments?|annexe?)\b/i;
const BRACKETED = /^\[(\d{1,4})\]\s*/;
const NUMBERED = /^(\d{1,4})\.?\s+(?=\S)/;
/** A year as references print it (`2019`, `2010a`), not part of a number, a DOI or a page range. */
const YEAR = /(?<![\d./:–-])((?:19|20)\d{2})([a-z]?)(?![\d/–-])/g;

type Style = 'bracketed' | 'numbered' | 'author-year';

/**
 * A paper's reference list, read with rules: the last references heading, the entries after it
 * (numbered `[12]`, numbered `12.`, or author–year, told apart by how the lines start), each with
 * its span, page, and what can be read out of it: DOI, arXiv id, year, authors and title.
 */
export function referencesIn(lines: Line[]): PaperReference[] {
  const heading = lines.findLastIndex((line) => REFERENCES_HEADING.test(line.text));
  if (heading < 0) return [];
  const furniture = runningHeaders(lines);
  const body: Line[] = [];
  for (const line of lines.slice(heading + 1)) {
    if (AFTER_REFERENCES.test(line.text) && line.text.split(' ').length <= 6) break;
    if (line.text === '' || isPageFurniture(line.text) || furniture.has(line.text)) continue;
    body.push(line);
  }
  const style = styleOf(body);
  return entries(body, style).map((entry, ordinal) => parseEntry(entry, ordinal, style));
}

function styleOf(body: Line[]): Style {
  const bracketed = body.filter((l) => BRACKETED.test(l.text)).length;
  if (bracketed >= Math.max(2, body.length / 8)) return 'bracketed';
  let expected = 1;
  for (const line of body) if (NUMBERED.exec(line.text)?.[1] === String(expected)) expected++;
  return expected > 3 ? 'numbered' : 'author-year';
}

/** The lines of each entry. */
function entries(body: Line[], style: Style): Line[][] {
  const out: Line[][] = [];
  let expected = 1;
  body.forEach((line, i) => {
    let starts: boolean;
    if (style === 'bracketed') starts = BRACKETED.test(line.text);
    else if (style === 'numbered') {
      starts = NUMBERED.exec(line.text)?.[1] === String(expected);
      if (starts) expected++;
    } else starts = out.length === 0 || startsAuthorYear(line, body[i - 1]!, body.slice(i, i + 4));
    if (starts || out.length === 0) out.push([line]);
    else out[out.length - 1]!.push(line);
  });
  return out;
}

/**
 * Whether a line starts an author–year entry: the previous line ended a sentence, and the text
 * from here to the year is only names (`Golfarelli, M. (2003)`, `Shunyu Yao, Jeffrey Zhao, and
 * Yuan Cao. 2022.`), with a comma or a year in brackets among them.
 */
function startsAuthorYear(line: Line, previous: Line, next: Line[]): boolean {
  if (!/[.)]$|\S+\.\S+$/.test(previous.text) || !/^[\p{Lu}]/u.test(line.text)) return false;
  const ahead = joinLines(next.map((l) => l.text));
  const year = /^([\p{L}\s,.'’&-]{2,500}?)(?:\(\s*((?:19|20)\d{2})[a-z]?\s*\)|\.\s((?:19|20)\d{2})[a-z]?\.)/u.exec(
    ahead,
  );
  if (!year) return false;
  const names = year[1]!;
  return (
    (year[2] !== undefined || /,| and | & /.test(names)) &&
    !/^(?:In|The|Proceedings|Journal|Springer|IEEE|ACM)\b/.test(names)
  );
}

/** Lines joined as one text: a hyphen ending a line before a lowercase word was a line break. */
function joinLines(texts: string[]): string {
  return texts.reduce((out, text) => {
    if (out === '') return text;
    if (/\p{L}-$/u.test(out) && /^\p{Ll}/u.test(text)) return out.slice(0, -1) + text;
    return `${out} ${text}`;
  }, '');
}

function parseEntry(lines: Line[], ordinal: number, style: Style): PaperReference {
  const first = lines[0]!;
  const last = lines[lines.length - 1]!;
  let text = joinLines(lines.map((l) => l.text));
  let label: string | null = null;
  const number = (style === 'bracketed' ? BRACKETED : style === 'numbered' ? NUMBERED : null)?.exec(text);
  if (number) {
    label = number[1]!;
    text = text.slice(number[0].length);
  }
  const doi = DOI_PATTERN.exec(text);
  DOI_PATTERN.lastIndex = 0;
  const arxiv = new RegExp(ARXIV_PATTERN.source, 'i').exec(text)?.[1];
  const fields = fieldsOf(text);
  if (!label && fields.authors.length > 0 && fields.year)
    label = `${surname(fields.authors[0]!)}${fields.authors.length > 2 ? ' et al.' : fields.authors.length === 2 ? ` and ${surname(fields.authors[1]!)}` : ''}, ${fields.yearText}`;
  return {
    ordinal,
    label,
    text: joinLines(lines.map((l) => l.text)).slice(0, 2000),
    page: first.page,
    start: first.start,
    end: last.start + last.text.length,
    title: fields.title,
    authors: fields.authors,
    year: fields.year,
    doi: doi ? trimIdentifier(doi[0]).toLowerCase() : null,
    arxiv: arxiv ? arxivBase(arxiv) : null,
  };
}

interface Fields {
  title: string | null;
  authors: string[];
  year: number | null;
  /** The year as printed, with its letter (`2010a`). */
  yearText: string | null;
}

/** Authors, year and title by the layout the entry has. */
export function fieldsOf(text: string): Fields {
  // Author–year: `Aligon, J., P. Marcel, et E. Negre (2010a). A framework for…`
  const parenthesized = /^(.{2,600}?)\s*\(((?:19|20)\d{2})([a-z]?)\)[.,:]?\s+(.*)$/su.exec(text);
  if (parenthesized && namesOnly(parenthesized[1]!))
    return result(parenthesized[1]!, firstSentence(parenthesized[4]!), parenthesized[2]!, parenthesized[3]!);
  // ACL / ACM: `Shunyu Yao, …, and Yuan Cao. 2022. ReAct: …`
  const dotted = /^(.{2,600}?)\.\s+((?:19|20)\d{2})([a-z]?)\.\s+(.*)$/su.exec(text);
  if (dotted && namesOnly(dotted[1]!)) return result(dotted[1]!, firstSentence(dotted[4]!), dotted[2]!, dotted[3]!);
  const [year, letter] = lastYear(text);
  // IEEE: `A. Author, B. Author, and C. Author, "Title," in …`
  const quoted = /^(.{2,600}?),?\s*[“"](.{4,500}?)[,.]?[”"]/su.exec(text);
  if (quoted && namesOnly(quoted[1]!)) return result(quoted[1]!, quoted[2]!.replace(/[,.]$/, ''), year, letter);
  // Springer LNCS: `Abadi, M., Agarwal, A.: Title. Venue (2016)`
  const colon = /^(.{2,600}?):\s+(.*)$/su.exec(text);
  if (colon && namesOnly(colon[1]!)) return result(colon[1]!, firstSentence(colon[2]!), year, letter);
  // `Authors. Title. Venue, year.`
  const sentences = sentencesOf(text);
  if (sentences.length >= 2 && namesOnly(sentences[0]!)) return result(sentences[0]!, sentences[1]!, year, letter);
  return { title: null, authors: [], year: year ? Number(year) : null, yearText: year ? `${year}${letter}` : null };
}

function result(authors: string, title: string | null, year: string | null, letter: string): Fields {
  return {
    title: title && title.length >= 4 ? title : null,
    authors: splitAuthors(authors),
    year: year ? Number(year) : null,
    yearText: year ? `${year}${letter}` : null,
  };
}

/** An author list: names, initials, commas and `and`, nothing else. */
function namesOnly(text: string): boolean {
  return /^[\p{L}\s,.'’&-]+$/u.test(text) && splitAuthors(text).length > 0 && !/\b(?:In|Proc|Proceedings)\b/.test(text);
}

/** The last year the entry prints outside its identifiers. */
function lastYear(text: string): [string | null, string] {
  const plain = text
    .replace(DOI_PATTERN, ' ')
    .replace(ARXIV_PATTERN, ' ')
    .replace(/https?:\/\/\S+/g, ' ');
  const all = [...plain.matchAll(YEAR)];
  const found = all[all.length - 1];
  return found ? [found[1]!, found[2] ?? ''] : [null, ''];
}

/** Sentences, cut at `. `, `? `, `! ` unless the period ends an initial or an abbreviation. */
function sentencesOf(text: string): string[] {
  const out: string[] = [];
  let from = 0;
  for (const m of text.matchAll(/([.?!])\s+/g)) {
    const before = text.slice(from, m.index! + 1);
    if (m[1] === '.' && /(?:^|[\s.(-])(?:\p{Lu}|al|pp|vol|no|eds?|proc|ed|Jr|Sr|St|Inc|et)\.$/iu.test(before)) continue;
    out.push(text.slice(from, m[1] === '.' ? m.index : m.index! + 1).trim());
    from = m.index! + m[0].length;
  }
  const rest = text.slice(from).trim();
  if (rest) out.push(rest.replace(/\.$/, ''));
  return out.filter((s) => s !== '');
}

function firstSentence(text: string): string | null {
  return sentencesOf(text)[0] ?? null;
}

function surname(name: string): string {
  return name.split(' ').pop()!;
}
