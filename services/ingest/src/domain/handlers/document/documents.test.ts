import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { typeOfFileName } from '@memex/contracts';
import { documentHandler, documentTypeFor } from './document-handler.js';
import { parsePdf, pdfDate } from './pdf.js';
import { decideOutcome } from '../outcome.js';
import { CORPUS_SKIP, docx, fixture, pdf } from '../testing/build.js';
import { encode } from '../testing/encode.js';
import { parseDoc, registry, rejection } from '../testing/parse.js';
import { webArchive } from '../testing/plist.js';
import JSZip from 'jszip';
import { unsnappy } from './iwork.js';
import { numbersDocument, pagesDocument } from '../testing/iwork.js';

const DOCX = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';

describe('documents: identity and titles', () => {
  it('is identified by the sha256 of its bytes', async () => {
    const bytes = Buffer.from('Some notes\n');
    const item = await parseDoc('text/plain', bytes);
    assert.equal(item.identity, `sha256:${createHash('sha256').update(bytes).digest('hex')}`);
    assert.equal(item.meta.size, bytes.length);
  });

  it('updates under the same source id when the content changes', async () => {
    const v1 = await parseDoc('text/plain', 'draft 1');
    const v2 = await parseDoc('text/plain', 'draft 2');
    assert.notEqual(v1.identity, v2.identity);
    assert.deepEqual(
      decideOutcome(documentHandler, v2.identity, {
        bySourceId: { id: 'd1', identity: v1.identity },
        byIdentity: null,
      }),
      { result: 'updated', id: 'd1' },
    );
  });

  it('takes the title from the attribute, then the document, then the file name, then the first line', async () => {
    const withTitle = pdf([['Body line']], { Title: 'Annual Report' });
    assert.equal((await parseDoc('application/pdf', withTitle, { title: 'Given', filename: 'f.pdf' })).title, 'Given');
    assert.equal((await parseDoc('application/pdf', withTitle, { filename: 'f.pdf' })).title, 'Annual Report');
    assert.equal(
      (await parseDoc('application/pdf', pdf([['Body line']], { Title: 'Untitled' }), { filename: 'f.pdf' })).title,
      'f.pdf',
    );
    // What printer drivers and Office's export put in Title: the source file's name, a placeholder.
    const printed = async (Title: string) =>
      (await parseDoc('application/pdf', pdf([['Body line']], { Title }), { filename: 'scan.pdf' })).title;
    assert.equal(await printed('Microsoft Word - Budget 2019.docx'), 'Budget 2019');
    assert.equal(await printed('zen_of_python.txt'), 'zen_of_python');
    assert.equal(await printed('Document1'), 'scan.pdf');
    assert.equal((await parseDoc('text/plain', '\n\n  First   line  \nsecond')).title, 'First line');
    assert.equal((await parseDoc('text/plain', '')).title, '(untitled)');
  });

  it('dates a document by its own date, else the modified attribute', async () => {
    const dated = pdf([['x']], { CreationDate: "D:20190415103000+02'00'" });
    assert.equal(
      (await parseDoc('application/pdf', dated, { modified: '2024-01-01T00:00:00Z' })).occurredAt,
      '2019-04-15T08:30:00.000Z',
    );
    assert.equal(
      (await parseDoc('text/plain', 'x', { modified: '2024-01-01T10:00:00+01:00' })).occurredAt,
      '2024-01-01T09:00:00.000Z',
    );
    assert.equal((await parseDoc('text/plain', 'x')).occurredAt, null);
  });

  it('maps attachment types and file extensions to readers', () => {
    assert.equal(documentTypeFor('application/pdf', null), 'application/pdf');
    assert.equal(documentTypeFor('application/octet-stream', 'Report.PDF'), 'application/pdf');
    assert.equal(documentTypeFor('text/plain', 'readme.md'), 'text/markdown');
    assert.equal(documentTypeFor('text/plain', 'index.rst'), 'text/x-rst');
    assert.equal(documentTypeFor('application/octet-stream', 'photo.jpg'), null);
    assert.equal(documentTypeFor('image/png', 'x.pdf'), null, 'a specific type is believed over the extension');
  });
});

