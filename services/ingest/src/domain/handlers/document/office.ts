import JSZip from 'jszip';
import { RejectedItem, type OfficeFields } from '../handler.js';
import { collapseWhitespace, htmlToPlainText } from '../text.js';
import { htmlHeadings } from './docx.js';
import type { FormatResult } from './format.js';
import { decodeEntities, documentProperties } from './xml-text.js';
import { chartsOf, odfChartText, relationships } from './chart.js';
import type { BinaryOfficeFormat } from './binary-office/index.js';
import { dateFormatOf, dateText, type DateFormat } from './spreadsheet-dates.js';

/**
 * Documents that are zips of XML: spreadsheets and presentations (OOXML: .xlsx, .pptx),
 * OpenDocument's three (.odt, .ods, .odp) and e-books (.epub). Read for their words: cells row by
 * row with their sheet's name, slides in order with their notes, paragraphs and headings, a book's
 * chapters in reading order; the title and date the file's properties give. (Word's .docx goes
 * through mammoth, docx.ts.)
 */

/** How much XML one file may inflate to: a zip bomb stops here, with what was read kept. */
const INFLATED_AT_MOST = 64 * 1024 * 1024;

export type OfficeFormat = Exclude<OfficeFields['format'], BinaryOfficeFormat | 'iwork' | 'notebook'>;

export async function parseOffice(bytes: Buffer, format: OfficeFormat): Promise<FormatResult<OfficeFields>> {
  let zip: JSZip;
  try {
    zip = await JSZip.loadAsync(bytes);
  } catch (error) {
    throw new RejectedItem(`not a readable ${format} file: ${error instanceof Error ? error.message : String(error)}`);
  }
  const parts = new Parts(zip);
  const { text, headings, properties } = await READERS[format](parts);
  if (parts.missing.length > 0 && !text.trim())
    throw new RejectedItem(`not a readable ${format} file: it has no ${parts.missing.join(', ')}`);
  // A part the file names but does not hold (a chapter the spine lists) is text that is not there: said, not passed over.
  const warnings = [
    ...parts.missing.map((name) => `${name} is named but not in the file: left out`),
    ...parts.warnings,
  ];
  const { title, created } = documentProperties(properties);
  return {
    // A sheet's name is no title: a spreadsheet without one in its properties goes by its file name.
    title: title ?? (format === 'xlsx' ? null : headings[0]) ?? null,
    text: text.trim(),
    occurredAt: created,
    fields: { format, headings },
    warnings,
  };
}

/** The zip's XML parts, read once each, within `INFLATED_AT_MOST`. */
class Parts {
  readonly missing: string[] = [];
  readonly warnings: string[] = [];
  private inflated = 0;
  private exhausted = false;

  constructor(private readonly zip: JSZip) {}

  /** Parts that may be absent (charts, drawings, relationships), read within the same limit. */
  readonly reader = (name: string) => this.xml(name, { required: false });

  names(pattern: RegExp): string[] {
    return Object.keys(this.zip.files)
      .filter((name) => pattern.test(name))
      .sort((a, b) => numberIn(a) - numberIn(b) || a.localeCompare(b));
  }

  /** A part's XML; one that is `required` and absent is recorded in `missing`. */
  async xml(name: string, { required = true } = {}): Promise<string | undefined> {
    const file = this.zip.file(name);
    if (!file) {
      if (required) this.missing.push(name);
      return undefined;
    }
    // jszip's own record of the entry's size, read before anything is inflated.
    const size = (file as unknown as { _data?: { uncompressedSize?: number } })._data?.uncompressedSize ?? 0;
    if (this.exhausted) return undefined;
    if (this.inflated + size > INFLATED_AT_MOST) {
      this.exhausted = true;
      this.warnings.push(`${name} and what follows it were not read: more than ${INFLATED_AT_MOST >> 20} MB of XML`);
      return undefined;
    }
    this.inflated += size;
    return file.async('string');
  }
}

/** What a reader found: the text, its headings (sheet names, slide titles), and the XML of the file's properties. */
interface Read {
  text: string;
  headings: string[];
  properties: string | undefined;
}

const READERS: Record<OfficeFormat, (parts: Parts) => Promise<Read>> = {
  xlsx: readXlsx,
  pptx: readPptx,
  opendocument: readOpenDocument,
  epub: readEpub,
};

const ooxmlProperties = (parts: Parts) => parts.xml('docProps/core.xml', { required: false });

/**
 * An e-book: the package document its container names (title, date), then the chapters its spine
 * lists, in reading order, as text; their headings.
 */
