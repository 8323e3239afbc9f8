import type { PageRange } from '@memex/contracts';

/**
 * Research papers written from scratch for tests and the bench (no third-party text): a set that
 * cites itself and outside works in four reference styles, as lines per PDF page, with the truth
 * of what each reference points at.
 */

export type ReferenceStyle = 'ieee' | 'lncs' | 'acl' | 'apa';

export interface GeneratedPaper {
  title: string;
  authors: string[];
  year: number;
  venue: string;
  arxiv: string | null;
  doi: string | null;
  abstract: string;
  style: ReferenceStyle;
  /** Each reference in order: the index of the generated paper it cites, or null (an outside work). */
  references: Array<{ cites: number | null; title: string; year: number }>;
  /** The PDF's text: lines per page. */
  pages: string[][];
}

const FIRST = ['Ada', 'Bruno', 'Chiara', 'Dmitri', 'Elena', 'Farid', 'Grace', 'Hiro', 'Ines', 'Jonas', 'Keiko', 'Lars'];
const LAST = [
  'Moreau',
  'Okafor',
  'Lindqvist',
  'Haddad',
  'Novak',
  'Tanaka',
  'Ferreira',
  'Kowalski',
  'Brennan',
  'Castillo',
  'Vasquez',
  'Nakamura',
];
const METHOD = [
  'Sparse',
  'Contrastive',
  'Hierarchical',
  'Probabilistic',
  'Incremental',
  'Federated',
  'Causal',
  'Spectral',
  'Adaptive',
  'Robust',
];
const OBJECT = [
  'Attention',
  'Retrieval',
  'Graph Embeddings',
  'Transformers',
  'Indexing',
  'Clustering',
  'Summarization',
  'Segmentation',
];
const TASK = [
  'Document Layout Analysis',
  'Citation Recommendation',
  'Entity Linking',
  'Table Extraction',
  'Question Answering',
  'Mail Triage',
  'Code Search',
  'Speech Recognition',
];
const VENUES = ['NeurIPS', 'ICML', 'ACL', 'EMNLP', 'SIGIR', 'KDD', 'CVPR', 'ICDAR'];

