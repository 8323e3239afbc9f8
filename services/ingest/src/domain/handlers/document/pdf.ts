import { TaskFailed, TaskPool } from '@memex/workers';
import { RejectedItem, type PdfFields } from '../handler.js';
import type { PdfExtraction } from './pdf-extract.js';
import { MAX_OCR_PAGES, OCR_ENGINE, ocrEnabled, recognizePdfPages } from '../media/ocr.js';
import type { FormatResult } from './format.js';

/** A PDF that takes longer than this to read is refused (a hostile file can make pdf.js spin). */
export const PDF_TIMEOUT_MS = 120_000;
/** Heap of the PDF worker; a file that needs more is refused instead of exhausting the service. */
const PDF_WORKER_HEAP_MB = 1536;

/** One thread reads PDFs, one at a time; it starts on first use and is replaced when it dies or times out. */
const reader = new TaskPool<Uint8Array, PdfExtraction>({
  name: 'the PDF reader',
  script: new URL('./pdf-worker.js', import.meta.url),
  threads: 1,
  heapMb: PDF_WORKER_HEAP_MB,
});

async function extract(bytes: Buffer, timeoutMs: number): Promise<PdfExtraction> {
  // A copy the worker may own (pdf.js detaches the buffer it is given).
  const data = new Uint8Array(bytes);
  try {
    return await reader.run(data, { timeoutMs, transfer: [data.buffer] });
  } catch (error) {
    if (!(error instanceof TaskFailed)) throw error;
    const why = {
      timeout: `the PDF took longer than ${timeoutMs / 1000} s to read`,
      out_of_memory: `the PDF needs more than ${PDF_WORKER_HEAP_MB} MB of memory to read`,
      worker_died: 'the PDF reader stopped while reading this PDF',
    }[error.failure];
    throw new RejectedItem(why, { cause: error });
  }
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

/**
 * The info dictionary's Title as a person would title the document: without the prefix Office's
 * PDF export puts before it, and without the extension of the file it was printed from (a printer
 * driver's "Budget 2019.docx"); none when it is a placeholder ("Untitled", Word's "Document1").
 */
function pdfTitle(title: string | undefined): string | null {
  const cleaned = title
    ?.replace(/^Microsoft (Word|PowerPoint|Excel) - /, '')
    .replace(/\.(docx?|xlsx?|pptx?|rtf|odt|ods|odp|txt|html?|tex|dvi|ps|indd|pages|key|numbers)$/i, '')
    .trim();
  return cleaned && !/^(untitled\b|(document|presentation|book)\d*$)/i.test(cleaned) ? cleaned : null;
}

function rejection(name: string, message: string): RejectedItem {
  if (name === 'PasswordException') return new RejectedItem('the PDF is encrypted with a password');
  if (name === 'InvalidPDFException') return new RejectedItem(`not a PDF: ${message}`);
  return new RejectedItem(`unreadable PDF: ${message}`);
}

/** Text page by page (pages numbered from 1), the info dictionary, the creation date. */
export async function parsePdf(bytes: Buffer, timeoutMs = PDF_TIMEOUT_MS): Promise<FormatResult<PdfFields>> {
  const extraction = await extract(bytes, timeoutMs);
  if (!extraction.ok) throw rejection(extraction.name, extraction.message);
  const { info } = extraction;
  let { pages } = extraction;
  const warnings = [...extraction.warnings];
  if (pages.length > 0 && pages.every((p) => p.text === '')) {
    // A PDF pdf.js reads but poppler cannot render keeps its (empty) text, with the reason.
    const scanned = ocrEnabled()
      ? await recognizePdfPages(bytes, pages.length).catch((error: Error) => {
          warnings.push(`OCR could not read the pages: ${error.message.split('\n')[0]}`);
          return null;
        })
      : null;
    if (scanned?.pages.some((text) => text !== '')) {
      pages = pages.map((p, i) => ({ page: p.page, text: scanned.pages[i] ?? '' }));
      const more = pages.length > MAX_OCR_PAGES ? ` (the first ${MAX_OCR_PAGES} of ${pages.length} pages)` : '';
      warnings.push(
        `the PDF has no text layer (a scan): its text was read by OCR${more}, ${OCR_ENGINE} on ${scanned.provider}`,
      );
    } else if (scanned) warnings.push('the PDF has no text layer, and OCR found no text on its pages');
    else
      warnings.push(
        'the PDF has no text layer (a scan?); its text needs OCR (pdftoppm, from poppler-utils, renders its pages)',
      );
  }
  return {
    title: pdfTitle(info['Title']),
    text: pages
      .map((p) => p.text)
      .filter((t) => t !== '')
      .join('\n\n'),
    occurredAt: pdfDate(info['CreationDate']) ?? pdfDate(info['ModDate']),
    fields: { format: 'pdf', pages, info },
    warnings,
  };
}
