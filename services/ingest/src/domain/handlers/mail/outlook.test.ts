import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { AttachmentItem, EmailItem } from '../handler.js';
import { message, pdf } from '../testing/build.js';
import { outlookMsg, type OutlookMessage } from '../testing/outlook-msg.js';
import { parseEmail, registry, rejection } from '../testing/parse.js';

const parseMsg = async (bytes: Buffer, attributes: Record<string, unknown> = {}) =>
  (await registry.parse({ type: 'application/vnd.ms-outlook', bytes, attributes })) as EmailItem;

const sent: OutlookMessage = {
  subject: 'Budget für Q3',
  body: 'Hallo Ann,\r\nthe figures are attached.\r\n',
  html: '<p>Hallo Ann,</p><p>the <b>figures</b> are attached.</p>',
  senderName: 'Zoë Müller',
  senderEmail: 'zoe@acme.example',
  recipients: [
    { name: 'Ann Lee', email: 'ann@example.org', type: 'to' },
    { name: 'Raj', email: 'raj@acme.example', type: 'cc' },
    { name: '', email: 'boss@acme.example', type: 'bcc' },
  ],
  submitted: new Date('2024-06-04T07:30:00Z'),
  messageId: '<Budget.Q3@acme.example>',
  inReplyTo: '<ask@example.org>',
  references: '<root@example.org> <ask@example.org>',
  attachments: [{ filename: 'figures.pdf', mimeType: 'application/pdf', content: pdf([['Q3 figures', 'Revenue 42']]) }],
};

