import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { importedMailAccount, isSpamFolder } from './mail-handler.js';
import { decideOutcome } from '../outcome.js';
import { mailHandler } from './mail-handler.js';
import { CORPUS_SKIP, fixture, message, pdf, withAttachment } from '../testing/build.js';
import { parseEmail } from '../testing/parse.js';
import type { AttachmentItem } from '../handler.js';

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const b64 = (b: Buffer) => b.toString('base64').replace(/.{76}/g, '$&\r\n');

describe('mail: multipart/alternative with attachments', () => {
  const report = pdf([['Quarterly report', 'Revenue grew'], ['Page two text']], { Title: 'Q2 Report' });
  const notes = Buffer.from('# Notes\n\nSee [[Budget]] #finance\n');
  const png = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex');
  const raw = message(
    [
      ['From', '"Doe, Jane" <Jane.Doe@Example.COM>'],
      ['To', 'Bob <bob@example.com>, team: ann@example.com, "Carl" <carl@example.com>;'],
      ['Cc', 'dan@example.com'],
      ['Bcc', 'eve@example.com'],
      ['Reply-To', 'Jane (work) <jane@work.example>'],
      ['Subject', 'Q2 numbers'],
      ['Date', 'Tue, 04 Jun 2024 09:30:00 +0200'],
      ['Message-ID', '<Q2.Numbers@Example.com>'],
      ['List-Id', 'Finance team <finance.lists.example.com>'],
      ['MIME-Version', '1.0'],
      ['Content-Type', 'multipart/mixed; boundary="outer"'],
    ],
    [
      '--outer',
      'Content-Type: multipart/alternative; boundary="alt"',
      '',
      '--alt',
      'Content-Type: text/plain; charset=utf-8',
      '',
      'Plain text body: numbers attached.',
      '--alt',
      'Content-Type: text/html; charset=utf-8',
      '',
      '<p>HTML <b>body</b>: numbers attached.</p>',
      '--alt--',
      '--outer',
      'Content-Type: application/pdf; name="report.pdf"',
      'Content-Disposition: attachment; filename="report.pdf"',
      'Content-Transfer-Encoding: base64',
      '',
      b64(report),
      '--outer',
      'Content-Type: application/octet-stream; name="notes.md"',
      'Content-Disposition: attachment; filename="notes.md"',
      'Content-Transfer-Encoding: base64',
      '',
      b64(notes),
      '--outer',
      'Content-Type: image/png; name="logo.png"',
      'Content-Disposition: inline; filename="logo.png"',
      'Content-ID: <logo@example>',
      'Content-Transfer-Encoding: base64',
      '',
      b64(png),
      '--outer--',
      '',
    ].join('\r\n'),
  );

  it('reads headers, people, date, list and the plain text alternative', async () => {
    const item = await parseEmail(raw);
    assert.equal(item.identity, 'message-id:q2.numbers@example.com');
    assert.equal(item.title, 'Q2 numbers');
    assert.equal(item.text.trim(), 'Plain text body: numbers attached.');
    assert.equal(item.occurredAt, '2024-06-04T07:30:00.000Z');
    assert.deepEqual(item.meta.from, [{ name: 'Doe, Jane', address: 'jane.doe@example.com' }]);
    assert.deepEqual(item.meta.to, [
      { name: 'Bob', address: 'bob@example.com' },
      { name: '', address: 'ann@example.com' },
      { name: 'Carl', address: 'carl@example.com' },
    ]);
    assert.deepEqual(item.meta.cc, [{ name: '', address: 'dan@example.com' }]);
    assert.deepEqual(item.meta.bcc, [{ name: '', address: 'eve@example.com' }]);
    assert.equal(item.meta.replyTo[0]?.address, 'jane@work.example');
    assert.equal(item.meta.mailingList, 'finance.lists.example.com');
    assert.equal(item.meta.originalFrom, undefined);
    assert.equal(item.meta.textSource, 'plain');
    assert.equal(item.meta.truncated, false);
    assert.deepEqual(item.warnings, []);
  });

  it('keeps the sender a list rewrote From for (X-Original-From), its name decoded', async () => {
    const item = await parseEmail(
      message([
        ['From', '"=?UTF-8?Q?Zo=C3=AB_M=C3=BCller?= via Dev" <dev@lists.example.org>'],
        ['X-Original-From', '=?UTF-8?Q?Zo=C3=AB_M=C3=BCller?= <Zoe@Mueller.example>'],
        ['List-Id', '<dev.lists.example.org>'],
        ['Subject', 'Rewritten'],
        ['Message-ID', '<rewritten@example.org>'],
      ]),
    );
    assert.deepEqual(item.meta.from, [{ name: 'Zoë Müller via Dev', address: 'dev@lists.example.org' }]);
    assert.deepEqual(item.meta.originalFrom, [{ name: 'Zoë Müller', address: 'zoe@mueller.example' }]);
  });

  it('passes attachments through the document handler, keeping the rest as opaque attachments', async () => {
    const item = await parseEmail(raw);
    const [pdfPart, mdPart, pngPart] = (item.children ?? []) as AttachmentItem[];
    assert.equal(item.children?.length, 3);

    assert.ok(pdfPart && mdPart && pngPart);
    assert.equal(pdfPart.kind, 'attachment');
    assert.equal(pdfPart.title, 'report.pdf');
    assert.equal(pdfPart.identity, `sha256:${sha256(report)}`);
    assert.deepEqual(pdfPart.contentBytes, report);
    assert.equal(pdfPart.meta.parsedAs, 'document');
    assert.equal(pdfPart.meta.document?.format, 'pdf');
    assert.deepEqual(pdfPart.meta.document?.format === 'pdf' && pdfPart.meta.document.pages, [
      { page: 1, text: 'Quarterly report\nRevenue grew' },
      { page: 2, text: 'Page two text' },
    ]);
    assert.equal(pdfPart.occurredAt, item.occurredAt, 'an attachment happened when its message did');

    // application/octet-stream named *.md is read as Markdown.
    assert.equal(mdPart.meta.document?.format, 'markdown');
    assert.deepEqual(mdPart.meta.document?.format === 'markdown' && mdPart.meta.document.tags, ['finance']);

    assert.equal(pngPart.text, '');
    assert.equal(pngPart.meta.parsedAs, null);
    assert.equal(pngPart.meta.contentType, 'image/png');
    assert.equal(pngPart.meta.size, png.length);
    assert.equal(pngPart.meta.inline, true);
    assert.equal(pngPart.meta.contentId, 'logo@example');
  });

  it('keeps an attachment it cannot read, saying why', { skip: CORPUS_SKIP }, async () => {
    const item = await parseEmail(fixture('mail/mikel-mail/attachment_emails/attachment_pdf.eml'));
    const attachment = item.children?.[0] as AttachmentItem;
    assert.equal(attachment.meta.filename, 'broken.pdf');
    assert.equal(attachment.text, '');
    assert.match(attachment.meta.unreadable ?? '', /^not a PDF/);
  });

  it('titles an attachment by the safe base name of its file name, keeping the name as it arrived', async () => {
    const item = await parseEmail(
      withAttachment('See attached.', {
        headers: [
          'Content-Type: text/plain',
          'Content-Disposition: attachment; filename="../../../../root/.ssh/authorized_keys"',
        ],
        body: 'ssh-ed25519 AAAA',
      }),
    );
    const attachment = item.children?.[0] as AttachmentItem;
    assert.equal(attachment.title, 'authorized_keys');
    assert.equal(attachment.meta.filename, '../../../../root/.ssh/authorized_keys');
  });

  it('reads a PDF attachment of a real message', { skip: CORPUS_SKIP }, async () => {
    const item = await parseEmail(fixture('mail/flanker/attached-pdf.eml'));
    const attachment = item.children?.[0] as AttachmentItem;
    assert.equal(attachment.meta.filename, 'test.pdf');
    assert.equal(attachment.text, 'Test.');
  });

  it(
    'parses a forwarded message (message/rfc822) as mail, with its own attachments',
    { skip: CORPUS_SKIP },
    async () => {
      const item = await parseEmail(fixture('mail/mikel-mail/attachment_emails/attachment_message_rfc822.eml'));
      const forwarded = item.children?.[0] as AttachmentItem;
      assert.equal(forwarded.meta.parsedAs, 'email');
      assert.equal(forwarded.meta.email?.subject, 'Another PDF');
      assert.match(forwarded.text, /Just attaching another PDF/);
      assert.equal((forwarded.children?.[0] as AttachmentItem).meta.filename, 'broken.pdf');
    },
  );
});

