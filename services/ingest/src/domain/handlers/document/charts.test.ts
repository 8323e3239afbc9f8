import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import JSZip from 'jszip';
import { missingTool } from '@memex/testing';
import { chartXml, docx, xlsx, type ChartSpec } from '../testing/build.js';
import { parseDoc } from '../testing/parse.js';

const DOCX = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';
const XLSX = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';
const ODT = 'application/vnd.oasis.opendocument.text';
const ODS = 'application/vnd.oasis.opendocument.spreadsheet';

const sales: ChartSpec = {
  title: 'Sales by year',
  categories: ['2022', '2023'],
  series: [
    { name: 'Boats', values: [31, 44] },
    { name: 'Sails & masts', values: [7, 9.5] },
  ],
};

/** The chart's text as every reader writes it: title, the series' names, a row per category. */
const SALES = ['Sales by year', '\tBoats\tSails & masts', '2022\t31\t7', '2023\t44\t9.5'];

const report = () =>
  docx([
    { text: 'Annual report', heading: true },
    { text: 'Sales grew, as the chart shows.' },
    { chart: sales },
    { text: 'Next year we expect more.' },
  ]);

const workbook = () =>
  xlsx([
    {
      name: 'Data',
      rows: [
        ['Year', 'Boats'],
        ['2022', 31],
      ],
    },
    { name: 'Summary', rows: [['See the charts']], charts: [sales, { ...sales, title: 'Second chart' }] },
    {
      name: 'Only a chart',
      rows: [],
      charts: [{ title: 'Alone', categories: ['x'], series: [{ name: 'y', values: [1] }] }],
    },
  ]);

const skipLibreOffice = missingTool('soffice', ['--version'], 'apt-get install libreoffice');