describe('documents: PDF', () => {
  it('reads text page by page, numbered from 1', async () => {
    const item = await parseDoc(
      'application/pdf',
      pdf([['Chapter one', 'It begins (quietly).'], [], ['Chapter three']]),
    );
    assert.equal(item.meta.format, 'pdf');
    assert.deepEqual(item.meta.format === 'pdf' && item.meta.pages, [
      { page: 1, text: 'Chapter one\nIt begins (quietly).' },
      { page: 2, text: '' },
      { page: 3, text: 'Chapter three' },
    ]);
    assert.equal(item.text, 'Chapter one\nIt begins (quietly).\n\nChapter three');
  });

  it("reads a filled form's answers (text fields and choices, after their labels), which are not in the page's text", async () => {
    const item = await parseDoc(
      'application/pdf',
      pdf([['Form 1040 U.S. Individual Income Tax Return'], ['Sign here']], {}, [
        { page: 1, kind: 'Tx', name: 'f1_02', label: 'Your first name and middle initial', value: 'Ada K.' },
        { page: 1, kind: 'Tx', name: 'f1_04', value: '123-45-6789' },
        { page: 1, kind: 'Ch', name: 'status', label: 'Filing status', value: 'Married filing jointly' },
        { page: 1, kind: 'Btn', name: 'c1_1', label: 'Check if your spouse itemizes', value: 'Yes' },
        { page: 1, kind: 'Tx', name: 'f1_05', label: 'Apt. no.', value: '' },
        { page: 2, kind: 'Tx', name: 'occupation', label: 'Your occupation', value: 'Analyst' },
      ]),
    );
    assert.deepEqual(item.meta.format === 'pdf' && item.meta.pages, [
      {
        page: 1,
        text: 'Form 1040 U.S. Individual Income Tax Return\nYour first name and middle initial: Ada K.\n123-45-6789\nFiling status: Married filing jointly',
      },
      { page: 2, text: 'Sign here\nYour occupation: Analyst' },
    ]);
  });

  it('reads real PDFs, CJK text included', { skip: CORPUS_SKIP }, async () => {
    const rotated = await parseDoc('application/pdf', fixture('docs/pdf/unstructured/rotated-page-90.pdf'));
    assert.equal(rotated.text, 'Hello World Test Text\nSecond line of text here\nRotated page fixture');
    const kampo = await parseDoc('application/pdf', fixture('docs/pdf/pdfminer/kampo.pdf'));
    assert.match(kampo.text, /[\u4e00-\u9fff]{4}/, 'Japanese text comes out through the CMaps');
    const corrupted = await parseDoc('application/pdf', fixture('docs/pdf/pdfminer/zen_of_python_corrupted.pdf'));
    assert.match(corrupted.text, /Beautiful is better than ugly\./);
  });

  it('warns when a PDF has no text layer', async () => {
    const item = await parseDoc('application/pdf', pdf([[]]));
    assert.match(item.warnings[0] ?? '', /no text layer, and OCR found no text/);
  });

  it('rejects encrypted and invalid PDFs with a clear reason', { skip: CORPUS_SKIP }, async () => {
    assert.equal(
      (await rejection(parseDoc('application/pdf', fixture('docs/pdf/unstructured/password.pdf')))).reason,
      'the PDF is encrypted with a password',
    );
    assert.match((await rejection(parseDoc('application/pdf', 'this is not a PDF at all'))).reason, /^not a PDF: /);
  });

  it('contains what pdf.js leaves behind on a damaged file (unhandled rejections) in its worker', async () => {
    const seed = pdf([['Page one'], ['Page two']]).toString('latin1');
    // Found by the fuzz test: a run of objects pasted into the second page's MediaBox.
    const at = seed.indexOf('/MediaBox [0 0 6', seed.indexOf('6 0 obj')) + '/MediaBox [0 0 6'.length;
    const damaged =
      seed.slice(0, at) +
      seed.slice(seed.indexOf('R >>'), seed.indexOf('/Resources << /F', seed.indexOf('4 0 obj')) + 16) +
      seed.slice(at);
    const leaked: unknown[] = [];
    const listener = (reason: unknown) => leaked.push(reason);
    process.on('unhandledRejection', listener);
    try {
      const item = await parseDoc('application/pdf', Buffer.from(damaged, 'latin1'));
      assert.equal(item.meta.format, 'pdf');
      await new Promise((resolve) => setTimeout(resolve, 200));
    } finally {
      process.off('unhandledRejection', listener);
    }
    assert.deepEqual(leaked, []);
  });

  it('refuses a PDF that takes too long, and reads the next one with a fresh worker', async () => {
    const slow = await rejection(() => parsePdf(pdf([['x']]), 1));
    assert.equal(slow.reason, 'the PDF took longer than 0.001 s to read');
    assert.equal((await parsePdf(pdf([['after the timeout']]))).text, 'after the timeout');
  });

  it('parses PDF dates', () => {
    assert.equal(pdfDate('D:20231005000756Z'), '2023-10-05T00:07:56.000Z');
    assert.equal(pdfDate("D:20180530133107+02'00'"), '2018-05-30T11:31:07.000Z');
    assert.equal(pdfDate('D:2001'), '2001-01-01T00:00:00.000Z');
    assert.equal(pdfDate('yesterday'), null);
  });
});

