import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import JSZip from 'jszip';
import { documentTypeFor } from './document-handler.js';
import { CORPUS_SKIP, fixture } from '../testing/build.js';
import { parseDoc, rejection } from '../testing/parse.js';

const XLSX = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';
const PPTX = 'application/vnd.openxmlformats-officedocument.presentationml.presentation';
const ODT = 'application/vnd.oasis.opendocument.text';
const ODS = 'application/vnd.oasis.opendocument.spreadsheet';

/** A zip of the given parts, deflated as office suites write them. */
const zipOf = (parts: Record<string, string>) => {
  const zip = new JSZip();
  for (const [name, content] of Object.entries(parts)) zip.file(name, content);
  return zip.generateAsync({ type: 'nodebuffer', compression: 'DEFLATE' });
};

const core = (title: string, created: string) =>
  `<?xml version="1.0" encoding="UTF-8"?><cp:coreProperties xmlns:cp="http://schemas.openxmlformats.org/package/2006/metadata/core-properties" xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:dcterms="http://purl.org/dc/terms/"><dc:title>${title}</dc:title><dcterms:created>${created}</dcterms:created></cp:coreProperties>`;

describe('documents: RTF, spreadsheets, presentations, OpenDocument and e-books', () => {
  it('RTF: its text, code-page and \\u characters decoded, font tables and the info group left out', async () => {
    const rtf = Buffer.from(
      "{\\rtf1\\ansi\\ansicpg1252\\deff0{\\fonttbl{\\f0 Times New Roman;}}{\\info{\\author Ann}}\\f0\\fs24 Caf\\'e9 meeting notes\\par Budget: 40 \\u8364? for the venue.\\par}",
      'latin1',
    );
    const item = await parseDoc('application/rtf', rtf, { filename: 'minutes.rtf' });
    assert.equal(item.text, 'Café meeting notes\nBudget: 40 € for the venue.');
    assert.equal(item.title, 'minutes.rtf');
    assert.equal(item.meta.format, 'rtf');
    assert.match((await rejection(parseDoc('application/rtf', 'plain words'))).reason, /not an RTF file/);
  });

  it('a spreadsheet (.xlsx): each sheet under its name, cells row by row, shared and inline strings and numbers', async () => {
    const bytes = await zipOf({
      'xl/workbook.xml':
        '<workbook><sheets><sheet name="Budget &amp; costs" sheetId="1"/><sheet name="Notes" sheetId="2"/></sheets></workbook>',
      'xl/sharedStrings.xml': '<sst><si><t>Venue</t></si><si><r><t>Cat</t></r><r><t>ering</t></r></si></sst>',
      'xl/worksheets/sheet1.xml':
        '<worksheet><sheetData><row r="1"><c r="A1" t="s"><v>0</v></c><c r="B1"><v>1200</v></c></row><row r="2"><c r="A2" t="s"><v>1</v></c><c r="B2"><v>850.5</v></c></row></sheetData></worksheet>',
      'xl/worksheets/sheet2.xml':
        '<worksheet><sheetData><row r="1"><c r="A1" t="inlineStr"><is><t>Ask the caterer &lt;today&gt;</t></is></c></row></sheetData></worksheet>',
      'docProps/core.xml': core('Offsite budget', '2019-03-04T09:00:00Z'),
    });
    assert.equal(documentTypeFor('application/octet-stream', 'budget.xlsx'), XLSX);
    const item = await parseDoc(XLSX, bytes, { filename: 'budget.xlsx' });
    assert.equal(item.text, 'Budget & costs\nVenue\t1200\nCatering\t850.5\n\nNotes\nAsk the caterer <today>');
    assert.equal(item.title, 'Offsite budget');
    assert.equal(item.occurredAt, '2019-03-04T09:00:00.000Z');
  });

  it('a spreadsheet date cell is its date, by its number format (built-in or custom), in either date system', async () => {
    const sheet = (date1904: boolean) =>
      zipOf({
        'xl/workbook.xml': `<workbook><workbookPr${date1904 ? ' date1904="1"' : ''}/><sheets><sheet name="Log" sheetId="1"/></sheets></workbook>`,
        'xl/styles.xml':
          '<styleSheet><numFmts count="1"><numFmt numFmtId="164" formatCode="d&quot; &quot;mmm yyyy h:mm"/></numFmts>' +
          '<cellXfs count="4"><xf numFmtId="0"/><xf numFmtId="14" applyNumberFormat="1"/><xf numFmtId="164"/><xf numFmtId="4"/></cellXfs></styleSheet>',
        'xl/worksheets/sheet1.xml':
          '<worksheet><sheetData><row r="1"><c r="A1" s="1"><v>43831</v></c><c r="B1" s="2"><v>43831.5729166667</v></c>' +
          '<c r="C1" s="3"><v>43831</v></c><c r="D1"><v>7</v></c></row></sheetData></worksheet>',
      });
    assert.equal((await parseDoc(XLSX, await sheet(false))).text, 'Log\n2020-01-01\t2020-01-01 13:45\t43831\t7');
    assert.equal((await parseDoc(XLSX, await sheet(true))).text, 'Log\n2024-01-02\t2024-01-02 13:45\t43831\t7');
  });

  it('a presentation (.pptx): slides in order (10 after 9), each with its notes; the first slide title is the title', async () => {
    const slide = (title: string, body: string) =>
      `<p:sld><p:cSld><p:spTree><p:sp><p:txBody><a:p><a:r><a:t>${title}</a:t></a:r></a:p></p:txBody></p:sp><p:sp><p:txBody><a:p><a:r><a:t>${body}</a:t></a:r><a:r><a:t> here</a:t></a:r></a:p></p:txBody></p:sp></p:spTree></p:cSld></p:sld>`;
    const parts: Record<string, string> = {};
    for (let i = 1; i <= 10; i++) parts[`ppt/slides/slide${i}.xml`] = slide(`Slide ${i}`, `Point ${i}`);
    parts['ppt/notesSlides/notesSlide2.xml'] =
      '<p:notes><a:p><a:r><a:t>Say the numbers slowly</a:t></a:r></a:p><a:p><a:r><a:t>2</a:t></a:r></a:p></p:notes>';
    const item = await parseDoc(PPTX, await zipOf(parts), { filename: 'kickoff.pptx' });
    const slides = item.text.split('\n\n');
    assert.equal(slides.length, 10);
    assert.equal(slides[1], 'Slide 2\nPoint 2 here\nSay the numbers slowly');
    assert.equal(slides[9], 'Slide 10\nPoint 10 here');
    assert.equal(item.title, 'Slide 1');
  });

  it("a presentation's table rows, its pictures' alt text and its charts' titles and numbers", async () => {
    const cell = (text: string) => `<a:tc><a:txBody><a:p><a:r><a:t>${text}</a:t></a:r></a:p></a:txBody></a:tc>`;
    const pt = (i: number, v: string) => `<c:pt idx="${i}"><c:v>${v}</c:v></c:pt>`;
    const item = await parseDoc(
      PPTX,
      await zipOf({
        'ppt/slides/slide1.xml':
          '<p:sld><p:cSld><p:spTree><p:sp><p:txBody><a:p><a:r><a:t>Results</a:t></a:r></a:p></p:txBody></p:sp>' +
          `<p:graphicFrame><a:graphic><a:graphicData><a:tbl><a:tr>${cell('Region')}${cell('Q1 &amp; Q2')}</a:tr><a:tr>${cell('North')}${cell('12')}</a:tr></a:tbl></a:graphicData></a:graphic></p:graphicFrame>` +
          '<p:pic><p:nvPicPr><p:cNvPr id="4" name="Picture 3" descr="Our team at the &quot;harbour&quot; offsite"/></p:nvPicPr></p:pic>' +
          '<p:graphicFrame><a:graphic><a:graphicData><c:chart r:id="rId2"/></a:graphicData></a:graphic></p:graphicFrame>' +
          '</p:spTree></p:cSld></p:sld>',
        'ppt/slides/_rels/slide1.xml.rels':
          '<Relationships><Relationship Id="rId2" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/chart" Target="../charts/chart7.xml"/></Relationships>',
        'ppt/charts/chart7.xml':
          '<c:chartSpace><c:chart><c:title><c:tx><c:rich><a:p><a:r><a:t>Sales by year</a:t></a:r></a:p></c:rich></c:tx></c:title><c:plotArea><c:barChart>' +
          `<c:ser><c:tx><c:strRef><c:strCache><c:pt idx="0"><c:v>Boats</c:v></c:pt></c:strCache></c:strRef></c:tx><c:cat><c:strRef><c:strCache>${pt(0, '2022')}${pt(1, '2023')}</c:strCache></c:strRef></c:cat><c:val><c:numRef><c:numCache>${pt(0, '31')}${pt(1, '44')}</c:numCache></c:numRef></c:val></c:ser>` +
          `<c:ser><c:tx><c:v>Sails</c:v></c:tx><c:val><c:numRef><c:numCache>${pt(0, '7')}${pt(1, '9')}</c:numCache></c:numRef></c:val></c:ser>` +
          '</c:barChart></c:plotArea></c:chart></c:chartSpace>',
      }),
    );
    assert.equal(
      item.text,
      [
        'Results',
        'Region Q1 & Q2',
        'North 12',
        'Our team at the "harbour" offsite',
        'Sales by year',
        '\tBoats\tSails',
        '2022\t31\t7',
        '2023\t44\t9',
      ].join('\n'),
    );
  });

  it('OpenDocument text and spreadsheets: headings, paragraphs with their spaces and tabs, tables; the title and date of meta.xml', async () => {
    const odt = await zipOf({
      'content.xml':
        '<office:document-content><office:body><office:text><text:h text:outline-level="1">Trip report</text:h><text:p>We left at<text:s text:c="2"/>dawn.<text:tab/>Tide:<text:line-break/>low</text:p><table:table table:name="Costs"><table:table-row><table:table-cell><text:p>Fuel</text:p></table:table-cell><table:table-cell><text:p>40</text:p></table:table-cell></table:table-row></table:table></office:text></office:body></office:document-content>',
      'meta.xml':
        '<office:document-meta><office:meta><meta:creation-date>2012-08-01T07:30:00</meta:creation-date></office:meta></office:document-meta>',
    });
    const trip = await parseDoc(ODT, odt, { filename: 'trip.odt' });
    assert.equal(trip.text, 'Trip report\nWe left at  dawn.\tTide:\nlow\n\nCosts\nFuel\t40');
    assert.equal(trip.title, 'Trip report');
    assert.equal(trip.occurredAt, '2012-08-01T07:30:00.000Z');

    const ods = await zipOf({
      'content.xml':
        '<office:document-content><office:body><office:spreadsheet><table:table table:name="Members"><table:table-row><table:table-cell><text:p>Zoë</text:p></table:table-cell><table:table-cell/><table:table-cell><text:p>paid</text:p></table:table-cell></table:table-row></table:table></office:spreadsheet></office:body></office:document-content>',
    });
    assert.match((await parseDoc(ODS, ods, { filename: 'club.ods' })).text, /^Members\nZoë\t\tpaid$/);
  });

  it("an e-book (.epub): chapters in the spine's order, not the manifest's; the contents page left out; title and date of the package", async () => {
    const chapter = (title: string, body: string) =>
      `<?xml version="1.0" encoding="utf-8"?><html xmlns="http://www.w3.org/1999/xhtml"><head><title>${title}</title></head><body><h1>${title}</h1><p>${body}</p></body></html>`;
    const bytes = await zipOf({
      mimetype: 'application/epub+zip',
      'META-INF/container.xml':
        '<container><rootfiles><rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/></rootfiles></container>',
      'OEBPS/content.opf': `<package><metadata><dc:title>The Lighthouse Keeper</dc:title><dc:date>1998-05-01</dc:date></metadata>
        <manifest><item id="c2" href="Text/chapter%202.xhtml" media-type="application/xhtml+xml"/>
        <item id="c1" href="Text/chapter1.xhtml" media-type="application/xhtml+xml"/>
        <item id="toc" href="nav.xhtml" properties="nav" media-type="application/xhtml+xml"/></manifest>
        <spine><itemref idref="toc"/><itemref idref="c1"/><itemref idref="c2"/></spine></package>`,
      'OEBPS/nav.xhtml': chapter('Contents', 'Chapter One, Chapter Two'),
      'OEBPS/Text/chapter1.xhtml': chapter('Chapter One', 'The lamp was lit at dusk.'),
      'OEBPS/Text/chapter 2.xhtml': chapter('Chapter Two', 'A storm came in from the west.'),
    });
    const book = await parseDoc('application/epub+zip', bytes, { filename: 'keeper.epub' });
    assert.equal(
      book.text,
      'Chapter One\n\nThe lamp was lit at dusk.\n\nChapter Two\n\nA storm came in from the west.',
    );
    assert.equal(book.title, 'The Lighthouse Keeper');
    assert.equal(book.occurredAt, '1998-05-01T00:00:00.000Z');
    assert.deepEqual(book.warnings, []);

    // A chapter the spine lists that the zip does not hold: the rest is read, the gap is said.
    const zip = await JSZip.loadAsync(bytes);
    zip.remove('OEBPS/Text/chapter1.xhtml');
    const gap = await parseDoc('application/epub+zip', await zip.generateAsync({ type: 'nodebuffer' }), {
      filename: 'keeper.epub',
    });
    assert.equal(gap.text, 'Chapter Two\n\nA storm came in from the west.');
    assert.deepEqual(gap.warnings, ['OEBPS/Text/chapter1.xhtml is named but not in the file: left out']);
  });

  it('a file that is no zip, or a zip without the parts, is rejected saying which; a zip bomb stops at its limit', async () => {
    assert.match((await rejection(parseDoc(XLSX, 'not a zip'))).reason, /not a readable xlsx file/);
    const empty = await zipOf({ 'readme.txt': 'hello' });
    assert.match((await rejection(parseDoc(PPTX, empty))).reason, /not a readable pptx file: it has no/);
    assert.match((await rejection(parseDoc(XLSX, empty))).reason, /it has no xl\/workbook\.xml/);
    const bomb = await zipOf({
      'xl/workbook.xml': '<workbook><sheets><sheet name="Big"/><sheet name="Small"/></sheets></workbook>',
      'xl/worksheets/sheet1.xml': `<worksheet><!--${' '.repeat(70 * 1024 * 1024)}--></worksheet>`,
      'xl/worksheets/sheet2.xml':
        '<worksheet><sheetData><row><c t="inlineStr"><is><t>never read</t></is></c></row></sheetData></worksheet>',
    });
    assert.ok(bomb.length < 1024 * 1024, `the bomb is ${bomb.length} bytes`);
    const item = await parseDoc(XLSX, bomb, { filename: 'bomb.xlsx' });
    assert.doesNotMatch(item.text, /never read/);
    assert.match(
      item.warnings.join('\n'),
      /xl\/worksheets\/sheet1\.xml and what follows it were not read: more than 64 MB of XML/,
    );
  });

  it(
    "real files from document converters' test suites (read in place): RTF with a table, .odt, .xlsx, .pptx, .epub",
    { skip: CORPUS_SKIP },
    async () => {
      const read = (type: string, name: string) =>
        parseDoc(type, fixture(`docs/other-formats/${name}`), { filename: name });
      const rtf = await read('application/rtf', 'fake-doc.rtf');
      assert.match(rtf.text, /^My First Heading\nMy first paragraph\./);
      assert.match(rtf.text, /\nRow 1, Cell 1\tRow 1, Cell 2\nRow 2, Cell 1\tRow 2, Cell 2$/);
      const odt = await read(ODT, 'simple.odt');
      assert.equal(odt.title, 'These are a few of my favorite things:');
      assert.match(odt.text, /Parrots[\s\S]*Hockey[\s\S]*This is my first thought\./);
      const xlsx = await read(XLSX, 'test.xlsx');
      assert.equal(xlsx.title, 'test.xlsx', 'a sheet name is no title');
      assert.match(xlsx.text, /^Sheet1\nAlpha\tBeta\tGamma\tDelta\n89\t82\t100\t12\n/);
      assert.match(xlsx.text, /\nColA\tColB\tColC\tColD\n1\t2\t3\t4\n/);
      const pptx = await read(PPTX, 'test.pptx');
      assert.equal(pptx.title, 'AutoGen: Enabling Next-Gen LLM Applications via Multi-Agent Conversation');
      assert.match(pptx.text, /AutoGen is an open-source framework that allows developers to build LLM applications/);
      // A picture's alt text and a chart's title and numbers (markitdown's own checks of this file).
      assert.match(pptx.text, /The first page of the AutoGen ArXiv paper\. 44bf7d06-5e7a-4a40-a2e1-a2e42ef28c8a/);
      assert.match(pptx.text, /a3f6004b-6f4f-4ea8-bee3-3741f4dc385f\n\tSeries 1\n2000\t2000\n/);
      assert.match(pptx.text, /\n7 8 9 1b92870d-e3b5-4e65-8153-919f4ff45592 11 12\n/);
      const epub = await read('application/epub+zip', 'test.epub');
      assert.equal(epub.title, 'Test EPUB Document');
      assert.match(epub.text, /^Chapter 1: Test Content\n\nThis is a test paragraph[\s\S]*Chapter 2: More Content/);
    },
  );
});