describe('mail: text', () => {
  it('derives text from HTML when there is no plain part, without scripts, styles or link targets', async () => {
    const item = await parseEmail(
      message(
        [
          ['From', 'a@example.com'],
          ['Content-Type', 'text/html; charset=utf-8'],
        ],
        '<html><head><style>p{color:red}</style><script>alert(1)</script></head><body><h1>News</h1><p>Read <a href="http://t.example/x">the post</a>.</p><img src="cid:x" alt="pixel"></body></html>',
      ),
    );
    assert.equal(item.meta.textSource, 'html');
    assert.match(item.text, /News/);
    assert.match(item.text, /Read the post\./);
    assert.doesNotMatch(item.text, /alert|color|t\.example|pixel/);
  });

  it('has empty text and a placeholder title for an empty message', async () => {
    const item = await parseEmail(message([['From', 'a@example.com']], ''));
    assert.equal(item.text, '');
    assert.equal(item.title, '(no subject)');
    assert.equal(item.meta.textSource, 'none');
  });
});

describe('mail: dates', () => {
  const received = '2020-01-02T03:04:05Z';

  it('uses the Date header first', async () => {
    const item = await parseEmail(
      message([
        ['From', 'a@x.org'],
        ['Date', 'Wed, 1 Jan 2020 00:00:00 -0500'],
      ]),
      { received },
    );
    assert.equal(item.occurredAt, '2020-01-01T05:00:00.000Z');
    assert.equal(item.meta.dateSource, 'header');
  });

  it('falls back to the received attribute when Date is missing or unreadable', async () => {
    for (const headers of [
      [['From', 'a@x.org']],
      [
        ['From', 'a@x.org'],
        ['Date', 'the day after tomorrow'],
      ],
    ] as Array<Array<[string, string]>>) {
      const item = await parseEmail(message(headers), { received });
      assert.equal(item.occurredAt, '2020-01-02T03:04:05.000Z');
      assert.equal(item.meta.date, null);
      assert.equal(item.meta.dateSource, 'received');
    }
  });

  it('has no date when neither is known', async () => {
    const item = await parseEmail(message([['From', 'a@x.org']]));
    assert.equal(item.occurredAt, null);
    assert.equal(item.meta.dateSource, null);
  });
});

