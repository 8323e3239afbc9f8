import { RejectedItem, type OfficeFields } from '../handler.js';
import { decodeText } from '../text.js';
import type { FormatResult } from './format.js';

/** The type mime-db gives `.ipynb`. */
export const NOTEBOOK_TYPE = 'application/x-ipynb+json';

/** More of one cell's output than this is a table or a log, not words to find the notebook by. */
const OUTPUT_CHARS = 2_000;

interface Cell {
  cell_type?: unknown;
  /** nbformat 4 (and 3's markdown cells): a string or its lines. */
  source?: unknown;
  /** nbformat 3's code cells. */
  input?: unknown;
  outputs?: unknown;
}

/** A cell's source: nbformat keeps it as one string or as lines that carry their own newlines. */
function joined(value: unknown): string {
  if (typeof value === 'string') return value;
  return Array.isArray(value) ? value.filter((line) => typeof line === 'string').join('') : '';
}

/** The text a code cell printed or returned (streams, `text/plain` results, errors), images left out. */
function outputText(outputs: unknown): string {
  if (!Array.isArray(outputs)) return '';
  const texts = outputs.map((output: Record<string, unknown> | null) => {
    if (!output || typeof output !== 'object') return '';
    const data = output['data'] as Record<string, unknown> | undefined;
    // nbformat 3 kept a result's text under `text`, 4 under `data['text/plain']`.
    const text = joined(output['text']) || joined(data?.['text/plain']);
    const error = output['output_type'] === 'error' ? `${joined(output['ename'])}: ${joined(output['evalue'])}` : '';
    return (text || error).trim().slice(0, OUTPUT_CHARS);
  });
  return texts.filter(Boolean).join('\n');
}

/**
 * A Jupyter notebook (nbformat 3 or 4): its Markdown cells as written, its code cells as fenced
 * blocks in the notebook's language, and what each printed, in order. Title: the notebook's own
 * metadata title, else its first heading.
 */
export function parseNotebook(bytes: Buffer): FormatResult<OfficeFields> {
  let notebook: Record<string, unknown>;
  try {
    notebook = JSON.parse(decodeText(bytes, null).text.replace(/^\uFEFF/, '')) as Record<string, unknown>;
  } catch (error) {
    throw new RejectedItem(`not a Jupyter notebook: its JSON does not parse (${(error as Error).message})`);
  }
  const worksheets = notebook?.['worksheets'];
  const cells: unknown = Array.isArray(worksheets)
    ? worksheets.flatMap((sheet: { cells?: unknown } | null) => (Array.isArray(sheet?.cells) ? sheet.cells : []))
    : notebook?.['cells'];
  if (!Array.isArray(cells)) throw new RejectedItem('not a Jupyter notebook: it has no cells');
  const metadata = (notebook['metadata'] ?? {}) as {
    title?: unknown;
    language_info?: { name?: unknown };
    kernelspec?: { language?: unknown };
  };
  const language = String(metadata.language_info?.name ?? metadata.kernelspec?.language ?? '');
  const parts: string[] = [];
  const headings: string[] = [];
  for (const cell of cells as Cell[]) {
    if (!cell || typeof cell !== 'object') continue;
    const source = joined(cell.source ?? cell.input).trim();
    if (cell.cell_type === 'code') {
      if (source) parts.push(`\`\`\`${language}\n${source}\n\`\`\``);
      const printed = outputText(cell.outputs).trim();
      if (printed) parts.push(printed);
    } else if (source) {
      parts.push(source);
      // nbformat 3 had heading cells (their level apart); 4 has headings in Markdown.
      if (cell.cell_type === 'heading') headings.push(source);
      else if (cell.cell_type === 'markdown')
        for (const match of source.matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) headings.push(match[1]!);
    }
  }
  const title = typeof metadata.title === 'string' && metadata.title.trim() ? metadata.title.trim() : null;
  return {
    title: title ?? headings[0] ?? null,
    text: parts.join('\n\n'),
    occurredAt: null,
    fields: { format: 'notebook', headings },
    warnings: [],
  };
}
