import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileAttributes } from './folder.js';
import { folderName, listMaildir, maildirMessage, parseMaildirName } from './maildir.js';

test('folder names: the root is INBOX, Maildir++ dots and nested directories become /', () => {
  assert.equal(folderName(''), 'INBOX');
  assert.equal(folderName('.Sent'), 'Sent');
  assert.equal(folderName('.Work.2009'), 'Work/2009');
  assert.equal(folderName(path.join('Archive', 'Spam')), 'Archive/Spam');
});

test('maildir names: flags after :2, (or !2,), none without', () => {
  assert.deepEqual(parseMaildirName('1234567890.M1P2.host:2,FRS'), { unique: '1234567890.M1P2.host', flags: 'FRS' });
  assert.deepEqual(parseMaildirName('1234567890.M1P2.host!2,S'), { unique: '1234567890.M1P2.host', flags: 'S' });
  assert.deepEqual(parseMaildirName('1234567890.M1P2.host'), { unique: '1234567890.M1P2.host', flags: '' });
});

test('a Maildir++ tree lists every message with its folder, read and starred flags and delivery time', async () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'maildir-test-'));
  const put = (dir: string, name: string) => {
    fs.mkdirSync(path.join(root, dir), { recursive: true });
    fs.writeFileSync(path.join(root, dir, name), 'Subject: x\n\ny\n');
  };
  for (const dir of ['tmp', '.Junk/tmp']) fs.mkdirSync(path.join(root, dir), { recursive: true });
  put('new', '1262304000.M1P1.host');
  put('cur', '1262304001.M2P1.host:2,S');
  put('cur', '1262304002.M3P1.host:2,FS');
  put('.Junk/cur', '1262304003.M4P1.host:2,');
  put('tmp', 'half-delivered');
  // What real trees hold besides: Dovecot's index files, a hidden file in cur/, a message copied in
  // by hand beside cur/, and a plain (non-Maildir) folder of numbered MH-style files.
  put('', 'dovecot.index.cache');
  put('', 'dovecot-uidlist');
  put('', 'maildirfolder');
  put('cur', '.DS_Store');
  put('', 'loose.eml');
  put('Lists/mh', '1');
  const { messages, skipped } = await listMaildir(root);
  assert.deepEqual(
    messages.map((m) => [m.key, m.folder, m.read, m.starred, m.received]),
    [
      ['INBOX/1262304000.M1P1.host', 'INBOX', false, false, '2010-01-01T00:00:00.000Z'],
      ['INBOX/1262304001.M2P1.host', 'INBOX', true, false, '2010-01-01T00:00:01.000Z'],
      ['INBOX/1262304002.M3P1.host', 'INBOX', true, true, '2010-01-01T00:00:02.000Z'],
      ['INBOX/loose.eml', 'INBOX', true, false, null],
      ['Junk/1262304003.M4P1.host', 'Junk', false, false, '2010-01-01T00:00:03.000Z'],
      ['Lists/mh/1', 'Lists/mh', true, false, null],
    ],
  );
  assert.deepEqual(
    skipped.map((s) => [s.key, s.reason.split(' ')[0]]),
    [
      ['cur/.DS_Store', 'a'],
      ['dovecot-uidlist', 'Maildir'],
      ['dovecot.index.cache', 'Maildir'],
      ['maildirfolder', 'Maildir'],
      ['tmp/half-delivered', 'in'],
    ],
  );
});

test("a Maildir message's place: its folder from the path above, its marks from its name", () => {
  assert.deepEqual(maildirMessage('cur/1262599201.M1P1.host:2,FS'), {
    folder: 'INBOX',
    read: true,
    starred: true,
    trashed: false,
    received: '2010-01-04T10:00:01.000Z',
  });
  assert.deepEqual(maildirMessage('.Work.2009/new/1262599202.M2P1.host'), {
    folder: 'Work/2009',
    read: false,
    starred: false,
    trashed: false,
    received: '2010-01-04T10:00:02.000Z',
  });
  assert.equal(maildirMessage('Mail/Archive/cur/x:2,ST')?.trashed, true);
  assert.equal(maildirMessage('Mail/Archive/cur/x:2,ST')?.folder, 'Mail/Archive');
  assert.equal(maildirMessage('.Work/tmp/1262599203.M3P1.host'), null, 'a delivery under way');
  assert.equal(maildirMessage('notes/letter.eml'), null);
  // As a watched folder or a folder import sends them: a Maildir's message with its folder and marks.
  assert.deepEqual(fileAttributes('message/rfc822', 'cur/1262599201.M1P1.host:2,S', '2026-01-01T00:00:00Z'), {
    modified: '2026-01-01T00:00:00Z',
    folder: 'INBOX',
    read: true,
    starred: false,
    received: '2010-01-04T10:00:01.000Z',
  });
  assert.deepEqual(fileAttributes('message/rfc822', 'Saved/letter.eml', '2026-01-01T00:00:00Z'), {
    modified: '2026-01-01T00:00:00Z',
    folder: 'Saved',
  });
});