describe('documents: DOCX', () => {
  it('reads paragraphs and headings; the first heading is the title', async () => {
    const item = await parseDoc(
      DOCX,
      docx([
        { text: 'Project Plan', heading: true },
        { text: 'Scope & goals for <2025>.' },
        { text: 'Risks', heading: true },
        { text: 'Few.' },
      ]),
    );
    assert.equal(item.title, 'Project Plan');
    assert.deepEqual(item.meta.format === 'docx' && item.meta.headings, ['Project Plan', 'Risks']);
    assert.match(item.text, /Scope & goals for <2025>\./);
    assert.match(item.text, /Few\./);
  });

  it('reads real Word files, tables included', { skip: CORPUS_SKIP }, async () => {
    const tables = await parseDoc(DOCX, fixture('docs/docx/mammoth/tables.docx'));
    assert.match(tables.text, /Top left/);
    assert.match(tables.text, /Bottom right/);
    const breaks = await parseDoc(DOCX, fixture('docs/docx/unstructured/page-breaks.docx'));
    assert.match(breaks.text, /First page/);
    assert.equal((await parseDoc(DOCX, fixture('docs/docx/mammoth/empty.docx'))).text, '');
  });

  it('takes the title and date a Word file states in its properties; an empty title gives way to the first heading', async () => {
    const stated = await parseDoc(
      DOCX,
      docx([{ text: 'Introduction', heading: true }, { text: 'Body' }], {
        title: 'Quarterly report & outlook',
        created: '2009-03-14T09:26:00Z',
      }),
    );
    assert.equal(stated.title, 'Quarterly report & outlook');
    assert.equal(stated.occurredAt, '2009-03-14T09:26:00.000Z');
    const unstated = await parseDoc(DOCX, docx([{ text: 'Introduction', heading: true }], { title: '  ' }));
    assert.equal(unstated.title, 'Introduction');
    assert.equal(unstated.occurredAt, null);
  });

  it("reads a Word file's tables row by row and its reviewers' comments after the text", async () => {
    const item = await parseDoc(
      DOCX,
      docx([
        { text: 'Budget draft', comment: { initials: 'AL', text: 'Check the rhubarb figures' } },
        {
          table: [
            ['Item', 'Cost'],
            ['Fuel', '40'],
          ],
        },
        { text: 'Footer' },
      ]),
    );
    assert.equal(
      item.text,
      'Budget draft\n\nItem Cost\nFuel 40\n\nFooter\n\nComment [AL1]\n\nCheck the rhubarb figures',
    );
  });

  it("keeps Word's equations as LaTeX (mammoth dropped them: 'For , the angle is .')", async () => {
    const r = (text: string) => `<m:r><m:t>${text}</m:t></m:r>`;
    const item = await parseDoc(
      DOCX,
      docx([
        {
          xml: `<w:r><w:t xml:space="preserve">For </w:t></w:r><m:oMath>${r('m=1')}</m:oMath><w:r><w:t>, then</w:t></w:r>`,
        },
        {
          xml:
            '<m:oMathPara><m:oMath>' +
            `<m:f><m:num>${r('a')}</m:num><m:den><m:sSup><m:e>${r('b')}</m:e><m:sup>${r('2')}</m:sup></m:sSup></m:den></m:f>` +
            `${r('=')}<m:rad><m:radPr><m:degHide m:val="1"/></m:radPr><m:deg/><m:e>${r('x')}</m:e></m:rad>` +
            `${r('+')}<m:nary><m:naryPr><m:chr m:val="∑"/></m:naryPr><m:sub>${r('i=1')}</m:sub><m:sup>${r('n')}</m:sup><m:e>${r('i')}</m:e></m:nary>` +
            `<m:d><m:dPr><m:begChr m:val="["/><m:endChr m:val="]"/></m:dPr><m:e>${r('y')}</m:e></m:d>` +
            '</m:oMath></m:oMathPara>',
        },
      ]),
    );
    assert.equal(item.text, 'For $m=1$, then\n\n$$\\frac{a}{{b}^{2}}=\\sqrt{x}+\\sum_{i=1}^{n}{i}[y]$$');
  });

  it(
    'keeps the equations of a real Word file (markitdown keeps it among its tests)',
    { skip: CORPUS_SKIP },
    async () => {
      const item = await parseDoc(DOCX, fixture('docs/docx/markitdown/equations.docx'));
      assert.match(item.text, /^For \$m=1\$,/);
      assert.ok(item.text.includes('$$sinθ=\\frac{mλ}{a}='), item.text);
    },
  );

  it('does not follow a picture that links to a file outside the document', { skip: CORPUS_SKIP }, async () => {
    const item = await parseDoc(DOCX, fixture('docs/docx/mammoth/external-picture.docx'));
    assert.equal(item.text, '');
  });

  it('rejects a file that is not a DOCX', async () => {
    assert.match((await rejection(parseDoc(DOCX, 'plain text, not a zip'))).reason, /^not a readable DOCX file: /);
  });
});

