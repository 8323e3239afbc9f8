import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { simpleParser } from 'mailparser';
import { readOlm } from './olm.js';
import type { PstMessage, PstSkipped } from './pst.js';
import { buildOlm } from './testing/index.js';
import { ZipArchives } from './zip.js';

test('an Outlook for Mac archive (.olm): each message as the mail it was, with its folder and read mark; every other file accounted for', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'olm-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const archive = await ZipArchives.open([await buildOlm(path.join(dir, 'Archive.olm'))]);
  // What the archive's `../secret.txt` would name on disk, were it followed.
  fs.writeFileSync(path.join(dir, 'secret.txt'), 'not for the archive');
  const entries: Array<PstMessage | PstSkipped> = [];
  try {
    for await (const entry of readOlm(archive.path)) entries.push(entry);
  } finally {
    archive.close();
  }
  const messages = entries.filter((e): e is PstMessage => 'bytes' in e);
  assert.deepEqual(
    messages.map((m) => [m.folder, m.read, m.received]),
    [
      ['Inbox/Projects', true, undefined],
      ['Inbox', false, '2022-05-26T17:56:02.000Z'],
      ['Sent Items', false, undefined],
    ],
  );
  const [reply, report, sent] = await Promise.all(messages.map((m) => simpleParser(m.bytes)));
  assert.equal(report!.subject, 'Quarterly report & figures');
  assert.equal(report!.from?.value[0]?.address, 'bob@example.org');
  assert.deepEqual(
    [report!.to, report!.cc]
      .flatMap((list) => (Array.isArray(list) ? list : [list]))
      .flatMap((l) => l!.value.map((v) => v.address)),
    ['ann@example.com', 'cy@example.com', 'dee@example.com'],
  );
  assert.equal(report!.date?.toISOString(), '2022-05-26T17:55:40.000Z');
  assert.equal(report!.messageId, '<report-2022@example.org>');
  assert.equal(report!.attachments[0]?.filename, 'report.pdf');
  assert.equal(report!.attachments[0]?.content.toString(), '%PDF-1.4\n% the quarterly report\n');
  assert.equal(reply!.inReplyTo, '<report-2022@example.org>');
  assert.equal(String(reply!.html).trim(), '<p>Figures look <b>good</b>.</p>');
  assert.equal(sent!.text?.trim(), 'Lunch on Friday?');
  assert.deepEqual(sent!.attachments, [], 'the attachment the archive lost and the one outside it are left out');

  const skipped = new Map(entries.filter((e): e is PstSkipped => 'skipped' in e).map((e) => [e.key, e.skipped]));
  assert.deepEqual([...skipped.keys()].sort(), [
    '../secret.txt',
    'Accounts/ann@example.com/com.microsoft.__Attachments/menu.pdf',
    'Accounts/ann@example.com/com.microsoft.__Attachments/report.pdf',
    'Accounts/ann@example.com/com.microsoft.__Contacts/Address Book/contact_00000.xml',
    'Accounts/ann@example.com/com.microsoft.__Messages/Inbox/message_00003.xml',
    'Categories.xml',
  ]);
  assert.equal(
    skipped.get('Accounts/ann@example.com/com.microsoft.__Attachments/report.pdf'),
    'an attachment of a message, sent inside it',
  );
  assert.match(
    skipped.get('Accounts/ann@example.com/com.microsoft.__Messages/Inbox/message_00003.xml')!,
    /^an unreadable message: /,
  );
  assert.match(
    skipped.get('Accounts/ann@example.com/com.microsoft.__Attachments/menu.pdf')!,
    /missing from the archive: sent without it$/,
  );
  assert.match(skipped.get('../secret.txt')!, /missing from the archive: sent without it$/);
  assert.match(
    skipped.get('Accounts/ann@example.com/com.microsoft.__Contacts/Address Book/contact_00000.xml')!,
    /not read from \.olm archives yet/,
  );
});
