/**
 * Text extraction with pdf.js. It runs inside a worker thread (pdf-worker.ts): pdf.js leaves
 * promise rejections unhandled on some damaged files, and can spin or grow without bound on
 * hostile ones, neither of which may take the ingest service down.
 */
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { getDocument } from 'pdfjs-dist/legacy/build/pdf.mjs';
import type { PdfPage } from '../handler.js';

// pdf.js reads CMaps (needed for CJK text) and standard fonts from files next to its package.
const pdfjsRoot = dirname(createRequire(import.meta.url).resolve('pdfjs-dist/package.json'));
const CMAP_URL = `${join(pdfjsRoot, 'cmaps')}/`;
const STANDARD_FONTS_URL = `${join(pdfjsRoot, 'standard_fonts')}/`;

/** What the worker sends back: the text and info, or why the PDF could not be opened. */
export type PdfExtraction =
  | { ok: true; pages: PdfPage[]; info: Record<string, string>; warnings: string[] }
  | { ok: false; name: string; message: string };

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

/** What pdf.js says of a form field's widget (`getAnnotations`). */
interface FormWidget {
  subtype?: string;
  fieldType?: string;
  fieldValue?: unknown;
  /** The field's description (/TU), a form's own label for it: "Your social security number". */
  alternativeText?: string;
}

/**
 * What a filled form says: its text fields' and choices' values, each after its label when the
 * form gives one. They are not in the page's text (a widget draws its own value), so a tax return
 * filled in on screen was found by its printed questions, never by its answers. Check boxes say
 * only on or off, and are left out.
 */
function formFields(annotations: FormWidget[]): string[] {
  return annotations.flatMap((widget) => {
    if (widget.subtype !== 'Widget' || (widget.fieldType !== 'Tx' && widget.fieldType !== 'Ch')) return [];
    const raw = widget.fieldValue;
    const value = (Array.isArray(raw) ? raw.join(', ') : typeof raw === 'string' ? raw : '')
      .replace(/\s+/g, ' ')
      .trim();
    if (!value) return [];
    const label = widget.alternativeText?.replace(/\s+/g, ' ').trim();
    return [label ? `${label}: ${value}` : value];
  });
}

/** Opens the PDF and reads every page, its filled form fields too; a page that fails is left empty with a warning. */
export async function extractPdf(data: Uint8Array): Promise<PdfExtraction> {
  const task = getDocument({
    data,
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
    const warnings: string[] = [];
    for (let page = 1; page <= pdf.numPages; page++) {
      try {
        const read = await pdf.getPage(page);
        const text = pageText((await read.getTextContent()).items as TextPiece[]);
        const fields = formFields((await read.getAnnotations()) as FormWidget[]);
        pages.push({ page, text: [text, ...fields].filter(Boolean).join('\n') });
      } catch (error) {
        pages.push({ page, text: '' });
        warnings.push(`page ${page} could not be read: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
    const info: Record<string, string> = {};
    try {
      const metadata = await pdf.getMetadata();
      for (const [key, value] of Object.entries((metadata.info ?? {}) as Record<string, unknown>)) {
        if (typeof value === 'string' && value.trim() !== '') info[key] = value.trim();
      }
    } catch (error) {
      warnings.push(
        `the document information could not be read: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
    return { ok: true, pages, info, warnings };
  } catch (error) {
    return {
      ok: false,
      name: error instanceof Error ? error.name : 'Error',
      message: error instanceof Error ? error.message : String(error),
    };
  } finally {
    await task.destroy();
  }
}