describe('documents: HTML', () => {
  const page = `<!doctype html><html lang="en"><head><title>Garden notes | My Site</title>
    <link rel="canonical" href="/posts/garden"><meta property="article:published_time" content="2023-05-01T08:00:00Z"></head>
    <body><nav><a href="/">Home</a> <a href="/about">About us</a> <a href="/shop">Shop</a></nav>
    <article><h1>Garden notes</h1>${'<p>Tomatoes need sun, water and patience; this season the seedlings went out in late May after the last frost. '.repeat(3)}</p>
    <p>${'Basil grew well beside them, and the slugs stayed away thanks to copper tape around the beds. '.repeat(3)}</p></article>
    <footer>Copyright 2023 · Cookie settings</footer><script>track()</script></body></html>`;

  it("keeps a table's cells apart, a row to a line, a layout table's columns each whole", async () => {
    const item = await parseDoc(
      'text/html',
      '<html><body><table><tr><th>Item</th><th>Price</th></tr><tr><td>Coffee <b>beans</b></td><td>12.50</td></tr></table>' +
        '<table><tr><td><p>Main column, its first paragraph.</p><p>Its second.</p></td><td>Sidebar</td></tr></table></body></html>',
    );
    assert.equal(
      item.text,
      'Item Price\nCoffee beans 12.50\n\nMain column, its first paragraph.\n\nIts second.\n\nSidebar',
    );
  });

  it('keeps the main content, not navigation, footer or scripts', async () => {
    const item = await parseDoc('text/html', page, { url: 'https://blog.example.com/posts/garden?utm=x' });
    assert.match(item.text, /Tomatoes need sun/);
    assert.match(item.text, /Basil grew well/);
    assert.doesNotMatch(item.text, /About us|Cookie settings|track\(\)/);
    assert.equal(item.meta.format === 'html' && item.meta.readable, true);
    assert.equal(item.meta.format === 'html' && item.meta.lang, 'en');
  });

  it('reads the title and the canonical URL (resolved against the url attribute)', async () => {
    const item = await parseDoc('text/html', page, { url: 'https://blog.example.com/posts/garden?utm=x' });
    assert.match(item.title, /^Garden notes/);
    assert.equal(item.meta.format === 'html' && item.meta.canonicalUrl, 'https://blog.example.com/posts/garden');
    assert.equal(item.meta.url, 'https://blog.example.com/posts/garden?utm=x');
    const noUrl = await parseDoc(
      'text/html',
      '<html><head><link rel="canonical" href="https://example.org/a"></head><body><p>x</p></body></html>',
    );
    assert.equal(noUrl.meta.url, 'https://example.org/a');
  });

  it('falls back to the body text when there is no article', async () => {
    const item = await parseDoc('text/html', '<nav>Menu</nav><h3>Jahresabschluss 2020</h3>');
    assert.equal(item.text, 'Jahresabschluss 2020');
    assert.equal(item.meta.format === 'html' && item.meta.readable, false);
  });

  it('decodes by BOM, declared charset, or <meta charset>', { skip: CORPUS_SKIP }, async () => {
    const utf16 = await parseDoc('text/html', fixture('docs/html/mimekit/Gimhae_Kim_clan.utf-16BE.html'));
    assert.equal(utf16.title, 'Gimhae Kim clan');
    assert.equal(utf16.meta.format === 'html' && utf16.meta.charset, 'utf-16be');
    assert.match(utf16.text, /Kim/);
    const cyrillic = Buffer.concat([
      Buffer.from('<html><head><meta http-equiv="Content-Type" content="text/html; charset=koi8-r"></head><body><p>'),
      encode('Привет', 'koi8-r'),
      Buffer.from('</p></body></html>'),
    ]);
    assert.equal((await parseDoc('text/html', cyrillic)).text, 'Привет');
    assert.equal(
      (await parseDoc('text/html; charset=windows-1251', encode('<p>Москва</p>', 'windows-1251'))).text,
      'Москва',
    );
  });

  it(
    'reads a page with stray elements between </head> and <body> (no <html> either)',
    { skip: CORPUS_SKIP },
    async () => {
      const item = await parseDoc(
        'text/html',
        fixture('docs/html/unstructured/example-steelJIS-datasheet-utf-16.html'),
      );
      assert.match(item.title, /^SNB22-3 - SteelJIS/);
      assert.match(item.text, /JIS G 4108 : Alloy steel bars for special application bolting materials/);
    },
  );

  it('reads a page whose <html> tag has an unclosed quote (found by fuzzing)', async () => {
    const item = await parseDoc(
      'text/html',
      '<!doctype html><html lang="e>H</h1><p>Para one.</p></article></body></html>',
    );
    assert.match(item.text, /Para one\./);
  });

  it('reads a real blog page', { skip: CORPUS_SKIP }, async () => {
    const item = await parseDoc('text/html', fixture('docs/html/markitdown/test_blog.html'));
    assert.match(item.title, /Does Model and Inference Parameter Matter in LLM Applications/);
    assert.ok(item.text.length > 2000);
  });
});

