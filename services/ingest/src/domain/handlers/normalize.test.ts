import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { message, pdf } from './testing/build.js';
import { parseDoc, parseEmail } from './testing/parse.js';
import { isPlausibleDate } from './normalize.js';

/**
 * NUL characters and impossible dates, as real files carry them. Postgres text and jsonb refuse
 * U+0000, so before this an item with one was answered `created` and then failed in every
 * projector. Where they come from: PDF text layers of some generators (pdf.js bug 1470327 shows
 * NULs in extracted text), Markdown saved by editors that pad with NULs after a crash, mail bodies
 * with a raw NUL (SpamAssassin's corpora have them); PDFs dated `D:00000101000000` (a default
 * in several generators), spam dated years ahead (3609 here; 2037/2038 in SpamAssassin's
 * FORGED_DATE rules) and clients that write the Unix epoch.
 */
describe('NUL characters never reach an event', () => {
  it('a Markdown file: removed from the text and the front matter, with a warning', async () => {
    const item = await parseDoc(
      'text/markdown',
      '---\ntitle: "Pla\0n"\n---\n# Head\0ing\n\nBody\0\0 text [[Li\0nk]]\n',
    );
    assert.doesNotMatch(JSON.stringify(item), /\\u0000/);
    assert.equal(item.title, 'Plan');
    assert.match(item.text, /Body text/);
    assert.match(item.warnings.join('\n'), /NUL characters \(U\+0000\) removed/);
  });

  it('a mail body (a NUL in the header section still means binary data, not a message)', async () => {
    const item = await parseEmail(
      message(
        [
          ['From', 'a@x.org'],
          ['Subject', 'Hello'],
          ['Message-ID', '<nul@x>'],
        ],
        'one\0two\r\n',
      ),
    );
    assert.match(item.text, /onetwo/);
    assert.match(item.warnings.join('\n'), /NUL characters/);
    assert.doesNotMatch(JSON.stringify(item), /\\u0000/);
  });

  it('a PDF text layer', async () => {
    const item = await parseDoc('application/pdf', pdf([['before\0after']]));
    assert.doesNotMatch(JSON.stringify({ ...item, text: item.text }), /\\u0000/);
    assert.match(item.text, /beforeafter|before after/);
  });
});

describe('implausible dates are unknown, not facts', () => {
  const received = (date: string, by = 'mx.example.org') => `from relay.example.com by ${by} with ESMTP id 1; ${date}`;

  it('a mail dated 3609 is dated by its topmost Received header, saying so', async () => {
    const item = await parseEmail(
      message([
        ['Received', received('Tue, 14 Mar 2006 10:00:00 +0000')],
        ['Received', received('Tue, 14 Mar 2006 09:59:00 +0000', 'relay.example.com')],
        ['From', 'spam@example.com'],
        ['Date', 'Sat, 12 Jan 3609 12:00:00 +0000'],
        ['Message-ID', '<future@x>'],
      ]),
    );
    assert.equal(item.occurredAt, '2006-03-14T10:00:00.000Z');
    assert.equal(item.meta.date, null);
    assert.equal(item.meta.dateSource, 'received-header');
    assert.match(item.warnings.join('\n'), /Date header \(3609-01-12.*\) is implausible/);
  });

  it('a mail dated the Unix epoch with nothing else is undated; with the file time it is dated by the file', async () => {
    const bytes = message([
      ['From', 'a@x.org'],
      ['Date', 'Thu, 01 Jan 1970 00:00:00 +0000'],
      ['Message-ID', '<epoch@x>'],
    ]);
    const undated = await parseEmail(bytes);
    assert.equal(undated.occurredAt, null);
    assert.equal(undated.meta.dateSource, null);
    const byFile = await parseEmail(bytes, { modified: '2011-05-06T07:08:09.000Z' });
    assert.equal(byFile.occurredAt, '2011-05-06T07:08:09.000Z');
    assert.equal(byFile.meta.dateSource, 'file');
  });

  it('an implausible Received date is passed over, and an mbox From-line date comes next', async () => {
    const item = await parseEmail(
      message([
        ['Received', received('Mon, 1 Jan 2999 00:00:00 +0000')],
        ['From', 'a@x.org'],
        ['Message-ID', '<r@x>'],
      ]),
      { received: '2004-02-03T04:05:06Z' },
    );
    assert.equal(item.occurredAt, '2004-02-03T04:05:06.000Z');
    assert.equal(item.meta.dateSource, 'received');
  });

  it('a PDF dated 0000-01-01 takes the file time instead, or none', async () => {
    const bytes = pdf([['dated zero']], { CreationDate: 'D:00000101000000Z' });
    assert.equal((await parseDoc('application/pdf', bytes)).occurredAt, null);
    const item = await parseDoc('application/pdf', bytes, { modified: '2015-01-01T00:00:00Z' });
    assert.equal(item.occurredAt, '2015-01-01T00:00:00.000Z');
  });

  it('the rule: after 1970-01-01, at most a day ahead of now', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    assert.equal(isPlausibleDate('0000-01-01T00:00:00Z', now), false);
    assert.equal(isPlausibleDate('1970-01-01T00:00:00Z', now), false);
    assert.equal(isPlausibleDate('1985-06-01T00:00:00Z', now), true);
    assert.equal(isPlausibleDate('2026-01-01T20:00:00Z', now), true);
    assert.equal(isPlausibleDate('2027-01-01T00:00:00Z', now), false);
    assert.equal(isPlausibleDate('3609-01-12T12:00:00Z', now), false);
  });
});
