/**
 * What makes a PDF a research paper, and its identifiers: one rule for ingest (which gives a
 * paper its identity, seed §4.5) and the pipelines (which read its header and references).
 */

/** A DOI as written; its trailing sentence punctuation is cut by `trimIdentifier`. */
export const DOI_PATTERN = /\b10\.\d{4,9}\/[^\s"'`]+/g;

/** `arXiv:2101.00001v2`, `arxiv.org/abs/…`, CoRR's `abs/2101.00001`, old-style `hep-th/9901001` after a prefix. */
export const ARXIV_PATTERN =
  /(?:\barXiv:\s?|arxiv\.org\/(?:abs|pdf)\/|\bCoRR,? abs\/)(\d{4}\.\d{4,5}(?:v\d+)?|[a-z-]+(?:\.[A-Z]{2})?\/\d{7}(?:v\d+)?)/gi;

/** A references section's heading, on a line of its own (numbered or not). */
export const REFERENCES_HEADING =
  /^(?:(?:\d{1,2}|[IVX]{1,4})\.?\s+)?(?:references(?: and notes)?|bibliography|references cited|works cited|literature cited|références|literatur(?:verzeichnis)?|referencias|riferimenti bibliografici)\s*:?$/i;

/** A URL's or identifier's trailing punctuation belongs to the sentence, and so does an unmatched closing bracket. */
export function trimIdentifier(text: string): string {
  let out = text.replace(/[.,;:!?'"]+$/, '');
  for (const [open, close] of [
    ['(', ')'],
    ['[', ']'],
    ['<', '>'],
  ] as const) {
    while (out.endsWith(close) && out.split(open).length < out.split(close).length)
      out = out.slice(0, -1).replace(/[.,;:!?]+$/, '');
  }
  return out;
}

/** An arXiv id without its version: two versions of a paper are one paper. */
export function arxivBase(id: string): string {
  return id.replace(/v\d+$/i, '');
}

export interface PaperIds {
  /** Lowercased. */
  doi: string | null;
  /** Without `arXiv:` and without a version. */
  arxiv: string | null;
}

/**
 * A paper's own identifiers: from the document information (a `doi` entry, or a DOI in Subject or
 * Keywords), else from its first page before any references heading — arXiv's stamp
 * (`arXiv:2103.15348v2 [cs.CV] 21 Jun 2021`) or the first arXiv id, and the first DOI.
 */
export function paperIdsOf(firstPage: string, info: Record<string, string>): PaperIds {
  const fromInfo = [info['doi'], info['DOI'], info['Subject'], info['Keywords']].filter(Boolean).join(' ');
  const head = firstPage.split('\n');
  const cut = head.findIndex((line) => REFERENCES_HEADING.test(line.trim()));
  const page = (cut >= 0 ? head.slice(0, cut) : head).join('\n');
  const doi = first(DOI_PATTERN, fromInfo) ?? first(DOI_PATTERN, page);
  const stamp = /\barXiv:(\d{4}\.\d{4,5}(?:v\d+)?)\s*\[[a-z-]+(?:\.[A-Za-z]{2})?\]/i.exec(page)?.[1];
  const arxiv = stamp ?? first(ARXIV_PATTERN, page, 1);
  return { doi: doi ? trimIdentifier(doi).toLowerCase() : null, arxiv: arxiv ? arxivBase(arxiv) : null };
}

/** Whether the text has a references section: its heading on a line of its own, past the first page. */
export function hasReferencesSection(text: string, firstPageEnd: number): boolean {
  let at = 0;
  for (const line of text.split('\n')) {
    if (at >= firstPageEnd && REFERENCES_HEADING.test(line.trim())) return true;
    at += line.length + 1;
  }
  return false;
}

function first(pattern: RegExp, text: string, group = 0): string | undefined {
  for (const m of text.matchAll(pattern)) return m[group];
  return undefined;
}