async function readEpub(parts: Parts): Promise<Read> {
  const container = (await parts.xml('META-INF/container.xml')) ?? '';
  const opfPath = decodeEntities(/<rootfile\b[^>]*\bfull-path="([^"]+)"/.exec(container)?.[1] ?? '');
  const opf = opfPath ? await parts.xml(opfPath) : undefined;
  if (!opf) return { text: '', headings: [], properties: undefined };
  const base = opfPath.includes('/') ? opfPath.slice(0, opfPath.lastIndexOf('/') + 1) : '';
  const manifest = new Map(
    [...opf.matchAll(/<item\b([^>]*)\/?>/g)].map(([, attributes]) => [
      /\bid="([^"]*)"/.exec(attributes!)?.[1] ?? '',
      {
        href: decodeEntities(/\bhref="([^"]*)"/.exec(attributes!)?.[1] ?? ''),
        nav: /\bproperties="[^"]*\bnav\b/.test(attributes!),
      },
    ]),
  );
  const chapters: string[] = [];
  const headings: string[] = [];
  for (const [, idref] of opf.matchAll(/<itemref\b[^>]*\bidref="([^"]*)"/g)) {
    const item = manifest.get(idref!);
    // The table of contents is a list of the chapters' titles, not a chapter.
    if (!item || item.nav) continue;
    const html = await parts.xml(decodeURI(base + item.href.split('#')[0]));
    if (!html) continue;
    headings.push(...htmlHeadings(html));
    chapters.push(htmlToPlainText(html).trim());
  }
  return { text: chapters.filter(Boolean).join('\n\n'), headings, properties: opf };
}

const numberIn = (name: string) => Number(/(\d+)\.xml$/.exec(name)?.[1] ?? 0);

/** Each cell format's (cellXfs, in order) date format, from the workbook's styles. */
function xlsxDateFormats(styles: string): DateFormat[] {
  const codes = new Map(
    [...styles.matchAll(/<numFmt\b([^>]*)\/?>/g)].map(([, attributes]) => [
      Number(/\bnumFmtId="(\d+)"/.exec(attributes!)?.[1]),
      decodeEntities(/\bformatCode="([^"]*)"/.exec(attributes!)?.[1] ?? ''),
    ]),
  );
  const cellXfs = /<cellXfs\b[^>]*>([\s\S]*?)<\/cellXfs>/.exec(styles)?.[1] ?? '';
  return [...cellXfs.matchAll(/<xf\b([^>]*?)\/?>/g)].map(([, attributes]) => {
    const id = Number(/\bnumFmtId="(\d+)"/.exec(attributes!)?.[1] ?? 0);
    return dateFormatOf(id, codes.get(id));
  });
}

/**
 * Cells row by row (tab between cells), each sheet under its name, in the workbook's order; a date
 * cell as its date; the charts a sheet draws (or a chart sheet is) after its cells.
 */
async function readXlsx(parts: Parts): Promise<Read> {
  const shared = [
    ...((await parts.xml('xl/sharedStrings.xml', { required: false })) ?? '').matchAll(/<si>([\s\S]*?)<\/si>/g),
  ].map((m) => runsOf(m[1]!, 't'));
  const workbook = (await parts.xml('xl/workbook.xml')) ?? '';
  const listed = [...workbook.matchAll(/<sheet\b([^>]*?)\/?>/g)].map(([, attributes]) => ({
    name: decodeEntities(/\bname="([^"]*)"/.exec(attributes!)?.[1] ?? ''),
    id: /\br:id="([^"]+)"/.exec(attributes!)?.[1],
  }));
  const names = listed.map((sheet) => sheet.name);
  const dates = xlsxDateFormats((await parts.xml('xl/styles.xml', { required: false })) ?? '');
  const date1904 = /<workbookPr\b[^>]*\bdate1904="(1|true)"/.test(workbook);
  // Each sheet's part by the workbook's relationships; without them (as some writers leave it), by number.
  const targets = await relationships(parts.reader, 'xl/workbook.xml');
  const sheetParts =
    targets.size > 0
      ? listed.flatMap(({ name, id }) => {
          const part = id ? targets.get(id) : undefined;
          return part ? [{ name, part }] : [];
        })
      : parts.names(/^xl\/worksheets\/sheet\d+\.xml$/).map((part, i) => ({ name: names[i] ?? `Sheet ${i + 1}`, part }));
  const sheets: string[] = [];
  for (const { name, part } of sheetParts) {
    const xml = (await parts.xml(part)) ?? '';
    const rows = [...xml.matchAll(/<row\b[^>]*>([\s\S]*?)<\/row>/g)].map((row) =>
      [...row[1]!.matchAll(/<c\b([^>]*?)(?:\/>|>([\s\S]*?)<\/c>)/g)]
        .map(([, attributes, body = '']) => {
          const type = /\bt="([^"]*)"/.exec(attributes!)?.[1];
          const value = /<v>([\s\S]*?)<\/v>/.exec(body)?.[1];
          if (type === 's') return shared[Number(value)] ?? '';
          if (type === 'inlineStr') return runsOf(body, 't');
          const date = dates[Number(/\bs="(\d+)"/.exec(attributes!)?.[1] ?? 0)];
          const number = Number(value);
          if (date && (type === undefined || type === 'n') && value && number >= 0)
            return dateText(number, date, date1904);
          return decodeEntities(value ?? '');
        })
        .filter((cell) => cell !== '')
        .join('\t'),
    );
    const content = [rows.filter(Boolean).join('\n'), ...(await sheetCharts(parts, part, xml))]
      .filter(Boolean)
      .join('\n');
    if (content) sheets.push(`${name}\n${content}`);
  }
  return { text: sheets.join('\n\n'), headings: names, properties: await ooxmlProperties(parts) };
}