/** A small deterministic generator (the same seed writes the same papers). */
function random(seed: number): () => number {
  let state = seed >>> 0 || 1;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

/**
 * `count` papers (at least 4); each cites up to five earlier ones (by arXiv id, DOI, or only its
 * title — some titles altered as real reference lists alter them) and two outside works.
 */
export function generatedPapers(count = 8, seed = 7): GeneratedPaper[] {
  const rand = random(seed);
  const pick = <T>(list: T[]) => list[Math.floor(rand() * list.length)]!;
  const styles: ReferenceStyle[] = ['ieee', 'lncs', 'acl', 'apa'];
  const papers: GeneratedPaper[] = [];
  const usedTitles = new Set<string>();
  for (let i = 0; i < count; i++) {
    let title: string;
    do title = `${pick(METHOD)} ${pick(OBJECT)} for ${pick(TASK)}`;
    while (usedTitles.has(title));
    usedTitles.add(title);
    const year = 2000 + (i % 25);
    const authors = Array.from(
      { length: 2 + (i % 3) },
      (_, k) => `${FIRST[(i * 3 + k) % FIRST.length]} ${LAST[(i * 5 + k * 7) % LAST.length]}`,
    );
    const arxiv =
      i % 3 !== 2
        ? `${String(year % 100).padStart(2, '0')}${String(1 + (i % 12)).padStart(2, '0')}.${String(10000 + i * 137).slice(-5)}`
        : null;
    const doi = i % 2 === 0 ? `10.${5000 + i}/memex.${year}.${100 + i}` : null;
    const venue = pick(VENUES);
    const abstract = `We study ${title.toLowerCase()} and show that a simple baseline, carefully tuned, matches far larger systems on three benchmarks while using a fraction of the compute.`;
    const cited = papers
      .map((_, j) => j)
      .filter(() => rand() < 0.6)
      .slice(-5);
    const references: GeneratedPaper['references'] = [];
    const style = styles[i % styles.length]!;
    const entries: string[][] = [];
    const refFor = (work: Work) => entries.push(formatReference(work, style, entries.length + 1));
    for (const j of cited) {
      const target = papers[j]!;
      // One in three is cited by title only, and one of those with its title as a list alters it.
      const how = (i + j) % 3;
      const work: Work = {
        title: how === 2 && j % 2 === 0 ? alterTitle(target.title) : target.title,
        authors: target.authors,
        year: target.year,
        venue: target.venue,
        arxiv: how === 0 ? target.arxiv : null,
        doi: how === 1 ? target.doi : null,
      };
      references.push({ cites: j, title: target.title, year: target.year });
      refFor(work);
    }
    for (let k = 0; k < 2; k++) {
      const work: Work = {
        title: `On the ${pick(['Limits', 'Stability', 'Complexity', 'Evaluation'])} of ${pick(OBJECT)} in ${pick(TASK)} ${k === 0 ? 'Systems' : 'Pipelines'}`,
        authors: [`${pick(FIRST)} ${pick(LAST)}`, `${pick(FIRST)} ${pick(LAST)}`],
        year: 2005 + Math.floor(rand() * 10),
        venue: pick(VENUES),
        arxiv: null,
        doi: k === 0 ? `10.${9000 + i}/outside.${k}` : null,
      };
      references.push({ cites: null, title: work.title, year: work.year });
      refFor(work);
    }
    // Author–year lists are alphabetical by first author; numbered ones keep citation order.
    if (style === 'acl' || style === 'apa') {
      const order = entries.map((_, k) => k).sort((a, b) => entries[a]![0]!.localeCompare(entries[b]![0]!));
      const sortedEntries = order.map((k) => entries[k]!);
      const sortedRefs = order.map((k) => references[k]!);
      entries.splice(0, entries.length, ...sortedEntries);
      references.splice(0, references.length, ...sortedRefs);
    }
    const header = [
      ...(arxiv ? [`arXiv:${arxiv}v${1 + (i % 2)} [cs.LG] 12 Mar ${year}`] : []),
      ...wrap(title, 48),
      authors.map((a, k) => `${a}${k + 1}`).join(', '),
      ...authors.map(
        (_, k) => `${k + 1} ${pick(['University of Utrecht', 'Institute of Science Tokyo', 'Acme Research Labs'])}`,
      ),
      `Published in Proceedings of ${venue} ${year}`,
      ...(doi ? [`DOI: ${doi}`] : []),
      'Abstract',
      ...wrap(abstract, 80),
      '1 Introduction',
      ...wrap(
        `Earlier work [1] framed ${title.toLowerCase()} as ranking. We revisit that view and report what holds up.`,
        80,
      ),
    ];
    const refLines = ['References', ...entries.flat()];
    const pages = [header, ...chunk(refLines, 44)];
    papers.push({ title, authors, year, venue, arxiv, doi, abstract, style, references, pages });
  }
  return papers;
}

interface Work {
  title: string;
  authors: string[];
  year: number;
  venue: string;
  arxiv: string | null;
  doi: string | null;
}

/** As reference lists alter titles: case folded, a subtitle word dropped, a word misspelt. */
function alterTitle(title: string): string {
  const words = title.split(' ');
  words[0] = words[0]!.toLowerCase();
  return words
    .map((w) => (w === 'Recognition' ? 'Recogniton' : w))
    .join(' ')
    .replace(' for ', ' for the ');
}

function initials(name: string): string {
  const [first, ...rest] = name.split(' ');
  return `${first![0]}. ${rest.join(' ')}`;
}

/** `Ada Moreau` → `Moreau, A.` */
function surnameFirst(name: string): string {
  const [first, ...rest] = name.split(' ');
  return `${rest.join(' ')}, ${first![0]}.`;
}

/** A paper's pages as ingest keeps a PDF's text: joined by blank lines, each page's range in the meta. */
export function pdfText(pages: string[][]): { text: string; pages: PageRange[] } {
  let text = '';
  const ranges = pages.map((lines, i) => {
    if (i > 0) text += '\n\n';
    const start = text.length;
    text += lines.join('\n');
    return { page: i + 1, start, end: text.length };
  });
  return { text, pages: ranges };
}

function formatReference(work: Work, style: ReferenceStyle, n: number): string[] {
  const ids = [work.doi ? `doi:${work.doi}` : '', work.arxiv ? `arXiv:${work.arxiv}` : ''].filter(Boolean).join(' ');
  let text: string;
  switch (style) {
    case 'ieee': {
      const names = work.authors.map(initials);
      const list = names.length > 2 ? `${names.slice(0, -1).join(', ')}, and ${names.at(-1)}` : names.join(' and ');
      text = `[${n}] ${list}, "${work.title}," in Proc. ${work.venue}, ${work.year}, pp. ${n * 11}-${n * 11 + 9}.${ids ? ` ${ids}` : ''}`;
      break;
    }
    case 'lncs': {
      const list = work.authors.map(surnameFirst).join(', ');
      text = `${n}. ${list}: ${work.title}. In: ${work.venue}. pp. ${n * 7}-${n * 7 + 12}. Springer (${work.year})${ids ? ` ${ids}` : ''}`;
      break;
    }
    case 'acl': {
      const list =
        work.authors.length > 2
          ? `${work.authors.slice(0, -1).join(', ')}, and ${work.authors.at(-1)}`
          : work.authors.join(' and ');
      text = `${list}. ${work.year}. ${work.title}. In Proceedings of ${work.venue}, pages ${n * 5}-${n * 5 + 8}.${ids ? ` ${ids}` : ''}`;
      break;
    }
    case 'apa': {
      const list = work.authors
        .map(surnameFirst)
        .join(', ')
        .replace(/, ([^,]+, \S+)$/, ', & $1');
      text = `${list} (${work.year}). ${work.title}. ${work.venue}, ${n}(2), ${n * 3}-${n * 3 + 20}.${work.doi ? ` https://doi.org/${work.doi}` : ''}${work.arxiv ? ` arXiv:${work.arxiv}` : ''}`;
      break;
    }
  }
  return wrap(text, 84);
}

/** Lines of at most `width` characters; a long word at a break is hyphenated as TeX would. */
function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ')) {
    if (line && line.length + 1 + word.length > width) {
      if (word.length > 9 && /^[a-z]+$/.test(word) && width - line.length > 5) {
        const cut = width - line.length - 2;
        lines.push(`${line} ${word.slice(0, cut)}-`);
        line = word.slice(cut);
        continue;
      }
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  if (line) lines.push(line);
  return lines;
}

function chunk<T>(list: T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < list.length; i += size) out.push(list.slice(i, i + size));
  return out;
}