describe('documents: web pages saved as one file (MHTML)', () => {
  const chrome = [
    'From: <Saved by Blink>',
    'Snapshot-Content-Location: https://blog.example.com/posts/garden',
    'Subject: Garden notes',
    'Date: Sat, 3 Feb 2024 10:00:00 -0000',
    'MIME-Version: 1.0',
    'Content-Type: multipart/related;',
    '\ttype="text/html";',
    '\tboundary="----MultipartBoundary--abc----"',
    '',
    '------MultipartBoundary--abc----',
    'Content-Type: text/html',
    'Content-ID: <frame-1@mhtml.blink>',
    'Content-Transfer-Encoding: quoted-printable',
    'Content-Location: https://blog.example.com/posts/garden',
    '',
    '<html><head><meta charset=3D"utf-8"><title>Garden notes</title></head><body><p>Tomatoes need sun=',
    ', water and patience; the basil grew well beside them. Caf=C3=A9 au lait.</p></body></html>',
    '------MultipartBoundary--abc----',
    'Content-Type: image/png',
    'Content-Transfer-Encoding: base64',
    'Content-Location: https://blog.example.com/logo.png',
    '',
    'iVBORw0KGgo=',
    '------MultipartBoundary--abc------',
    '',
  ].join('\r\n');

  it('reads the page it holds, at the address it was saved from, dated when saved; it is no mail', async () => {
    assert.equal(typeOfFileName('Garden notes.mhtml'), 'multipart/related');
    assert.equal(typeOfFileName('old page.MHT'), 'multipart/related');
    const item = await parseDoc('multipart/related', chrome, { filename: 'Garden notes.mhtml' });
    assert.equal(item.kind, 'document');
    assert.equal(item.title, 'Garden notes');
    assert.equal(item.text, 'Tomatoes need sun, water and patience; the basil grew well beside them. Café au lait.');
    assert.equal(item.meta.format, 'html');
    assert.equal(item.meta.url, 'https://blog.example.com/posts/garden');
    assert.equal(item.occurredAt, '2024-02-03T10:00:00.000Z');
  });

  it("reads Word's Single File Web Page sent as a .doc, and rejects an archive with no page", async () => {
    const word = chrome.replace('From: <Saved by Blink>', 'From: <Saved by Microsoft Word>');
    const item = await parseDoc('application/msword', word, { filename: 'minutes.doc' });
    assert.equal(item.meta.format, 'html');
    assert.match(item.text, /Tomatoes need sun/);
    assert.match(item.warnings.join('\n'), /labelled application\/msword but is multipart\/related/);
    const noPage = chrome.replace('Content-Type: text/html', 'Content-Type: text/css');
    assert.match((await rejection(parseDoc('multipart/related', noPage))).reason, /holds no HTML page/);
  });
});

