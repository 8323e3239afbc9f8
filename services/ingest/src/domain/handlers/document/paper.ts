import { hasReferencesSection, paperIdsOf, type PaperIds } from '@memex/contracts';
import type { PdfFields } from '../handler.js';

/**
 * Whether a PDF is a research paper (seed §4.5's paper handler): it names its own DOI or arXiv id
 * (document information, first page) or has a references section. Its identity is then the
 * arXiv id, else the DOI, else (a paper without either) the content hash like any document:
 * arXiv's versions of a paper and copies from two places are one item. The arXiv id comes first
 * because every arXiv version carries it, while only some state the DOI a journal gave later.
 */
export function paperOf(
  fields: PdfFields,
  text: string,
): { ids: PaperIds; identity: string | null; aliases: string[] } | null {
  const firstPage = fields.pages[0]?.text ?? '';
  const ids = paperIdsOf(firstPage, fields.info);
  if (!ids.doi && !ids.arxiv && !hasReferencesSection(text, firstPage.length)) return null;
  const identity = ids.arxiv ? `arxiv:${ids.arxiv}` : ids.doi ? `doi:${ids.doi}` : null;
  // An arXiv version naming its DOI is also the journal's copy: that DOI is an alias.
  return { ids, identity, aliases: ids.arxiv && ids.doi ? [`doi:${ids.doi}`] : [] };
}
