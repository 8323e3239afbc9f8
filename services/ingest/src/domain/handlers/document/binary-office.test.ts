import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import CFB from 'cfb';
import { documentTypeFor } from './document-handler.js';
import { docx, fixture, CORPUS_SKIP, withAttachment } from '../testing/build.js';
import { presentation, word6Document, wordDocument, workbook, workbook95 } from '../testing/binary-office.js';
import { parseDoc, parseEmail, rejection } from '../testing/parse.js';
import type { AttachmentItem } from '../handler.js';

const DOC = 'application/msword';
const XLS = 'application/vnd.ms-excel';
const PPT = 'application/vnd.ms-powerpoint';
const DOCX = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';

describe('documents: Word, Excel and PowerPoint 97–2003 (.doc, .xls, .ppt)', () => {
  it('a .doc: its text across 8-bit and UTF-16 pieces, fields as their result, tables, footnotes; no headers', async () => {
    const bytes = wordDocument({
      text:
        'Budget review\r' +
        'Café costs rose — see \u0013 HYPERLINK "http://example.com/r" \u0014the full report\u0015 for details.\u0002\r' +
        'Venue\u00071200\u0007\u0007Catering\u0007850\u0007\u0007' +
        'Ελληνικά and 日本語 at the end.\r',
      footnotes: '\u0002 Figures from the March audit.\r',
      headers: 'Confidential — page \u0013 PAGE \u00141\u0015\r',
      wideFrom: 120,
      title: 'Quarterly memo',
      created: new Date('2003-05-06T10:20:00Z'),
    });
    const item = await parseDoc(DOC, bytes, { filename: 'memo.doc' });
    assert.equal(
      item.text,
      'Budget review\nCafé costs rose — see the full report for details.\nVenue\t1200\nCatering\t850\n' +
        'Ελληνικά and 日本語 at the end.\n\nFigures from the March audit.',
    );
    assert.equal(item.title, 'Quarterly memo');
    assert.equal(item.occurredAt, '2003-05-06T10:20:00.000Z');
    assert.equal(item.meta.format, 'doc');
    assert.equal(item.meta.contentType, DOC);
  });

  it('a Word 95 .doc: its text in the code page of its language, footnotes read, headers not', async () => {
    const bytes = word6Document({
      version: 0x0068,
      lid: 0x0419,
      codePage: 'windows-1251',
      text: 'Протокол собрания\rБюджет утверждён — 1200 руб.\u0002\rМесто\u0007Москва\u0007\u0007',
      footnotes: '\u0002 По данным бухгалтерии.\r',
      headers: 'Страница \u0013 PAGE \u00141\u0015\r',
      title: 'Protokol',
      created: new Date('1996-04-02T09:00:00Z'),
    });
    const item = await parseDoc(DOC, bytes, { filename: 'protokol.doc' });
    assert.equal(item.text, 'Протокол собрания\nБюджет утверждён — 1200 руб.\nМесто\tМосква\n\nПо данным бухгалтерии.');
    assert.deepEqual([item.title, item.occurredAt], ['Protokol', '1996-04-02T09:00:00.000Z']);
  });

  it('a Word 6.0 .doc fast-saved: its pieces put back in order; Western text as Windows-1252', async () => {
    const bytes = word6Document({
      fastSaved: true,
      text: 'Minutes of the café meeting\rThe “new” budget was approved.\r',
    });
    const item = await parseDoc(DOC, bytes, { filename: 'minutes.doc' });
    assert.equal(item.text, 'Minutes of the café meeting\nThe “new” budget was approved.');
  });

  it('a .doc that cannot be read says why: password-protected, older than Word 6.0, damaged', async () => {
    const encrypted = wordDocument({ text: 'Secret\r', encrypted: true });
    assert.match((await rejection(parseDoc(DOC, encrypted))).reason, /password-protected Word document/);
    const encrypted95 = word6Document({ text: 'Secret\r', version: 0x0068, encrypted: true });
    assert.match((await rejection(parseDoc(DOC, encrypted95))).reason, /password-protected Word document/);
    const word2 = wordDocument({ text: 'Old\r', version: 0x002d });
    assert.match((await rejection(parseDoc(DOC, word2))).reason, /older than Word 6\.0 \(version 45\)/);
    const truncated = wordDocument({ text: 'Cut short\r' }).subarray(0, 1500);
    assert.match((await rejection(parseDoc(DOC, truncated))).reason, /not a readable Word document/);
  });

  it('a .xls: each worksheet under its name, shared strings split across records, numbers as Excel shows them', async () => {
    const long = `Ελληνικά ${'long cell text '.repeat(20)}end`;
    const bytes = workbook({
      sheets: [
        {
          name: 'Budget',
          rows: [
            ['Item', 'Cost', null, 'Note'],
            ['Venue', 1200, null, long],
            ['Catering', 850.5],
            [null, 0.1 + 0.2, -3],
            ['Paid', new Date('2019-03-04T00:00:00Z'), new Date('2019-03-04T13:45:00Z')],
          ],
        },
        { name: 'Empty', rows: [] },
        { name: 'Notes ✓', rows: [['Ask the caterer']] },
      ],
      continueAt: 40,
      title: 'Offsite budget',
      created: new Date('2019-03-04T09:00:00Z'),
    });
    const item = await parseDoc(XLS, bytes, { filename: 'budget.xls' });
    assert.equal(
      item.text,
      `Budget\nItem\tCost\tNote\nVenue\t1200\t${long.trim()}\nCatering\t850.5\n0.3\t-3\nPaid\t2019-03-04\t2019-03-04 13:45\n\nNotes ✓\nAsk the caterer`,
    );
    assert.deepEqual(item.meta.format === 'xls' && item.meta.headings, ['Budget', 'Empty', 'Notes ✓']);
    assert.equal(item.title, 'Offsite budget');
    assert.equal(item.occurredAt, '2019-03-04T09:00:00.000Z');

    const encrypted = workbook({ sheets: [{ name: 'S', rows: [['x']] }], encrypted: true });
    assert.match((await rejection(parseDoc(XLS, encrypted))).reason, /password-protected Excel workbook/);
  });

  it("a .xls from Excel 95 (BIFF5): text in the workbook's code page, rich text and formulas' text results, dates", async () => {
    const bytes = workbook95({
      codePage: 1250,
      sheets: [
        {
          name: 'Rozpočet',
          rows: [
            ['Položka', 'Částka'],
            ['Sál', 1200.5],
            [{ rich: 'Občerstvení' }, { formula: 'zaplaceno' }],
            ['Datum', new Date('1997-03-04T00:00:00Z')],
          ],
        },
      ],
      title: 'Rozpocet 1997',
    });
    const item = await parseDoc(XLS, bytes, { filename: 'rozpocet.xls' });
    assert.equal(item.text, 'Rozpočet\nPoložka\tČástka\nSál\t1200.5\nObčerstvení\tzaplaceno\nDatum\t1997-03-04');
    assert.deepEqual(item.meta.format === 'xls' && item.meta.headings, ['Rozpočet']);

    const encrypted = workbook95({ codePage: 1252, sheets: [{ name: 'S', rows: [['x']] }], encrypted: true });
    assert.match((await rejection(parseDoc(XLS, encrypted))).reason, /password-protected Excel workbook/);
  });

  it('a .ppt: slides in order with their notes, the masters’ prompts left out, an incremental save read as last saved', async () => {
    const bytes = presentation({
      slides: [
        {
          title: 'Launch timeline',
          body: ['Beta in March', 'Café opening in May'],
          notes: 'Mention the budget slowly',
        },
        { title: 'Risks', body: ['Supplier delays'], textBox: 'A loose text box' },
      ],
      editedTitle: { slide: 1, title: 'Risks and mitigations' },
    });
    const item = await parseDoc(PPT, bytes, { filename: 'launch.ppt' });
    assert.equal(
      item.text,
      'Launch timeline\nBeta in March\nCafé opening in May\nMention the budget slowly\n\n' +
        'Risks and mitigations\nSupplier delays\nA loose text box',
    );
    assert.deepEqual(item.meta.format === 'ppt' && item.meta.headings, ['Launch timeline', 'Risks and mitigations']);
    assert.equal(item.title, 'Launch timeline');
    assert.doesNotMatch(item.text, /Click to edit|^Risks$/m);
  });

  it('a password-protected .docx (its zip encrypted into a compound file) is rejected saying so', async () => {
    const file = CFB.utils.cfb_new();
    CFB.utils.cfb_add(file, '/EncryptionInfo', Buffer.from([4, 0, 4, 0, 0x40, 0, 0, 0]));
    CFB.utils.cfb_add(file, '/EncryptedPackage', Buffer.alloc(4096, 0x5a));
    const bytes = CFB.write(file, { type: 'buffer' }) as Buffer;
    assert.match(
      (await rejection(parseDoc(DOCX, bytes, { filename: 'salaries.docx' }))).reason,
      /password-protected Office document/,
    );
    // As a mail attachment: kept, with the reason.
    const mail = await parseEmail(
      withAttachment('Numbers inside.', {
        headers: ['Content-Type: application/octet-stream; name="salaries.xlsx"', 'Content-Transfer-Encoding: base64'],
        body: bytes.toString('base64'),
      }),
    );
    const [attachment] = (mail.children ?? []) as AttachmentItem[];
    assert.match(attachment?.meta.unreadable ?? '', /password-protected Office document/);
  });

  it('a file is read as what its bytes prove, whatever its label, and the label that lied is a warning', async () => {
    // Word's "save as RTF" keeping the .doc name: sent as application/msword.
    const rtf = await parseDoc(DOC, '{\\rtf1\\ansi Minutes of the meeting\\par}', { filename: 'minutes.doc' });
    assert.equal(rtf.text, 'Minutes of the meeting');
    assert.equal(rtf.meta.format, 'rtf');
    assert.match(rtf.warnings.join('\n'), /labelled application\/msword but is application\/rtf/);
    // An "export to Excel" button's HTML table, and a CSV, named .xls.
    const html = await parseDoc(XLS, '<html><body><table><tr><td>Name</td><td>Total</td></tr></table></body></html>');
    assert.equal(html.meta.format, 'html');
    assert.equal(html.text, 'Name Total');
    assert.equal((await parseDoc(XLS, 'Name,Total\nAnn,3\n')).meta.format, 'text');
    // A .docx labelled as a .doc.
    const wrong = await parseDoc(DOC, docx([{ text: 'Written in Word 2016' }]));
    assert.equal(wrong.meta.format, 'docx');
    assert.equal(wrong.text, 'Written in Word 2016');
    // Text is text, though it mentions a PDF header near its start.
    assert.equal((await parseDoc('text/markdown', '# Notes\n\nA PDF starts with %PDF-1.7.\n')).meta.format, 'markdown');
  });

  it('an attachment is a document by its type, an alias of it, its name, or (when its type says nothing) its bytes', () => {
    const doc = wordDocument({ text: 'Hello\r' });
    assert.equal(documentTypeFor(DOC, 'memo.doc'), DOC);
    assert.equal(documentTypeFor('application/x-msword', 'memo.doc'), DOC);
    assert.equal(documentTypeFor('application/vnd.ms-word', 'old.xls'), XLS);
    assert.equal(documentTypeFor('application/octet-stream', null, doc), DOC);
    assert.equal(documentTypeFor('application/octet-stream', 'ATT00012', docx([{ text: 'x' }])), DOCX);
    assert.equal(documentTypeFor('application/x-zip-compressed', 'draft.zip', docx([{ text: 'x' }])), DOCX);
    assert.equal(documentTypeFor('application/octet-stream', 'data.bin', Buffer.from('\u0000\u0001binary')), null);
    assert.equal(documentTypeFor('image/png', 'scan.doc', doc), null);
  });

  it('mail: a .doc attachment is searchable by its words, an .xls one sent as octet-stream without a name too', async () => {
    const doc = wordDocument({ text: 'The quarterly forecast is attached.\r' });
    const mail = await parseEmail(
      withAttachment('See attached.', {
        headers: ['Content-Type: application/msword; name="forecast.doc"', 'Content-Transfer-Encoding: base64'],
        body: doc.toString('base64'),
      }),
    );
    const [attachment] = (mail.children ?? []) as AttachmentItem[];
    assert.equal(attachment?.meta.parsedAs, 'document');
    assert.equal(attachment?.text, 'The quarterly forecast is attached.');

    const xls = workbook({ sheets: [{ name: 'Q3', rows: [['Revenue', 42]] }] });
    const unnamed = await parseEmail(
      withAttachment('Numbers.', {
        headers: ['Content-Type: application/octet-stream', 'Content-Transfer-Encoding: base64'],
        body: xls.toString('base64'),
      }),
    );
    assert.equal(unnamed.children?.[0]?.text, 'Q3\nRevenue\t42');
  });

  it('real mail: RTF sent as application/msword is read for its words', { skip: CORPUS_SKIP }, async () => {
    const mail = await parseEmail(fixture('mail/spamassassin-testdata/nice/004.eml'));
    const rtf = ((mail.children ?? []) as AttachmentItem[]).find((child) => child.meta.contentType === DOC);
    assert.equal(rtf?.meta.parsedAs, 'document');
    assert.equal(rtf?.meta.document?.format, 'rtf');
    assert.match(rtf?.text ?? '', /Homilia XII na List to Kolosan/);
    // Its code page (1250) decoded: ł is \'b3 there.
    assert.match(rtf?.text ?? '', /Tekst grecki został wydany/);
  });
});
