import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { getDocument } from 'pdfjs-dist/legacy/build/pdf.mjs';
import { RejectedItem, type PdfFields, type PdfPage } from '../handler.js';
import type { FormatResult } from './format.js';

// pdf.js reads CMaps (needed for CJK text) and standard fonts from files next to its package.
const pdfjsRoot = dirname(createRequire(import.meta.url).resolve('pdfjs-dist/package.json'));
const CMAP_URL = `${join(pdfjsRoot, 'cmaps')}/`;
const STANDARD_FONTS_URL = `${join(pdfjsRoot, 'standard_fonts')}/`;

interface TextPiece {
  str?: string;
  hasEOL?: boolean;
  transform?: number[];
}

/**
 * Whether b continues a's column of vertical writing (Japanese, Chinese): glyph after glyph at the
 * same x, each a step below the last. pdf.js ends every such glyph with an end-of-line.
 */
function verticalStep(a: TextPiece, b: TextPiece | undefined): boolean {
  if (!a.str || !b?.str || !a.transform || !b.transform) return false;
  const size = Math.abs(a.transform[3] ?? 0) || 1;
  const dx = Math.abs((b.transform[4] ?? 0) - (a.transform[4] ?? 0));
  const dy = (a.transform[5] ?? 0) - (b.transform[5] ?? 0);
  return [...a.str].length <= 2 && [...b.str].length <= 2 && dx < size / 2 && dy > 0 && dy <= size * 1.5;
}

/** A page's text in pdf.js's reading order, one line per line, vertical columns joined. */
function pageText(items: TextPiece[]): string {
  const pieces = items.filter((item) => typeof item.str === 'string');
  let text = '';
  pieces.forEach((item, i) => {
    text += item.str;
    if (item.hasEOL && !verticalStep(item, pieces[i + 1])) text += '\n';
  });
  return text
    .split('\n')
    .map((line) => line.replace(/[ \t\u00a0]+/g, ' ').trim())
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

/** `D:20231005000756Z` / `D:20180530133107+02'00'` (PDF 32000 §7.9.4) to ISO, or null. */
export function pdfDate(value: string | undefined): string | null {
  const m = /^(?:D:)?(\d{4})(\d{2})?(\d{2})?(\d{2})?(\d{2})?(\d{2})?(Z|[+-]\d{2}'?\d{2}'?)?/.exec(value?.trim() ?? '');
  if (!m) return null;
  const [, y, mo = '01', d = '01', h = '00', mi = '00', s = '00', zone] = m;
  const offset = !zone || zone === 'Z' ? 'Z' : `${zone.slice(0, 3)}:${zone.slice(3).replace(/'/g, '') || '00'}`;
  const date = new Date(`${y}-${mo}-${d}T${h}:${mi}:${s}${offset}`);
  return Number.isNaN(date.getTime()) ? null : date.toISOString();
}

/** The info dictionary's Title, unless it is a placeholder ("Untitled") or an Office export prefix. */
function pdfTitle(title: string | undefined): string | null {
  const cleaned = title?.replace(/^Microsoft (Word|PowerPoint|Excel) - /, '').trim();
  return cleaned && !/^untitled\b/i.test(cleaned) ? cleaned : null;
}

function rejection(error: unknown): RejectedItem {
  const name = error instanceof Error ? error.name : '';
  const message = error instanceof Error ? error.message : String(error);
  if (name === 'PasswordException') return new RejectedItem('the PDF is encrypted with a password', { cause: error });
  if (name === 'InvalidPDFException') return new RejectedItem(`not a PDF: ${message}`, { cause: error });
  return new RejectedItem(`unreadable PDF: ${message}`, { cause: error });
}

/** Text page by page (pages numbered from 1), the info dictionary, the creation date. */
export async function parsePdf(bytes: Buffer): Promise<FormatResult<PdfFields>> {
  const task = getDocument({
    // pdf.js takes ownership of (detaches) the array it gets, so it gets a copy.
    data: new Uint8Array(bytes),
    cMapUrl: CMAP_URL,
    cMapPacked: true,
    standardFontDataUrl: STANDARD_FONTS_URL,
    disableFontFace: true,
    useSystemFonts: false,
    verbosity: 0,
  });
  try {
    const pdf = await task.promise;
    const pages: PdfPage[] = [];
    for (let page = 1; page <= pdf.numPages; page++) {
      const content = await (await pdf.getPage(page)).getTextContent();
      pages.push({ page, text: pageText(content.items as TextPiece[]) });
    }
    const metadata = await pdf.getMetadata();
    const info: Record<string, string> = {};
    for (const [key, value] of Object.entries((metadata.info ?? {}) as Record<string, unknown>)) {
      if (typeof value === 'string' && value.trim() !== '') info[key] = value.trim();
    }
    const warnings = pages.every((p) => p.text === '') && pages.length > 0 ? ['the PDF has no text layer (a scan?); its text needs OCR'] : [];
    return {
      title: pdfTitle(info['Title']),
      text: pages.map((p) => p.text).filter((t) => t !== '').join('\n\n'),
      occurredAt: pdfDate(info['CreationDate']) ?? pdfDate(info['ModDate']),
      fields: { format: 'pdf', pages, info },
      warnings,
    };
  } catch (error) {
    throw rejection(error);
  } finally {
    await task.destroy();
  }
}