describe('mail: identity', () => {
  const headers: Array<[string, string]> = [
    ['From', 'Ann <ann@example.com>'],
    ['To', 'bob@example.com'],
    ['Subject', 'Lunch?'],
    ['Date', 'Fri, 7 Jun 2024 12:00:00 +0000'],
  ];

  it('is the normalised Message-ID', async () => {
    const item = await parseEmail(message([...headers, ['Message-ID', ' <Lunch.42@Mail.Example.COM>']]));
    assert.equal(item.identity, 'message-id:lunch.42@mail.example.com');
    assert.equal(item.meta.messageId, 'lunch.42@mail.example.com');
  });

  it('without Message-ID is a hash of key headers and body that survives archive differences', async () => {
    const plain = await parseEmail(message(headers, 'Noon at the usual place?\r\n'));
    assert.match(plain.identity, /^mail-sha256:[0-9a-f]{64}$/);
    // The same message as another archive holds it: an mbox From_ line, LF line ends, extra
    // transport headers and another folder attribute.
    const lf = Buffer.from(
      `From ann@example.com Fri Jun  7 12:00:01 2024\n${message(
        [['Received', 'from mx.example.com by mail.example.org'], ...headers, ['X-Folder', 'Old']],
        'Noon at the usual place?\r\n',
      )
        .toString('latin1')
        .replace(/\r\n/g, '\n')}`,
      'latin1',
    );
    const archived = await parseEmail(lf, { folder: 'Archive/2024' });
    assert.equal(archived.identity, plain.identity);
    const other = await parseEmail(message(headers, 'Noon at the other place?\r\n'));
    assert.notEqual(other.identity, plain.identity);
  });

  it('makes the same message from two sources one item (duplicate)', async () => {
    const raw = message([...headers, ['Message-ID', '<same@example.com>']]);
    const fromMbox = await parseEmail(raw, { folder: 'INBOX', read: false });
    const fromMaildir = await parseEmail(raw, { folder: 'Archive', starred: true });
    assert.equal(fromMbox.identity, fromMaildir.identity);
    // The owner looks the identity up: the second source finds the first one's item.
    const outcome = decideOutcome(mailHandler, fromMaildir.identity, {
      bySourceId: null,
      byIdentity: { id: 'item-1' },
    });
    assert.deepEqual(outcome, { result: 'duplicate', id: 'item-1' });
  });
});