describe("documents: Safari's web archives (.webarchive)", () => {
  const page =
    '<html><head><meta charset="iso-8859-1"><title>Garden notes</title></head><body><article><h1>Garden notes</h1>' +
    '<p>Tomatoes need sun, water and patience; the basil grew well beside them. Café au lait.</p></article></body></html>';

  it('reads the page it holds in its encoding, at the address it was saved from; known by its extension or its bytes', async () => {
    assert.equal(typeOfFileName('Garden notes.webarchive'), 'application/x-webarchive');
    const archive = webArchive({
      html: Buffer.from(page, 'latin1'),
      url: 'https://blog.example.com/posts/garden',
      encoding: 'ISO-8859-1',
    });
    const item = await parseDoc('application/x-webarchive', archive, { filename: 'Garden notes.webarchive' });
    assert.deepEqual(
      [item.kind, item.title, item.meta.format, item.meta.url],
      ['document', 'Garden notes', 'html', 'https://blog.example.com/posts/garden'],
    );
    assert.match(item.text, /basil grew well beside them\. Café au lait\./);
    // Sent without a type (a mail's attachment): its bytes tell.
    assert.equal(documentTypeFor('application/octet-stream', 'download', archive), 'application/x-webarchive');
  });

  it('rejects one that is damaged, or holds a file that is no page, saying so', async () => {
    const archive = webArchive({ html: page, url: 'https://blog.example.com/posts/garden' });
    const cut = archive.subarray(0, archive.length - 40);
    assert.match((await rejection(parseDoc('application/x-webarchive', cut))).reason, /not a readable web archive/);
    const ofPdf = webArchive({ html: '%PDF-1.4', url: 'https://example.com/a.pdf', type: 'application/pdf' });
    assert.match(
      (await rejection(parseDoc('application/x-webarchive', ofPdf))).reason,
      /a web archive of a application\/pdf file, not of a page/,
    );
  });
});

