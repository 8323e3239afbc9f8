import JSZip from 'jszip';
import mammoth from 'mammoth';
import { parseHTML } from 'linkedom';
import { RejectedItem, type DocxFields } from '../handler.js';
import { collapseWhitespace, htmlToPlainText } from '../text.js';
import type { FormatResult } from './format.js';
import { equationsAsText } from './omml.js';
import { chartsOf } from './chart.js';
import { documentProperties } from './xml-text.js';

// Images are not text: an empty src keeps mammoth from base64-encoding every picture into the HTML.
const skipImages = mammoth.images.imgElement(async () => ({ src: '' }));

/**
 * mammoth's HTML without the links between notes and the text: a comment's `[AL1]` marker in the
 * text and the `↑` back to it after each comment and footnote (the comments follow the text, each
 * under `Comment [AL1]`, the initials of who wrote it).
 */
function withoutNoteLinks(html: string): string {
  return html
    .replace(/<sup><a href="#comment-\d+" id="comment-ref-\d+">[^<]*<\/a><\/sup>/g, '')
    .replace(/\s*<a href="#(?:comment|footnote|endnote)-ref-\d+">↑<\/a>/g, '');
}

/**
 * Table cells without their paragraphs (Word puts each cell's text in one, mammoth keeps it), so a
 * row comes out as a line of cells rather than a cell a line.
 */
function cellsWithoutParagraphs(html: string): string {
  return html.replace(/<(td|th)\b([^>]*)>([\s\S]*?)<\/\1>/g, (_, cell: string, attributes: string, inner: string) => {
    const text = inner.replace(/<\/p>\s*<p>/g, ' ').replace(/<\/?p>/g, '');
    return `<${cell}${attributes}>${text}</${cell}>`;
  });
}

/** How much a chart's part may inflate to: more is no chart (a zip bomb's), and is left out. */
const CHART_AT_MOST = 8 * 1024 * 1024;

const escapeXml = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** Text as the content of a run: its lines apart (`w:br`), its tabs as tabs. */
const runContent = (text: string) =>
  text
    .split('\n')
    .map((line) =>
      line
        .split('\t')
        .map((cell) => `<w:t xml:space="preserve">${escapeXml(cell)}</w:t>`)
        .join('<w:tab/>'),
    )
    .join('<w:br/>');

/**
 * The body's charts as text where they stand (mammoth has no charts): a drawing (or the
 * alternate content around one) that shows a chart becomes its title, series and values.
 */
async function chartsAsText(documentXml: string, zip: JSZip): Promise<string> {
  const read = async (name: string) => {
    const file = zip.file(name);
    // jszip's own record of the entry's size, read before anything is inflated.
    const size = (file as unknown as { _data?: { uncompressedSize?: number } } | null)?._data?.uncompressedSize ?? 0;
    return file && size <= CHART_AT_MOST ? file.async('string') : undefined;
  };
  const charts = await chartsOf(read, 'word/document.xml', documentXml);
  return documentXml.replace(
    /<mc:AlternateContent\b[\s\S]*?<\/mc:AlternateContent>|<w:drawing\b[\s\S]*?<\/w:drawing>/g,
    (drawing) => {
      const id = /<c:chart\b[^>]*\br:id="([^"]+)"/.exec(drawing)?.[1];
      if (!id) return drawing;
      const text = charts.get(id);
      return text ? runContent(text) : '';
    },
  );
}

/** The DOCX with its body's equations and charts as text for mammoth; the same bytes when it has neither. */
async function withBodyAsText(bytes: Buffer, zip: JSZip): Promise<Buffer> {
  const original = await zip.file('word/document.xml')?.async('string');
  if (!original) return bytes;
  let xml = original;
  if (xml.includes('<m:oMath')) xml = equationsAsText(xml);
  if (xml.includes('<c:chart')) xml = await chartsAsText(xml, zip);
  if (xml === original) return bytes;
  zip.file('word/document.xml', xml);
  return zip.generateAsync({ type: 'nodebuffer' });
}

/** Headings (h1–h6) of an HTML fragment, in order, whitespace collapsed. */
export function htmlHeadings(html: string): string[] {
  const { document } = parseHTML(`<!doctype html><html><body>${html}</body></html>`);
  return [...document.querySelectorAll('h1, h2, h3, h4, h5, h6')]
    .map((h) => collapseWhitespace(h.textContent ?? ''))
    .filter((h) => h !== '');
}

/**
 * Word (OOXML) via mammoth: its semantic HTML, then text. The title is the one its properties
 * state, else its first heading; the date, when its properties say it was created.
 */
export async function parseDocx(bytes: Buffer): Promise<FormatResult<DocxFields>> {
  let result: { value: string; messages: Array<{ type: string; message: string }> };
  let properties: string | undefined;
  try {
    // A file that does not unzip is mammoth's to refuse, with its reason.
    const zip = await JSZip.loadAsync(bytes).catch(() => null);
    properties = await zip?.file('docProps/core.xml')?.async('string');
    // Equations and charts as text first: mammoth drops them.
    const source = zip ? await withBodyAsText(bytes, zip) : bytes;
    // externalFileAccess stays off: a document must not make us read files it points at.
    result = await mammoth.convertToHtml(
      { buffer: source },
      // Comments too (mammoth leaves them out unless their references are mapped): reviewers' words.
      { convertImage: skipImages, externalFileAccess: false, styleMap: ['comment-reference => sup'] },
    );
  } catch (error) {
    throw new RejectedItem(`not a readable DOCX file: ${error instanceof Error ? error.message : String(error)}`, {
      cause: error,
    });
  }
  const headings = htmlHeadings(result.value);
  const { title, created } = documentProperties(properties);
  return {
    title: title ?? headings[0] ?? null,
    text: htmlToPlainText(cellsWithoutParagraphs(withoutNoteLinks(result.value))),
    occurredAt: created,
    fields: { format: 'docx', headings },
    warnings: result.messages.filter((m) => m.type === 'error').map((m) => `DOCX: ${m.message}`),
  };
}
