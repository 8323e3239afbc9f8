/** Builders for test inputs: messages, PDFs and DOCX files written from scratch. */
import { crc32 } from 'node:zlib';
import { readFileSync } from 'node:fs';
import { sharedFile, sharedSkip } from '@memex/testing';

/**
 * A message from header lines and a body, lines joined with CRLF. Header values are written as
 * latin1, so raw 8-bit header bytes are passed as `bytes.toString('latin1')`.
 */
export function message(headers: Array<[string, string]>, body: string | Buffer = 'Hello.\r\n'): Buffer {
  const head = Buffer.from(`${headers.map(([k, v]) => `${k}: ${v}`).join('\r\n')}\r\n\r\n`, 'latin1');
  return Buffer.concat([head, typeof body === 'string' ? Buffer.from(body, 'utf8') : body]);
}

/** A multipart/mixed message from a@example.com: a text/plain part, then one attachment part. */
export function withAttachment(text: string, attachment: { headers: string[]; body: string }): Buffer {
  return message(
    [
      ['From', 'a@example.com'],
      ['Content-Type', 'multipart/mixed; boundary="b"'],
    ],
    ['--b', 'Content-Type: text/plain', '', text, '--b', ...attachment.headers, '', attachment.body, '--b--', ''].join(
      '\r\n',
    ),
  );
}

/** Why tests that read real files from the shared corpus cannot run here, or false when they can. */
export const CORPUS_SKIP = sharedSkip('corpus');

/** A real-world file from the shared corpus (`../shared/corpus/<path>`, read in place; see its PROVENANCE.tsv). */
export function fixture(path: string): Buffer {
  return readFileSync(sharedFile(`corpus/${path}`));
}

function pdfString(text: string): string {
  return `(${text.replace(/[\\()]/g, (c) => `\\${c}`)})`;
}

/** A valid PDF with one text line per page (Helvetica), an info dictionary, and a correct xref table. */
/** A form field filled in on a page of a `pdf()`: a text field (Tx), a choice (Ch) or a check box (Btn). */
export interface PdfField {
  page: number;
  kind: 'Tx' | 'Ch' | 'Btn';
  name: string;
  /** Its description (/TU), which viewers show as its label. */
  label?: string;
  value: string;
}