describe('mail: folders, flags, spam, account', () => {
  const raw = message([
    ['From', 'a@example.com'],
    ['Message-ID', '<f@x>'],
  ]);

  it('turns the folder into a label; read defaults to true, starred to false', async () => {
    const item = await parseEmail(raw, { folder: 'Work/2009' });
    assert.equal(item.meta.folder, 'Work/2009');
    assert.deepEqual(item.meta.labels, ['Work/2009']);
    assert.deepEqual(item.meta.flags, { read: true, starred: false });
    assert.equal(item.meta.spam, false);
    const flagged = await parseEmail(raw, { read: false, starred: true });
    assert.deepEqual(flagged.meta.flags, { read: false, starred: true });
    assert.deepEqual(flagged.meta.labels, []);
  });

  it('reads the marks an mbox client keeps in the header, unless the caller says otherwise', async () => {
    const marked = (fields: Array<[string, string]>) => message([['From', 'a@example.com'], ...fields]);
    const flags = async (fields: Array<[string, string]>, attributes = {}) =>
      (await parseEmail(marked(fields), attributes)).meta.flags;
    // Thunderbird: 0001 read, 0004 marked (its star), 0009 read and expunged; 0000 neither.
    assert.deepEqual(await flags([['X-Mozilla-Status', '0000']]), { read: false, starred: false });
    assert.deepEqual(await flags([['X-Mozilla-Status', '0005']]), { read: true, starred: true });
    assert.deepEqual(
      await flags([
        ['X-Mozilla-Status', '8001'],
        ['Status', 'O'],
      ]),
      { read: true, starred: false },
    );
    // mutt and Pine: R read, O seen but unread; X-Status F flagged.
    assert.deepEqual(await flags([['Status', 'O']]), { read: false, starred: false });
    assert.deepEqual(
      await flags([
        ['Status', 'RO'],
        ['X-Status', 'F'],
      ]),
      { read: true, starred: true },
    );
    // Not a flag word: the defaults. What the caller says (a Maildir's name, Apple Mail's plist) wins.
    assert.deepEqual(await flags([['X-Mozilla-Status', 'yes']]), { read: true, starred: false });
    assert.deepEqual(await flags([['Status', 'RO']], { read: false }), { read: false, starred: false });
  });

  it('marks a message in a Spam or Junk folder as spam', async () => {
    // Subfolders of Spam/Junk, Maildir++ `.Junk` names, Yahoo's "Bulk Mail" (before: only the last segment, exactly).
    for (const folder of [
      'Spam',
      'junk',
      '[Gmail]/Spam',
      'INBOX.Junk',
      'Junk E-mail',
      'Junk Email',
      'Spam/2009',
      '.Junk',
      'INBOX/Junk/old',
      'Bulk Mail',
    ]) {
      const item = await parseEmail(raw, { folder });
      assert.equal(item.meta.spam, true, folder);
      assert.equal(item.meta.spamReason, `folder "${folder}"`);
    }
    for (const folder of ['Spammy ideas', 'Junk drawer', 'Inbox']) assert.equal(isSpamFolder(folder), false, folder);
  });

  it('marks a message flagged by a spam filter (X-Spam-Flag: YES) as spam', async () => {
    const item = await parseEmail(
      message([
        ['From', 'a@example.com'],
        ['X-Spam-Flag', 'YES'],
      ]),
    );
    assert.equal(item.meta.spam, true);
    assert.equal(item.meta.spamReason, 'X-Spam-Flag: YES');
    const clean = await parseEmail(
      message([
        ['From', 'a@example.com'],
        ['X-Spam-Flag', 'NO'],
      ]),
    );
    assert.equal(clean.meta.spam, false);
  });

  it('marks a message SpamAssassin scored as spam upstream (X-Spam-Status: Yes, without X-Spam-Flag)', async () => {
    const status = (value: string) =>
      parseEmail(
        message([
          ['From', 'a@example.com'],
          ['X-Spam-Status', value],
        ]),
      );
    const spam = await status('Yes, score=7.1 required=5.0 tests=HTML_MESSAGE,MIME_HTML_ONLY');
    assert.equal(spam.meta.spam, true);
    assert.equal(spam.meta.spamReason, 'X-Spam-Status: Yes');
    assert.equal((await status('No, score=0.4 required=5.0')).meta.spam, false);
  });

  it('names the mail account of imported mail after its source', () => {
    assert.equal(importedMailAccount({ kind: 'mbox', id: 'archive-2009' }), 'import:mbox:archive-2009');
    assert.equal(importedMailAccount({ kind: 'takeout' }), 'import:takeout');
  });
});