/** The text of the charts a sheet's drawing holds (`<drawing r:id>`, then the drawing's `<c:chart r:id>`). */
async function sheetCharts(parts: Parts, sheetPart: string, sheet: string): Promise<string[]> {
  const ids = [...sheet.matchAll(/<drawing\b[^>]*\br:id="([^"]+)"/g)].map((m) => m[1]!);
  if (ids.length === 0) return [];
  const targets = await relationships(parts.reader, sheetPart);
  const texts: string[] = [];
  for (const id of ids) {
    const drawingPart = targets.get(id);
    const drawing = drawingPart ? await parts.reader(drawingPart) : undefined;
    if (drawingPart && drawing) texts.push(...(await chartsOf(parts.reader, drawingPart, drawing)).values());
  }
  return texts;
}

/** Each slide's paragraphs, then its speaker notes; a slide's first paragraph (its title) is a heading. */
async function readPptx(parts: Parts): Promise<Read> {
  const slides: string[] = [];
  const headings: string[] = [];
  const names = parts.names(/^ppt\/slides\/slide\d+\.xml$/);
  if (names.length === 0) parts.missing.push('slides (ppt/slides/)');
  for (const name of names) {
    const slide = (await parts.xml(name)) ?? '';
    const paragraphs = paragraphsOf(tableRowsAsParagraphs(slide), 'a:p', 'a:t');
    const notes = await parts.xml(`ppt/notesSlides/notesSlide${numberIn(name)}.xml`, { required: false });
    if (paragraphs[0]) headings.push(paragraphs[0]);
    const noteText = notes ? paragraphsOf(notes, 'a:p', 'a:t').filter((p) => !/^\d+$/.test(p)) : [];
    // What a picture shows, as its author described it (its alt text), and the slide's charts.
    const described = [...slide.matchAll(/<p:cNvPr\b[^>]*\bdescr="([^"]*)"/g)]
      .map((m) => collapseWhitespace(decodeEntities(m[1]!)))
      .filter(Boolean);
    const charts = [...(await chartsOf(parts.reader, name, slide)).values()];
    slides.push([...paragraphs, ...described, ...charts, ...noteText].join('\n'));
  }
  return { text: slides.filter(Boolean).join('\n\n'), headings, properties: await ooxmlProperties(parts) };
}

/** A slide's table rows as paragraphs of their cells' text, tab-separated (a cell a line was hard to read). */
function tableRowsAsParagraphs(slide: string): string {
  const escape = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;');
  return slide.replace(/<a:tr\b[\s\S]*?<\/a:tr>/g, (row) => {
    const cells = [...row.matchAll(/<a:tc\b[\s\S]*?<\/a:tc>/g)].map((cell) =>
      paragraphsOf(cell[0], 'a:p', 'a:t').join(' '),
    );
    return `<a:p><a:r><a:t>${escape(cells.join('\t'))}</a:t></a:r></a:p>`;
  });
}