export function pdf(pages: string[][], info: Record<string, string> = {}, fields: PdfField[] = []): Buffer {
  const objects: string[] = [];
  const pageIds = pages.map((_, i) => 4 + i * 2);
  const fieldIds = fields.map((_, i) => 5 + pages.length * 2 + i);
  const form = fields.length > 0 ? ` /AcroForm << /Fields [${fieldIds.map((id) => `${id} 0 R`).join(' ')}] >>` : '';
  objects[1] = `<< /Type /Catalog /Pages 2 0 R${form} >>`;
  objects[2] = `<< /Type /Pages /Kids [${pageIds.map((id) => `${id} 0 R`).join(' ')}] /Count ${pages.length} >>`;
  objects[3] = '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>';
  pages.forEach((lines, i) => {
    const stream = `BT /F1 12 Tf 72 720 Td 14 TL ${lines.map((l) => `${pdfString(l)} Tj T*`).join(' ')} ET`;
    const annots = fieldIds.filter((_, f) => fields[f]!.page === i + 1);
    const annotsEntry = annots.length > 0 ? ` /Annots [${annots.map((id) => `${id} 0 R`).join(' ')}]` : '';
    objects[4 + i * 2] =
      `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents ${5 + i * 2} 0 R${annotsEntry} >>`;
    objects[5 + i * 2] = `<< /Length ${stream.length} >>\nstream\n${stream}\nendstream`;
  });
  const infoId = objects.length;
  objects[infoId] = `<< ${Object.entries(info)
    .map(([k, v]) => `/${k} ${pdfString(v)}`)
    .join(' ')} >>`;
  fields.forEach((field, i) => {
    const value = field.kind === 'Btn' ? `/${field.value}` : pdfString(field.value);
    const label = field.label ? ` /TU ${pdfString(field.label)}` : '';
    objects[fieldIds[i]!] =
      `<< /Type /Annot /Subtype /Widget /FT /${field.kind} /T ${pdfString(field.name)}${label} /V ${value} /Rect [72 ${600 - i * 20} 300 ${615 - i * 20}] /P ${pageIds[field.page - 1]} 0 R >>`;
  });
  let out = '%PDF-1.4\n';
  const offsets: number[] = [];
  for (let id = 1; id < objects.length; id++) {
    offsets[id] = out.length;
    out += `${id} 0 obj\n${objects[id]}\nendobj\n`;
  }
  const xref = out.length;
  out += `xref\n0 ${objects.length}\n0000000000 65535 f \n`;
  for (let id = 1; id < objects.length; id++) out += `${String(offsets[id]).padStart(10, '0')} 00000 n \n`;
  out += `trailer\n<< /Size ${objects.length} /Root 1 0 R /Info ${infoId} 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(out, 'latin1');
}

/** An ISO base media box (HEIF, CR3, a JPEG XL container): its size, its type, its payload. */
export function isoBox(type: string, ...payload: Buffer[]): Buffer {
  const body = Buffer.concat(payload);
  const header = Buffer.alloc(8);
  header.writeUInt32BE(8 + body.length);
  header.write(type, 4, 'latin1');
  return Buffer.concat([header, body]);
}

/** A zip archive with stored (uncompressed) entries. */
export function zip(entries: Array<{ name: string; data: string | Buffer }>): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const entry of entries) {
    const name = Buffer.from(entry.name, 'utf8');
    const data = typeof entry.data === 'string' ? Buffer.from(entry.data, 'utf8') : entry.data;
    const crc = crc32(data);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(data.length, 18);
    local.writeUInt32LE(data.length, 22);
    local.writeUInt16LE(name.length, 26);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4);
    central.writeUInt16LE(20, 6);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(data.length, 20);
    central.writeUInt32LE(data.length, 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt32LE(offset, 42);
    locals.push(local, name, data);
    centrals.push(central, name);
    offset += local.length + name.length + data.length;
  }
  const directory = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, directory, end]);
}

const W = 'http://schemas.openxmlformats.org/wordprocessingml/2006/main';
const M = 'http://schemas.openxmlformats.org/officeDocument/2006/math';
const R = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships';
const WP = 'http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing';

const escapeXml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

const C = 'http://schemas.openxmlformats.org/drawingml/2006/chart';
const A = 'http://schemas.openxmlformats.org/drawingml/2006/main';
const RELS = 'http://schemas.openxmlformats.org/package/2006/relationships';

/** A chart drawn by a `docx()` or an `xlsx()`: a bar chart of series over categories. */
export interface ChartSpec {
  title: string;
  categories: string[];
  series: Array<{ name: string; values: number[] }>;
}

/** A chart part (`c:chartSpace`) as Office writes one: each series' name, categories and values cached. */
export function chartXml(chart: ChartSpec): string {
  const points = (values: Array<string | number>) =>
    `<c:ptCount val="${values.length}"/>${values.map((v, i) => `<c:pt idx="${i}"><c:v>${escapeXml(String(v))}</c:v></c:pt>`).join('')}`;
  const series = chart.series
    .map(
      (ser, i) =>
        `<c:ser><c:idx val="${i}"/><c:order val="${i}"/><c:tx><c:strRef><c:f>Sheet1!$${String.fromCharCode(66 + i)}$1</c:f><c:strCache>${points([ser.name])}</c:strCache></c:strRef></c:tx>` +
        `<c:cat><c:strRef><c:f>Sheet1!$A$2:$A$${chart.categories.length + 1}</c:f><c:strCache>${points(chart.categories)}</c:strCache></c:strRef></c:cat>` +
        `<c:val><c:numRef><c:f>Sheet1!$${String.fromCharCode(66 + i)}$2</c:f><c:numCache><c:formatCode>General</c:formatCode>${points(ser.values)}</c:numCache></c:numRef></c:val></c:ser>`,
    )
    .join('');
  return (
    `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><c:chartSpace xmlns:c="${C}" xmlns:a="${A}" xmlns:r="${R}"><c:chart>` +
    `<c:title><c:tx><c:rich><a:bodyPr/><a:p><a:r><a:t>${escapeXml(chart.title)}</a:t></a:r></a:p></c:rich></c:tx><c:overlay val="0"/></c:title>` +
    `<c:plotArea><c:layout/><c:barChart><c:barDir val="col"/><c:grouping val="clustered"/>${series}<c:axId val="1"/><c:axId val="2"/></c:barChart>` +
    '<c:catAx><c:axId val="1"/><c:scaling><c:orientation val="minMax"/></c:scaling><c:axPos val="b"/><c:crossAx val="2"/></c:catAx>' +
    '<c:valAx><c:axId val="2"/><c:scaling><c:orientation val="minMax"/></c:scaling><c:axPos val="l"/><c:crossAx val="1"/></c:valAx>' +
    '</c:plotArea></c:chart></c:chartSpace>'
  );
}

/** The graphic that shows chart `id` (a relationship of the part it stands in). */
const chartGraphic = (id: string) =>
  `<a:graphic xmlns:a="${A}"><a:graphicData uri="${C}"><c:chart xmlns:c="${C}" xmlns:r="${R}" r:id="${id}"/></a:graphicData></a:graphic>`;

const CHART_TYPE = 'application/vnd.openxmlformats-officedocument.drawingml.chart+xml';

/** A block of a `docx()`: a paragraph (a heading, or with a reviewer's comment on it), a paragraph's raw XML, a table, or a chart. */
export type DocxBlock =
  | { text: string; heading?: boolean; comment?: { initials: string; text: string } }
  | { xml: string }
  | { table: string[][] }
  | { chart: ChartSpec };

/** A DOCX of these blocks, with core properties when given. */
export function docx(blocks: DocxBlock[], properties?: { title?: string; created?: string }): Buffer {
  const run = (text: string) => `<w:r><w:t xml:space="preserve">${escapeXml(text)}</w:t></w:r>`;
  const comments: string[] = [];
  const charts: ChartSpec[] = [];
  const body = blocks
    .map((block) => {
      if ('xml' in block) return `<w:p>${block.xml}</w:p>`;
      if ('chart' in block) {
        charts.push(block.chart);
        return `<w:p><w:r><w:drawing><wp:inline><wp:extent cx="5486400" cy="3200400"/><wp:docPr id="${charts.length}" name="Chart ${charts.length}"/>${chartGraphic(`rIdC${charts.length}`)}</wp:inline></w:drawing></w:r></w:p>`;
      }
      if ('table' in block)
        return `<w:tbl>${block.table.map((row) => `<w:tr>${row.map((cell) => `<w:tc><w:p>${run(cell)}</w:p></w:tc>`).join('')}</w:tr>`).join('')}</w:tbl>`;
      const style = block.heading ? '<w:pPr><w:pStyle w:val="Heading1"/></w:pPr>' : '';
      if (!block.comment) return `<w:p>${style}${run(block.text)}</w:p>`;
      const id = comments.length;
      comments.push(
        `<w:comment w:id="${id}" w:initials="${escapeXml(block.comment.initials)}"><w:p>${run(block.comment.text)}</w:p></w:comment>`,
      );
      return `<w:p>${style}<w:commentRangeStart w:id="${id}"/>${run(block.text)}<w:commentRangeEnd w:id="${id}"/><w:r><w:commentReference w:id="${id}"/></w:r></w:p>`;
    })
    .join('');
  const commentsRel = comments.length > 0 ? `<Relationship Id="rId2" Type="${R}/comments" Target="comments.xml"/>` : '';
  const chartRels = charts
    .map((_, i) => `<Relationship Id="rIdC${i + 1}" Type="${R}/chart" Target="charts/chart${i + 1}.xml"/>`)
    .join('');
  return zip([
    {
      name: '[Content_Types].xml',
      data:
        '<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">' +
        '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>' +
        '<Default Extension="xml" ContentType="application/xml"/>' +
        '<Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/>' +
        '<Override PartName="/word/styles.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.styles+xml"/>' +
        charts
          .map((_, i) => `<Override PartName="/word/charts/chart${i + 1}.xml" ContentType="${CHART_TYPE}"/>`)
          .join('') +
        '</Types>',
    },
    {
      name: '_rels/.rels',
      data: `<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="${R}/officeDocument" Target="word/document.xml"/></Relationships>`,
    },
    {
      name: 'word/_rels/document.xml.rels',
      data: `<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="${R}/styles" Target="styles.xml"/>${commentsRel}${chartRels}</Relationships>`,
    },
    {
      name: 'word/styles.xml',
      data: `<?xml version="1.0" encoding="UTF-8"?><w:styles xmlns:w="${W}"><w:style w:type="paragraph" w:styleId="Heading1"><w:name w:val="heading 1"/></w:style></w:styles>`,
    },
    {
      name: 'word/document.xml',
      data: `<?xml version="1.0" encoding="UTF-8"?><w:document xmlns:w="${W}" xmlns:m="${M}" xmlns:wp="${WP}"><w:body>${body}</w:body></w:document>`,
    },
    ...charts.map((chart, i) => ({ name: `word/charts/chart${i + 1}.xml`, data: chartXml(chart) })),
    ...(comments.length > 0
      ? [
          {
            name: 'word/comments.xml',
            data: `<?xml version="1.0" encoding="UTF-8"?><w:comments xmlns:w="${W}">${comments.join('')}</w:comments>`,
          },
        ]
      : []),
    ...(properties
      ? [
          {
            name: 'docProps/core.xml',
            data:
              '<?xml version="1.0" encoding="UTF-8"?><cp:coreProperties xmlns:cp="http://schemas.openxmlformats.org/package/2006/metadata/core-properties" xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:dcterms="http://purl.org/dc/terms/" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">' +
              `<dc:title>${escapeXml(properties.title ?? '')}</dc:title>` +
              (properties.created
                ? `<dcterms:created xsi:type="dcterms:W3CDTF">${properties.created}</dcterms:created>`
                : '') +
              '</cp:coreProperties>',
          },
        ]
      : []),
  ]);
}

const S = 'http://schemas.openxmlformats.org/spreadsheetml/2006/main';
const XDR = 'http://schemas.openxmlformats.org/drawingml/2006/spreadsheetDrawing';

/** A sheet of an `xlsx()`: its name, its rows (strings inline, numbers as numbers), the charts its drawing holds. */
export interface XlsxSheet {
  name: string;
  rows: Array<Array<string | number>>;
  charts?: ChartSpec[];
}

/**
 * An XLSX of these sheets as Excel lays one out: the workbook names each sheet by relationship,
 * a sheet with charts draws them in its drawing (`xl/drawings/drawingN.xml`), each chart its part
 * (`xl/charts/chartN.xml`).
 */
export function xlsx(sheets: XlsxSheet[]): Buffer {
  const column = (i: number) => String.fromCharCode(65 + i);
  const entries: Array<{ name: string; data: string }> = [];
  const overrides: string[] = [];
  let chartCount = 0;
  sheets.forEach((sheet, s) => {
    const n = s + 1;
    const rows = sheet.rows
      .map(
        (row, r) =>
          `<row r="${r + 1}">${row
            .map((cell, c) =>
              typeof cell === 'number'
                ? `<c r="${column(c)}${r + 1}"><v>${cell}</v></c>`
                : `<c r="${column(c)}${r + 1}" t="inlineStr"><is><t>${escapeXml(cell)}</t></is></c>`,
            )
            .join('')}</row>`,
      )
      .join('');
    const charts = sheet.charts ?? [];
    const drawing = charts.length > 0 ? '<drawing r:id="rId1"/>' : '';
    entries.push({
      name: `xl/worksheets/sheet${n}.xml`,
      data: `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><worksheet xmlns="${S}" xmlns:r="${R}"><sheetData>${rows}</sheetData>${drawing}</worksheet>`,
    });
    overrides.push(
      `<Override PartName="/xl/worksheets/sheet${n}.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/>`,
    );
    if (charts.length === 0) return;
    entries.push({
      name: `xl/worksheets/_rels/sheet${n}.xml.rels`,
      data: `<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="${RELS}"><Relationship Id="rId1" Type="${R}/drawing" Target="../drawings/drawing${n}.xml"/></Relationships>`,
    });
    const anchors: string[] = [];
    const rels: string[] = [];
    for (const [i, chart] of charts.entries()) {
      chartCount += 1;
      anchors.push(
        `<xdr:twoCellAnchor><xdr:from><xdr:col>4</xdr:col><xdr:colOff>0</xdr:colOff><xdr:row>${i * 16}</xdr:row><xdr:rowOff>0</xdr:rowOff></xdr:from>` +
          `<xdr:to><xdr:col>12</xdr:col><xdr:colOff>0</xdr:colOff><xdr:row>${i * 16 + 15}</xdr:row><xdr:rowOff>0</xdr:rowOff></xdr:to>` +
          `<xdr:graphicFrame macro=""><xdr:nvGraphicFramePr><xdr:cNvPr id="${i + 2}" name="Chart ${i + 1}"/><xdr:cNvGraphicFramePr/></xdr:nvGraphicFramePr>` +
          `<xdr:xfrm><a:off x="0" y="0"/><a:ext cx="0" cy="0"/></xdr:xfrm>${chartGraphic(`rId${i + 1}`)}</xdr:graphicFrame><xdr:clientData/></xdr:twoCellAnchor>`,
      );
      rels.push(`<Relationship Id="rId${i + 1}" Type="${R}/chart" Target="../charts/chart${chartCount}.xml"/>`);
      entries.push({ name: `xl/charts/chart${chartCount}.xml`, data: chartXml(chart) });
      overrides.push(`<Override PartName="/xl/charts/chart${chartCount}.xml" ContentType="${CHART_TYPE}"/>`);
    }
    entries.push(
      {
        name: `xl/drawings/drawing${n}.xml`,
        data: `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><xdr:wsDr xmlns:xdr="${XDR}" xmlns:a="${A}">${anchors.join('')}</xdr:wsDr>`,
      },
      {
        name: `xl/drawings/_rels/drawing${n}.xml.rels`,
        data: `<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="${RELS}">${rels.join('')}</Relationships>`,
      },
    );
    overrides.push(
      `<Override PartName="/xl/drawings/drawing${n}.xml" ContentType="application/vnd.openxmlformats-officedocument.drawing+xml"/>`,
    );
  });
  return zip([
    {
      name: '[Content_Types].xml',
      data:
        '<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">' +
        `<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/>` +
        '<Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/>' +
        `${overrides.join('')}</Types>`,
    },
    {
      name: '_rels/.rels',
      data: `<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="${RELS}"><Relationship Id="rId1" Type="${R}/officeDocument" Target="xl/workbook.xml"/></Relationships>`,
    },
    {
      name: 'xl/workbook.xml',
      data: `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><workbook xmlns="${S}" xmlns:r="${R}"><sheets>${sheets
        .map((sheet, s) => `<sheet name="${escapeXml(sheet.name)}" sheetId="${s + 1}" r:id="rId${s + 1}"/>`)
        .join('')}</sheets></workbook>`,
    },
    {
      name: 'xl/_rels/workbook.xml.rels',
      data: `<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="${RELS}">${sheets
        .map((_, s) => `<Relationship Id="rId${s + 1}" Type="${R}/worksheet" Target="worksheets/sheet${s + 1}.xml"/>`)
        .join('')}</Relationships>`,
    },
    ...entries,
  ]);
}