describe('charts in Word, Excel and OpenDocument files: their title, series and values, where they stand', () => {
  it('a Word report: the chart at its place in the body, a row per category with each series', async () => {
    const item = await parseDoc(DOCX, report(), { filename: 'report.docx' });
    // mammoth's text has a table's cells a space apart, as the chart's.
    assert.equal(
      item.text,
      [
        'Annual report',
        '',
        'Sales grew, as the chart shows.',
        '',
        ...SALES.map((line) => line.replace(/\t/g, ' ').trim()),
        '',
        'Next year we expect more.',
      ].join('\n'),
    );
    assert.deepEqual(item.warnings, []);
  });

  it('a Word chart whose part is missing, or drawn in alternate content, is left out or read, not a failure', async () => {
    const zip = await JSZip.loadAsync(report());
    zip.remove('word/charts/chart1.xml');
    const item = await parseDoc(DOCX, await zip.generateAsync({ type: 'nodebuffer' }), { filename: 'report.docx' });
    assert.equal(item.text, 'Annual report\n\nSales grew, as the chart shows.\n\nNext year we expect more.');
    const alternate = await JSZip.loadAsync(report());
    const body = await alternate.file('word/document.xml')!.async('string');
    alternate.file(
      'word/document.xml',
      body.replace(
        /<w:drawing>[\s\S]*?<\/w:drawing>/,
        (drawing) =>
          `<mc:AlternateContent xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006"><mc:Choice Requires="c14">${drawing}</mc:Choice><mc:Fallback><w:t>no chart here</w:t></mc:Fallback></mc:AlternateContent>`,
      ),
    );
    const read = await parseDoc(DOCX, await alternate.generateAsync({ type: 'nodebuffer' }), { filename: 'a.docx' });
    assert.match(read.text, /Sales by year\nBoats Sails & masts\n2022 31 7\n2023 44 9\.5/);
    assert.doesNotMatch(read.text, /no chart here/);
  });

  it('an Excel workbook: each chart after the cells of the sheet that draws it, under its name, sheets in the workbook order', async () => {
    const item = await parseDoc(XLSX, workbook(), { filename: 'sales.xlsx' });
    assert.equal(
      item.text,
      [
        'Data\nYear\tBoats\n2022\t31',
        ['Summary', 'See the charts', ...SALES, 'Second chart', ...SALES.slice(1)].join('\n'),
        'Only a chart\nAlone\n\ty\nx\t1',
      ].join('\n\n'),
    );
    assert.deepEqual(item.warnings, []);

    // The workbook's order, not the parts' numbers: sheet2.xml listed first comes first.
    const zip = await JSZip.loadAsync(workbook());
    const listing = await zip.file('xl/workbook.xml')!.async('string');
    zip.file('xl/workbook.xml', listing.replace(/(<sheet [^>]*\/>)(<sheet [^>]*\/>)/, '$2$1'));
    const reordered = await parseDoc(XLSX, await zip.generateAsync({ type: 'nodebuffer' }), { filename: 's.xlsx' });
    assert.match(reordered.text, /^Summary\n[\s\S]*\n\nData\n/);
  });

  it('an Excel chart sheet (a sheet that is one chart) is read under its name, in its place among the sheets', async () => {
    const zip = await JSZip.loadAsync(workbook());
    const rels = (body: string) =>
      `<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">${body}</Relationships>`;
    const rel = (id: string, type: string, target: string) =>
      `<Relationship Id="${id}" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/${type}" Target="${target}"/>`;
    const listing = await zip.file('xl/workbook.xml')!.async('string');
    zip.file('xl/workbook.xml', listing.replace('<sheets>', '<sheets><sheet name="Trend" sheetId="9" r:id="rId9"/>'));
    const targets = await zip.file('xl/_rels/workbook.xml.rels')!.async('string');
    zip.file(
      'xl/_rels/workbook.xml.rels',
      targets.replace('</Relationships>', `${rel('rId9', 'chartsheet', 'chartsheets/sheet1.xml')}</Relationships>`),
    );
    zip.file(
      'xl/chartsheets/sheet1.xml',
      '<chartsheet xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><drawing r:id="rId1"/></chartsheet>',
    );
    zip.file('xl/chartsheets/_rels/sheet1.xml.rels', rels(rel('rId1', 'drawing', '../drawings/drawing9.xml')));
    zip.file(
      'xl/drawings/drawing9.xml',
      '<xdr:wsDr><xdr:absoluteAnchor><xdr:graphicFrame><a:graphic><a:graphicData><c:chart r:id="rId1"/></a:graphicData></a:graphic></xdr:graphicFrame></xdr:absoluteAnchor></xdr:wsDr>',
    );
    // An absolute target, as some writers give one.
    zip.file('xl/drawings/_rels/drawing9.xml.rels', rels(rel('rId1', 'chart', '/xl/charts/chart9.xml')));
    zip.file(
      'xl/charts/chart9.xml',
      chartXml({ title: 'Trend', categories: ['Q1'], series: [{ name: 'Visits', values: [120] }] }),
    );
    const item = await parseDoc(XLSX, await zip.generateAsync({ type: 'nodebuffer' }), { filename: 'trend.xlsx' });
    assert.match(item.text, /^Trend\nTrend\n\tVisits\nQ1\t120\n\nData\n/);
    assert.deepEqual(item.warnings, []);
  });

  it("OpenDocument: a chart object at its place in a text, after its sheet's cells in a spreadsheet", async () => {
    const object =
      '<office:document-content><office:body><office:chart><chart:chart><chart:title><text:p>Sales by year</text:p></chart:title>' +
      '<table:table table:name="local-table"><table:table-header-rows><table:table-row><table:table-cell><text:p/></table:table-cell>' +
      '<table:table-cell><text:p>Boats</text:p></table:table-cell><table:table-cell><text:p>Sails &amp; masts</text:p></table:table-cell></table:table-row></table:table-header-rows>' +
      '<table:table-rows><table:table-row><table:table-cell><text:p>2022</text:p></table:table-cell><table:table-cell><text:p>31</text:p></table:table-cell><table:table-cell><text:p>7</text:p></table:table-cell></table:table-row>' +
      '<table:table-row><table:table-cell><text:p>2023</text:p></table:table-cell><table:table-cell><text:p>44</text:p></table:table-cell><table:table-cell><text:p>9.5</text:p></table:table-cell></table:table-row></table:table-rows></table:table>' +
      '</chart:chart></office:chart></office:body></office:document-content>';
    const frame = '<draw:frame><draw:object xlink:href="./Object 1" xlink:type="simple"/></draw:frame>';
    const odf = async (body: string) => {
      const zip = new JSZip();
      zip.file('content.xml', `<office:document-content><office:body>${body}</office:body></office:document-content>`);
      zip.file('Object 1/content.xml', object);
      return zip.generateAsync({ type: 'nodebuffer', compression: 'DEFLATE' });
    };
    const text = await parseDoc(
      ODT,
      await odf(`<office:text><text:p>Before</text:p><text:p>${frame}</text:p><text:p>After</text:p></office:text>`),
    );
    assert.equal(text.text, ['Before', ...SALES, '', 'After'].join('\n'));
    const sheet = await parseDoc(
      ODS,
      await odf(
        `<office:spreadsheet><table:table table:name="Data"><table:shapes>${frame}</table:shapes><table:table-row><table:table-cell><text:p>Year</text:p></table:table-cell></table:table-row></table:table></office:spreadsheet>`,
      ),
    );
    assert.equal(sheet.text, ['Data', 'Year', ...SALES].join('\n'));
  });

  it(
    'files LibreOffice wrote (our report and workbook saved again as .docx, .xlsx, .odt and .ods): their charts read',
    { skip: skipLibreOffice, timeout: 180_000 },
    async () => {
      const dir = mkdtempSync(path.join(tmpdir(), 'memex-charts-'));
      try {
        writeFileSync(path.join(dir, 'report.docx'), report());
        writeFileSync(path.join(dir, 'workbook.xlsx'), workbook());
        const convert = (file: string, to: string) =>
          execFileSync(
            'soffice',
            [
              `-env:UserInstallation=file://${dir}/profile`,
              '--headless',
              '--convert-to',
              to,
              '--outdir',
              `${dir}/out`,
              file,
            ],
            { cwd: dir, stdio: 'ignore', timeout: 120_000 },
          );
        for (const [file, to] of [
          ['report.docx', 'docx'],
          ['report.docx', 'odt'],
          ['workbook.xlsx', 'xlsx'],
          ['workbook.xlsx', 'ods'],
        ] as const)
          convert(file, to);
        const read = async (type: string, name: string) =>
          (await parseDoc(type, readFileSync(path.join(dir, 'out', name)), { filename: name })).text;
        const spaced = SALES.map((line) => line.replace(/\t/g, ' ').trim()).join('\n');
        assert.match(await read(DOCX, 'report.docx'), new RegExp(`shows\\.\\n\\n${escape(spaced)}\\n\\nNext year`));
        assert.match(await read(ODT, 'report.odt'), new RegExp(`shows\\.\\n${escape(SALES.join('\n'))}\\n+Next year`));
        for (const [type, name] of [
          [XLSX, 'workbook.xlsx'],
          [ODS, 'workbook.ods'],
        ] as const) {
          const text = await read(type, name);
          // (LibreOffice's .ods has a sheet's empty rows: a blank line before its charts.)
          assert.match(
            text,
            new RegExp(`Summary\\nSee the charts\\n+${escape(SALES.join('\n'))}\\nSecond chart\\n`),
            name,
          );
          assert.match(text, /Only a chart\n+Alone\n\ty\nx\t1/, name);
        }
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  );
});

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