/** OpenDocument text, spreadsheet or presentation: paragraphs and headings in order, cells tab-separated. */
async function readOpenDocument(parts: Parts): Promise<Read> {
  const xml = (await parts.xml('content.xml')) ?? '';
  const body = await withChartsAsParagraphs(parts, xml.slice(Math.max(0, xml.indexOf('<office:body'))));
  const headings = [...body.matchAll(/<text:h\b[^>]*>([\s\S]*?)<\/text:h>/g)]
    .map((m) => collapseWhitespace(odfText(m[1]!)))
    .filter(Boolean);
  const text = odfText(
    body
      // A cell's last paragraph ends the cell, not the line: its row goes on.
      .replace(/<\/text:p>\s*<\/table:table-cell>/g, '</table:table-cell>')
      .replace(/<\/(text:p|text:h|table:table-row|draw:page)>/g, '$&\n')
      .replace(/<\/table:table-cell>|<table:table-cell\b[^>]*\/>/g, '$&\t')
      .replace(/<table:table\b[^>]*\btable:name="([^"]*)"[^>]*>/g, '\n$1\n'),
  );
  return {
    text: text
      .split('\n')
      .map((line) => line.replace(/\t+$/, '').trimEnd())
      .join('\n')
      .replace(/\n{3,}/g, '\n\n'),
    headings,
    properties: await parts.xml('meta.xml', { required: false }),
  };
}

/** An embedded object (`draw:object`), by the folder of the file its `xlink:href` names. */
const ODF_OBJECT = /<draw:object\b[^>]*?\bxlink:href="([^"]+)"[^>]*?(?:\/>|>[\s\S]*?<\/draw:object>)/g;

/**
 * An OpenDocument body with its charts (objects whose own `content.xml` is a chart) as paragraphs
 * of their text: where they stand in a text or a presentation, after their sheet's cells in a
 * spreadsheet (where a sheet's shapes come before its cells).
 */
async function withChartsAsParagraphs(parts: Parts, body: string): Promise<string> {
  const texts = new Map<string, string>();
  for (const href of new Set([...body.matchAll(ODF_OBJECT)].map((m) => m[1]!))) {
    const folder = decodeEntities(href).replace(/^\.\//, '').replace(/\/$/, '');
    const text = odfChartText((await parts.reader(`${folder}/content.xml`)) ?? '');
    if (text) texts.set(href, text);
  }
  if (texts.size === 0) return body;
  const paragraphs = (text: string) =>
    text
      .split('\n')
      .map(
        (line) => `<text:p>${line.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/\t/g, '<text:tab/>')}</text:p>`,
      )
      .join('');
  const charts = (xml: string) => [...xml.matchAll(ODF_OBJECT)].flatMap((m) => texts.get(m[1]!) ?? []);
  const withoutCharts = (xml: string) =>
    xml.replace(ODF_OBJECT, (object, href: string) => (texts.has(href) ? '' : object));
  if (!body.includes('<office:spreadsheet'))
    return body.replace(ODF_OBJECT, (object, href: string) => {
      const text = texts.get(href);
      return text ? paragraphs(text) : object;
    });
  return body.replace(/<table:table[\s>][\s\S]*?<\/table:table>/g, (table) => {
    const drawn = charts(table);
    return drawn.length === 0
      ? table
      : withoutCharts(table).replace(/<\/table:table>$/, `${drawn.map(paragraphs).join('')}</table:table>`);
  });
}

/** OpenDocument inline markup as text: `text:s` spaces, tabs, line breaks, then no tags. */
function odfText(xml: string): string {
  return decodeEntities(
    xml
      .replace(/<text:s\b([^>]*)\/>/g, (_, attributes: string) =>
        ' '.repeat(Number(/text:c="(\d+)"/.exec(attributes)?.[1] ?? 1)),
      )
      .replace(/<text:tab\b[^>]*\/>/g, '\t')
      .replace(/<text:line-break\b[^>]*\/>/g, '\n')
      .replace(/<[^>]+>/g, ''),
  );
}

/** Each `<p>` element's text runs (`<t>`), joined, whitespace collapsed; empty ones left out. */
function paragraphsOf(xml: string, paragraph: string, run: string): string[] {
  return [...xml.matchAll(new RegExp(`<${paragraph}\\b[^>]*>([\\s\\S]*?)</${paragraph}>`, 'g'))]
    .map((m) => collapseWhitespace(runsOf(m[1]!, run)))
    .filter(Boolean);
}

/** The text of every `<run>` element in a fragment, joined. */
function runsOf(xml: string, run: string): string {
  return [...xml.matchAll(new RegExp(`<${run}(?:\\s[^>]*)?>([\\s\\S]*?)</${run}>`, 'g'))]
    .map((m) => decodeEntities(m[1]!))
    .join('');
}
