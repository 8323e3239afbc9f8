import {
  hasReferencesSection,
  paperIdsOf,
  type PageRange,
  type PaperHeader,
  type PaperReference,
} from '@memex/contracts';
import { paperHeaderOf } from './header.js';
import { referencesIn } from './references.js';
import { linesOf } from './text.js';

/** The rules' version: bump it when they change, so a re-run's output is told apart. */
export const PAPER_RULES = 'papers@1';

export interface PaperReading {
  paper: PaperHeader | null;
  references: PaperReference[];
}

/**
 * A PDF read as a paper (contracts' rule, the one ingest gives it its identity by): its header
 * from the first page and its reference list; `paper: null` and no references when it is not one.
 */
export function readPaper(
  text: string,
  pages: PageRange[],
  info: Record<string, string>,
  fallback: { title: string; year: number | null },
): PaperReading {
  const firstPageEnd = pages[0]?.end ?? text.length;
  const ids = paperIdsOf(text.slice(0, firstPageEnd), info);
  if (!ids.doi && !ids.arxiv && !hasReferencesSection(text, firstPageEnd)) return { paper: null, references: [] };
  const lines = linesOf(text, pages);
  const firstPage = lines.filter((line) => line.start < firstPageEnd);
  return { paper: paperHeaderOf(firstPage, info, ids, fallback), references: referencesIn(lines) };
}