describe('mail: Outlook .msg files', () => {
  it('reads a message Outlook sent from its properties: people, date, ids, body and attachments', async () => {
    const item = await parseMsg(outlookMsg(sent));
    assert.equal(item.kind, 'email');
    assert.equal(item.identity, 'message-id:budget.q3@acme.example');
    assert.equal(item.title, 'Budget für Q3');
    assert.equal(item.occurredAt, '2024-06-04T07:30:00.000Z');
    assert.match(item.text, /the figures are attached/);
    assert.deepEqual(item.meta.from, [{ name: 'Zoë Müller', address: 'zoe@acme.example' }]);
    assert.deepEqual(item.meta.to, [{ name: 'Ann Lee', address: 'ann@example.org' }]);
    assert.deepEqual(item.meta.cc, [{ name: 'Raj', address: 'raj@acme.example' }]);
    assert.deepEqual(item.meta.bcc, [{ name: '', address: 'boss@acme.example' }]);
    assert.equal(item.meta.inReplyTo, 'ask@example.org');
    assert.deepEqual(item.meta.references, ['root@example.org', 'ask@example.org']);
    assert.equal(item.meta.threadKey, 'root@example.org');
    assert.equal(item.meta.dateSource, 'header');
    const attachment = item.children?.[0] as AttachmentItem;
    assert.equal(attachment.title, 'figures.pdf');
    assert.equal(attachment.meta.parsedAs, 'document');
    assert.match(attachment.text, /Revenue 42/);
  });

  it('a received message keeps its transport headers (Date, Message-ID, List-Id): the same item as its .eml', async () => {
    const headers = [
      ['Received', 'from mx.example.org by mail.acme.example; Tue, 4 Jun 2024 09:31:00 +0200'],
      ['From', 'Ann Lee <ann@example.org>'],
      ['To', 'zoe@acme.example'],
      ['Subject', 'Re: Budget'],
      ['Date', 'Tue, 04 Jun 2024 09:30:00 +0200'],
      ['Message-ID', '<Reply.1@example.org>'],
      ['List-Id', 'Finance <finance.lists.example.org>'],
      ['MIME-Version', '1.0'],
      ['Content-Type', 'text/plain; charset=us-ascii'],
    ] as Array<[string, string]>;
    const eml = await parseEmail(message(headers, 'Thanks, got them.\r\n'));
    const msg = await parseMsg(
      outlookMsg({
        subject: 'Re: Budget',
        body: 'Thanks, got them.\r\n',
        senderName: 'Ann Lee',
        senderEmail: 'ann@example.org',
        recipients: [{ name: '', email: 'zoe@acme.example', type: 'to' }],
        // Outlook stamps the time it received the message; the Date header says when it was written.
        submitted: new Date('2024-06-04T07:31:00Z'),
        transportHeaders: `${headers.map(([k, v]) => `${k}: ${v}`).join('\r\n')}\r\n`,
      }),
    );
    assert.equal(msg.identity, eml.identity);
    assert.equal(msg.occurredAt, eml.occurredAt);
    assert.equal(msg.meta.mailingList, 'finance.lists.example.org');
    assert.deepEqual(msg.meta.from, eml.meta.from);
    assert.equal(msg.text.trim(), eml.text.trim());
  });

  it('a sent message carries its Outlook conversation (PR_CONVERSATION_INDEX), as the Thread-Index it was sent with', async () => {
    const index = Buffer.concat([
      Buffer.from('01d91a2b3c4d', 'hex'),
      Buffer.alloc(16, 0x5e),
      Buffer.from('0000001234', 'hex'),
    ]);
    const item = await parseMsg(outlookMsg({ ...sent, conversationIndex: index }));
    assert.equal(item.meta.conversation, `thread-index:${index.subarray(0, 22).toString('hex')}`);
    assert.equal((await parseMsg(outlookMsg(sent))).meta.conversation, undefined);
  });

  it('a draft without Message-ID nor date stays undated, with the same identity each time it is read', async () => {
    const draft = outlookMsg({ ...sent, messageId: undefined, submitted: undefined, attachments: [] });
    const first = await parseMsg(draft);
    const again = await parseMsg(draft);
    assert.match(first.identity, /^mail-sha256:/);
    assert.equal(first.identity, again.identity);
    assert.equal(first.occurredAt, null);
    assert.equal(first.meta.messageId, null);
    // The file's time is the fallback, and says so.
    const dated = await parseMsg(draft, { modified: '2024-06-05T08:00:00Z' });
    assert.equal(dated.occurredAt, '2024-06-05T08:00:00.000Z');
    assert.equal(dated.meta.dateSource, 'file');
  });

  it('a .msg attached to a message is read as a message', async () => {
    const forwarded = outlookMsg(sent);
    const b64 = forwarded.toString('base64').replace(/.{76}/g, '$&\r\n');
    const outer = message(
      [
        ['From', 'ann@example.org'],
        ['Subject', 'Fwd: budget'],
        ['Message-ID', '<fwd@example.org>'],
        ['Content-Type', 'multipart/mixed; boundary="b"'],
      ],
      `--b\r\nContent-Type: text/plain\r\n\r\nSee attached.\r\n--b\r\nContent-Type: application/octet-stream; name="Budget.msg"\r\nContent-Disposition: attachment; filename="Budget.msg"\r\nContent-Transfer-Encoding: base64\r\n\r\n${b64}\r\n--b--\r\n`,
    );
    const item = await parseEmail(outer);
    const attachment = item.children?.[0] as AttachmentItem;
    assert.equal(attachment.meta.parsedAs, 'email');
    assert.equal(attachment.meta.email?.subject, 'Budget für Q3');
    assert.equal(attachment.children?.[0]?.title, 'figures.pdf');
  });

  it('a body kept only as compressed RTF is read: the HTML it encapsulates, or the text of RTF of its own', async () => {
    const rtfOnly = (rtf: string) => parseMsg(outlookMsg({ ...sent, body: '', html: undefined, attachments: [], rtf }));
    const fromHtml = await rtfOnly(
      '{\\rtf1\\ansi\\ansicpg1252\\fromhtml1 \\deff0{\\fonttbl{\\f0\\fswiss Arial;}}' +
        "{\\*\\htmltag19 <html>}{\\*\\htmltag50 <body>}{\\*\\htmltag64 <p>}Gr\\'fc\\'dfe aus {\\*\\htmltag84 <b>}Bonn{\\*\\htmltag92 </b>}" +
        '{\\*\\htmltag72 </p>}{\\*\\htmltag58 </body>}{\\*\\htmltag27 </html>}}',
    );
    assert.equal(fromHtml.meta.textSource, 'html');
    assert.match(fromHtml.text, /Grüße aus Bonn/);
    const ownRtf = await rtfOnly(
      '{\\rtf1\\ansi\\deff0{\\fonttbl{\\f0 Calibri;}}\\f0\\fs22 Written in Outlook\\par second line\\par}',
    );
    assert.match(ownRtf.text, /Written in Outlook\s+second line/);
  });

  it('rejects what is not an Outlook message, saying what it is', async () => {
    assert.match(
      (await rejection(parseMsg(Buffer.from('Outlook OLE bytes')))).reason,
      /not an Outlook \.msg file: it does not start with the OLE compound file signature/,
    );
    assert.match(
      (await rejection(parseMsg(outlookMsg({ ...sent, messageClass: 'IPM.Contact' })))).reason,
      /an Outlook IPM\.Contact item, not a message/,
    );
    const truncated = outlookMsg(sent).subarray(0, 600);
    assert.match((await rejection(parseMsg(truncated))).reason, /unreadable Outlook \.msg file/);
  });
});
