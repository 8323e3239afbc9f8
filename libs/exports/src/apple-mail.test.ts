import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { simpleParser } from 'mailparser';
import { completePartialEmlx, withAppleMailParts } from './apple-mail.js';
import { listFolder } from './folder.js';

const PDF = Buffer.from('%PDF-1.4\n% the quarterly report\n'.repeat(8));
const PNG = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex');

/**
 * A `.partial.emlx` as Mail writes one: a text part, a nested alternative whose PDF (section 2.2)
 * Mail keeps in `Attachments/`, an image (section 3) kept as an older store's `.emlxpart`, and a
 * file (section 4) never downloaded.
 */
function partialEmlx(): Buffer {
  const kept = (type: string, name: string) =>
    `Content-Type: ${type}; name="${name}"\nContent-Disposition: attachment; filename="${name}"\n` +
    `Content-Transfer-Encoding: base64\nX-Apple-Content-Length: 1234\n\n`;
  const message = Buffer.from(
    [
      'From: Ann <ann@example.org>',
      'To: me@example.net',
      'Subject: The report',
      'Date: Tue, 4 Jun 2024 09:30:00 +0200',
      'Message-ID: <report@example.org>',
      'MIME-Version: 1.0',
      'Content-Type: multipart/mixed; boundary="outer"',
      '',
      'This is a multi-part message in MIME format.',
      '--outer',
      'Content-Type: text/plain; charset=utf-8',
      '',
      'Here is the report, and the chart.',
      '--outer',
      'Content-Type: multipart/mixed; boundary=inner',
      '',
      '--inner',
      'Content-Type: text/html; charset=utf-8',
      '',
      '<p>Figures inside.</p>',
      '--inner',
      kept('application/pdf', 'report.pdf'),
      '--inner--',
      '--outer',
      // As Mail writes an empty part: its header's line break, then the boundary's.
      kept('image/png', 'chart.png').slice(0, -1),
      '--outer',
      kept('application/zip', 'raw-data.zip').slice(0, -1),
      '--outer--',
      '',
    ].join('\n'),
  );
  const plist =
    '<?xml version="1.0" encoding="UTF-8"?>\n<plist version="1.0">\n<dict>\n\t<key>flags</key>\n\t<integer>1</integer>\n</dict>\n</plist>\n';
  return Buffer.concat([Buffer.from(`${message.length}        \n`), message, Buffer.from(plist)]);
}

test("Apple Mail's .partial.emlx is made whole from the parts Mail kept apart; those files are accounted for as sent inside it", async (t) => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'apple-mail-'));
  t.after(() => fs.rmSync(root, { recursive: true, force: true }));
  const data = path.join(root, 'V10/ACCOUNT/INBOX.mbox/0A1B/Data/1');
  const write = (name: string, bytes: Buffer) => {
    fs.mkdirSync(path.dirname(path.join(data, name)), { recursive: true });
    fs.writeFileSync(path.join(data, name), bytes);
  };
  write('Messages/123.partial.emlx', partialEmlx());
  write('Attachments/123/2.2/report.pdf', PDF);
  write('Messages/123.3.emlxpart', PNG);
  // Another message's attachment, whose message is not here: a file like any other.
  write('Attachments/999/2/orphan.pdf', PDF);

  const listed = withAppleMailParts(await listFolder(root, new Set(['message/x-emlx', 'application/pdf'])));
  assert.deepEqual(
    listed.files.map((f) => f.key.replace('V10/ACCOUNT/INBOX.mbox/0A1B/Data/1/', '')),
    ['Attachments/999/2/orphan.pdf', 'Messages/123.partial.emlx'],
  );
  const message = 'V10/ACCOUNT/INBOX.mbox/0A1B/Data/1/Messages/123.partial.emlx';
  assert.deepEqual(
    listed.skipped.map((s) => [s.key.replace('V10/ACCOUNT/INBOX.mbox/0A1B/Data/1/', ''), s.reason]).sort(),
    [
      ['Attachments/123/2.2/report.pdf', `a part of the Apple Mail message ${message}, sent inside it`],
      ['Messages/123.3.emlxpart', `a part of the Apple Mail message ${message}, sent inside it`],
    ],
  );

  const file = path.join(data, 'Messages/123.partial.emlx');
  const whole = await completePartialEmlx(fs.readFileSync(file), file);
  assert.deepEqual(
    [whole.filled, whole.missing],
    [2, ['4']],
    'the PDF and the image put back; the zip Mail never downloaded',
  );
  const length = Number(/^(\d+)\n/.exec(whole.bytes.toString('latin1'))![1]);
  const inner = whole.bytes.subarray(whole.bytes.indexOf('\n') + 1);
  assert.match(
    inner.subarray(length).toString(),
    /^<\?xml .*<key>flags<\/key>/s,
    'the length counts the parts put back',
  );
  const parsed = await simpleParser(inner.subarray(0, length));
  assert.match(parsed.text ?? '', /^Here is the report, and the chart\./);
  assert.match(String(parsed.html), /<p>Figures inside\.<\/p>$/);
  const attachments = new Map(parsed.attachments.map((a) => [a.filename, a.content]));
  assert.deepEqual(attachments.get('report.pdf'), PDF);
  assert.deepEqual(attachments.get('chart.png'), PNG);
  assert.equal(attachments.get('raw-data.zip')?.length, 0);
});