describe("documents: Apple's Pages, Numbers and Keynote", () => {
  const PAGES = 'application/vnd.apple.pages';

  it('a Pages document: its body first (as the document names it), then its text boxes; in one zip or its Index.zip', async () => {
    assert.equal(typeOfFileName('Letter.pages'), PAGES);
    for (const bundled of [false, true]) {
      const bytes = await pagesDocument({
        body: ['Dear Ann,\u2029the zeppelin budget is ', 'approved.\uFFFC\u2029Best, Bob'],
        textBox: 'Draft — not for circulation',
        bundled,
      });
      const item = await parseDoc(PAGES, bytes, { filename: 'Letter.pages' });
      assert.deepEqual(
        [item.title, item.text, item.meta.format],
        [
          'Letter.pages',
          'Dear Ann,\nthe zeppelin budget is approved.\nBest, Bob\n\nDraft — not for circulation',
          'iwork',
        ],
        `bundled: ${bundled}`,
      );
      if (!bundled) continue;
      // A package's Index.zip sent as the document (a folder import sends it so): the same text.
      const index = await (await JSZip.loadAsync(bytes)).file('Index.zip')!.async('nodebuffer');
      assert.equal((await parseDoc(PAGES, index, { filename: 'Letter.pages' })).text, item.text);
    }
  });

  it("a Numbers spreadsheet's sheet name and table strings; an iWork '09 document's XML", async () => {
    const sheet = await parseDoc('application/vnd.apple.numbers', await numbersDocument(['Venue', 'Catering']), {
      filename: 'Budget.numbers',
    });
    assert.equal(sheet.text, 'Budget 2024\n\nVenue\n\nCatering');
    const old = new JSZip();
    old.file('index.xml', '<sl:document><sf:p>Minutes of the meeting</sf:p><sf:p>Budget approved</sf:p></sl:document>');
    const keynote = await parseDoc('application/vnd.apple.keynote', await old.generateAsync({ type: 'nodebuffer' }), {
      filename: 'Talk.key',
    });
    assert.equal(keynote.text, 'Minutes of the meeting\n\nBudget approved');
  });

  it('Snappy: literals and copies of what came before, overlapping ones too; a damaged document is rejected saying so', async () => {
    assert.equal(unsnappy(Buffer.from([12, 0x0c, 0x61, 0x62, 0x63, 0x64, 0x11, 0x04])).toString(), 'abcdabcdabcd');
    assert.throws(
      () => unsnappy(Buffer.from([12, 0x0c, 0x61, 0x62, 0x63, 0x64, 0x11, 0x09])),
      /outside what came before/,
    );
    const bytes = await pagesDocument({ body: ['Text'], textBox: 'Box' });
    const zip = await JSZip.loadAsync(bytes);
    const archive = await zip.file('Index/Document.iwa')!.async('nodebuffer');
    zip.file('Index/Document.iwa', archive.subarray(0, archive.length - 30));
    const cut = await zip.generateAsync({ type: 'nodebuffer' });
    assert.match((await rejection(parseDoc(PAGES, cut))).reason, /not a readable Pages document: it is damaged/);
  });
});

describe('documents: text by other names (CSV, JSON, XML, LaTeX, BibTeX, Org)', () => {
  it('reads each for its words, as it is', async () => {
    assert.deepEqual(
      ['rates.csv', 'export.tsv', 'settings.json', 'feed.xml', 'thesis.tex', 'refs.bib', 'todo.org', 'notes.yaml'].map(
        (name) => typeOfFileName(name),
      ),
      [
        'text/csv',
        'text/tab-separated-values',
        'application/json',
        'application/xml',
        'application/x-tex',
        'text/x-bibtex',
        'text/x-org',
        'text/yaml',
      ],
    );
    const csv = await parseDoc('text/csv', 'city,rent\nZürich,2400\n', { filename: 'rates.csv' });
    assert.equal(csv.text, 'city,rent\nZürich,2400');
    assert.equal(csv.meta.format, 'text');
    assert.equal(csv.title, 'rates.csv');
    const tex = await parseDoc('application/x-tex', encode('\\section{Résumé}\nWe measure recall.\n', 'windows-1252'));
    assert.equal(tex.text, '\\section{Résumé}\nWe measure recall.');
    // A mail attachment of such a type, or named so though sent as text/plain, is read too.
    assert.equal(documentTypeFor('text/plain', 'rates.csv'), 'text/csv');
    assert.equal(documentTypeFor('application/octet-stream', 'refs.bib'), 'text/x-bibtex');
  });
});

describe('documents: plain text and reStructuredText', () => {
  it('decodes the declared charset, a BOM, or falls back to windows-1252', async () => {
    assert.equal((await parseDoc('text/plain; charset=koi8-r', encode('Привет', 'koi8-r'))).text, 'Привет');
    const utf16 = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('Grüße', 'utf16le')]);
    assert.equal((await parseDoc('text/plain', utf16)).text, 'Grüße');
    // Without its byte-order mark (some Windows exports), little- or big-endian.
    const csv = 'name,city\r\nRenée,Zürich\r\n';
    assert.equal((await parseDoc('text/csv', Buffer.from(csv, 'utf16le'))).text, csv.trim());
    assert.equal((await parseDoc('text/plain', Buffer.from(csv, 'utf16le').swap16())).text, csv.trim());
    const latin = await parseDoc('text/plain', encode('Déjà vu', 'windows-1252'));
    assert.equal(latin.text, 'Déjà vu');
    assert.equal(latin.meta.format === 'text' && latin.meta.charset, 'windows-1252');
  });

  it('reads an unlabelled file in the legacy charset it is in, not as Western accents', async () => {
    const read = async (text: string, charset: string) => {
      const item = await parseDoc('text/plain', encode(text, charset), { filename: 'notes.txt' });
      return [item.text, item.meta.format === 'text' && item.meta.charset];
    };
    const russian = 'Список покупок: хлеб, молоко, сыр. Позвонить маме в субботу.';
    assert.deepEqual(await read(russian, 'windows-1251'), [russian, 'windows-1251']);
    assert.deepEqual(await read(russian, 'koi8-r'), [russian, 'koi8-r']);
    const japanese = '買い物リスト：パン、牛乳、チーズ。土曜日に母に電話する。';
    assert.deepEqual(await read(japanese, 'shift_jis'), [japanese, 'shift_jis']);
    assert.deepEqual(await read(japanese, 'euc-jp'), [japanese, 'euc-jp']);
    const polish =
      'Zażółć gęślą jaźń. Spotkanie jutro o dziesiątej w biurze, proszę przynieść sprawozdanie. ' +
      'Dziękuję za wiadomość; odpowiem w piątek, gdy wrócę z urlopu nad morzem.';
    assert.deepEqual(await read(polish, 'iso-8859-2'), [polish, 'iso-8859-2']);
    // Western text stays Western, however short.
    for (const western of ['Señor', 'Grüße aus München!', 'Cañón “x”', 'Hello René, the résumé is attached.'])
      assert.deepEqual(await read(western, 'windows-1252'), [western, 'windows-1252']);
  });

  it('rejects binary data sent as text', async () => {
    assert.equal(
      (await rejection(parseDoc('text/plain', Buffer.from([0x50, 0x4b, 0x03, 0x04, 0x00, 0x00])))).reason,
      'not plain text: it contains binary data (NUL bytes)',
    );
  });

  it('reads reStructuredText titles, headings and text without markup', async () => {
    const rst = [
      '=============',
      ' User Guide',
      '=============',
      '',
      'Install with ``pip install tool``; see `the docs <https://example.com/docs>`_ and :ref:`setup`.',
      '',
      '.. note:: This is **important**.',
      '',
      '.. a comment that is not text',
      '',
      'Configuration',
      '-------------',
      '',
      'Set *verbose* to true.',
      '',
      '----',
      '',
      'The end.',
    ].join('\n');
    const item = await parseDoc('text/x-rst', rst);
    assert.equal(item.title, 'User Guide');
    assert.deepEqual(item.meta.format === 'rst' && item.meta.headings, ['User Guide', 'Configuration']);
    assert.match(item.text, /Install with pip install tool; see the docs and setup\./);
    assert.match(item.text, /This is important\./);
    assert.match(item.text, /Set verbose to true\./);
    assert.doesNotMatch(item.text, /====|----|a comment|https:/);
  });

  it('rejects a type the document handler does not read', async () => {
    assert.equal(
      (await rejection(registry.parse({ type: 'application/vnd.visio', bytes: Buffer.from('x') }))).reason,
      'no handler for type "application/vnd.visio"',
    );
  });
});
