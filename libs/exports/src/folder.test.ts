import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { FolderArchives, listFolder, messageFolderOf } from './folder.js';
import { files } from './files.js';
import { damageZipMember, zipOf } from './testing/index.js';

test("a saved message's folder label: the folder it sits in, or for Apple Mail's store its mailboxes", () => {
  assert.equal(messageFolderOf('Junk/offer.eml'), 'Junk');
  assert.equal(messageFolderOf('2009/Work/plan.msg'), '2009/Work');
  assert.equal(messageFolderOf('loose.eml'), undefined);
  assert.equal(messageFolderOf('V10/4F2A/INBOX.mbox/9C1E/Data/3/1/Messages/31245.emlx'), 'INBOX');
  assert.equal(messageFolderOf('Work.mbox/Projects.mbox/77AA/Data/Messages/12.partial.emlx'), 'Work/Projects');
  assert.equal(messageFolderOf('Mailboxes/Junk.mbox/Messages/7.emlx'), 'Junk');
});

test('a folder of Office 97–2003 and iWork files: .doc, .xls, .ppt (and their templates), a Keynote .key are sent as their types; a private key is not', async () => {
  const root = await fs.mkdtemp(path.join(os.tmpdir(), 'memex-folder-'));
  try {
    for (const name of ['memo.doc', 'budget.xls', 'talk.ppt', 'letterhead.dot', 'layout.pages', 'IMG_1.jpg.json'])
      await fs.writeFile(path.join(root, name), 'x');
    // `.key`: a Keynote presentation (a zip), or a private key, which is no document.
    await fs.writeFile(path.join(root, 'Launch.key'), Buffer.from('PK\x03\x04rest of the zip', 'latin1'));
    await fs.writeFile(path.join(root, 'server.key'), '-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----\n');
    const accepted = new Set([
      'application/msword',
      'application/vnd.ms-excel',
      'application/vnd.ms-powerpoint',
      'application/vnd.apple.keynote',
    ]);
    const { files, skipped } = await listFolder(root, accepted);
    assert.deepEqual(
      files.map((file) => [file.key, file.type]),
      [
        ['Launch.key', 'application/vnd.apple.keynote'],
        ['budget.xls', 'application/vnd.ms-excel'],
        ['letterhead.dot', 'application/msword'],
        ['memo.doc', 'application/msword'],
        ['talk.ppt', 'application/vnd.ms-powerpoint'],
      ],
    );
    assert.deepEqual(skipped, [
      {
        key: 'IMG_1.jpg.json',
        reason: 'a data file (.json): settings, exports and photo sidecars are not imported from folders',
      },
      { key: 'layout.pages', reason: 'no handler takes .pages files' },
      { key: 'server.key', reason: 'no handler takes .key files' },
    ]);
  } finally {
    await fs.rm(root, { recursive: true, force: true });
  }
});

test('a Pages document saved as a package (a folder) is one document, its Index.zip sent under its name; its previews are its parts', async () => {
  const root = await fs.mkdtemp(path.join(os.tmpdir(), 'memex-folder-'));
  try {
    await fs.mkdir(path.join(root, 'Letter.pages/Data'), { recursive: true });
    await fs.writeFile(path.join(root, 'Letter.pages/Index.zip'), Buffer.from('PK\x03\x04the archives', 'latin1'));
    await fs.writeFile(path.join(root, 'Letter.pages/preview.jpg'), 'jpeg');
    await fs.writeFile(path.join(root, 'Letter.pages/Data/photo.png'), 'png');
    // A folder merely named like one, without an Index.zip, is a folder.
    await fs.mkdir(path.join(root, 'Old.key'));
    await fs.writeFile(path.join(root, 'Old.key/notes.txt'), 'notes');
    const { files, skipped } = await listFolder(root, new Set(['application/vnd.apple.pages', 'text/plain']));
    assert.deepEqual(
      files.map((file) => [file.key, file.type, path.relative(root, file.file)]),
      [
        ['Letter.pages', 'application/vnd.apple.pages', 'Letter.pages/Index.zip'],
        ['Old.key/notes.txt', 'text/plain', 'Old.key/notes.txt'],
      ],
    );
    assert.deepEqual(skipped, [
      { key: 'Letter.pages/Data/photo.png', reason: 'a part of the document Letter.pages' },
      { key: 'Letter.pages/preview.jpg', reason: 'a part of the document Letter.pages' },
    ]);
  } finally {
    await fs.rm(root, { recursive: true, force: true });
  }
});

test("a web page saved complete is one page: its folder's images and scripts are skipped as its parts, each accounted for", async () => {
  const root = await fs.mkdtemp(path.join(os.tmpdir(), 'memex-folder-'));
  try {
    const files = [
      'Recipe.html',
      'Recipe_files/photo.jpg',
      'Recipe_files/app.js',
      'Recipe_files/deep/icon.png',
      'web/Seite.htm',
      'web/Seite-Dateien/bild.jpg',
      // A folder that only looks like one: no page beside it.
      'tax_files/scan.jpg',
    ];
    for (const file of files) {
      await fs.mkdir(path.join(root, path.dirname(file)), { recursive: true });
      await fs.writeFile(path.join(root, file), 'x');
    }
    const { files: sent, skipped } = await listFolder(root, new Set(['text/html', 'image/jpeg', 'image/png']));
    assert.deepEqual(
      sent.map((file) => file.key),
      ['Recipe.html', 'tax_files/scan.jpg', 'web/Seite.htm'],
    );
    assert.deepEqual(skipped, [
      { key: 'Recipe_files/app.js', reason: 'a part of the saved web page Recipe.html' },
      { key: 'Recipe_files/deep/icon.png', reason: 'a part of the saved web page Recipe.html' },
      { key: 'Recipe_files/photo.jpg', reason: 'a part of the saved web page Recipe.html' },
      { key: 'web/Seite-Dateien/bild.jpg', reason: 'a part of the saved web page web/Seite.htm' },
    ]);
  } finally {
    await fs.rm(root, { recursive: true, force: true });
  }
});

test('a file whose name tells no type is sent as what its first bytes show: mail by its header, a PDF by its signature', async () => {
  const root = await fs.mkdtemp(path.join(os.tmpdir(), 'memex-folder-'));
  try {
    // The Enron corpus (`allen-p/inbox/1.`), an MH folder, a Maildir file, a PDF saved without its extension.
    const enron =
      'Message-ID: <1.JavaMail.evans@thyme>\r\nDate: Mon, 14 May 2001 16:39:00 -0700 (PDT)\r\nFrom: phillip.allen@enron.com\r\n' +
      'To: tim.belden@enron.com\r\nSubject: \r\nX-From: Phillip K Allen\r\nX-To: Tim Belden <Tim Belden/Enron@EnronXGate>\r\n\r\nHere is our forecast\r\n';
    const files: Record<string, string> = {
      'allen-p/inbox/1.': enron,
      'mh/17': `Received: from mx.example.org\n\tby mail.example.org; Mon, 1 Jun 2009 10:00:00 +0000\nFrom: ann@example.org\nSubject: hi\n\nbody\n`,
      'cur/1262304001.M1P1.host:2,S': `Return-Path: <ann@example.org>\nFrom: ann@example.org\n\nbody\n`,
      paper: '%PDF-1.4\n%\xe2\xe3\xcf\xd3\n',
      // Header-like, but not mail; and text that only starts like a header.
      config: 'Name: value\nOther: thing\n\nrest\n',
      notes: 'To: do list\nbuy milk and eggs\n',
      empty: '',
    };
    for (const [key, content] of Object.entries(files)) {
      await fs.mkdir(path.dirname(path.join(root, key)), { recursive: true });
      await fs.writeFile(path.join(root, key), content, 'latin1');
    }
    const { files: sent, skipped } = await listFolder(root, new Set(['message/rfc822', 'application/pdf']));
    assert.deepEqual(
      sent.map((file) => [file.key, file.type]),
      [
        ['allen-p/inbox/1.', 'message/rfc822'],
        ['cur/1262304001.M1P1.host:2,S', 'message/rfc822'],
        ['mh/17', 'message/rfc822'],
        ['paper', 'application/pdf'],
      ],
    );
    assert.deepEqual(
      skipped.map((s) => s.key),
      ['config', 'empty', 'notes'],
    );
  } finally {
    await fs.rm(root, { recursive: true });
  }
});

test('a zip in a folder is read as the folder it unpacks to: its files by their paths in it, what it cannot give accounted for', async () => {
  const root = await fs.mkdtemp(path.join(os.tmpdir(), 'memex-folder-zip-'));
  const archives = new FolderArchives();
  try {
    const inner = await zipOf(path.join(root, 'inner.zip'), { 'deep.txt': 'inside a zip inside a zip' });
    await fs.mkdir(path.join(root, 'old'));
    // As macOS's Archive Utility makes them: a __MACOSX folder of resource forks beside the files.
    const projects = await zipOf(path.join(root, 'old/Projects 2009.zip'), {
      'Projects 2009/report.txt': 'The final report of 2009.',
      'Projects 2009/plan.txt': 'The plan',
      'Projects 2009/secret.txt': 'locked',
      'Projects 2009/nested.zip': await fs.readFile(inner),
      '__MACOSX/Projects 2009/._report.txt': 'resource fork',
    });
    await fs.rm(inner);
    damageZipMember(projects, 'Projects 2009/secret.txt', { method: 99 });
    await fs.writeFile(path.join(root, 'old/broken.zip'), 'PK\x03\x04 not really a zip');
    await fs.writeFile(path.join(root, 'notes.txt'), 'loose notes');

    const { files: listed, skipped } = await listFolder(root, new Set(['text/plain']), archives);
    assert.deepEqual(
      listed.map((file) => file.key),
      ['notes.txt', 'old/Projects 2009.zip/Projects 2009/plan.txt', 'old/Projects 2009.zip/Projects 2009/report.txt'],
    );
    const report = listed.find((file) => file.key.endsWith('report.txt'))!;
    assert.equal((await files.readFile(report.file)).toString(), 'The final report of 2009.');
    assert.equal(report.size, 'The final report of 2009.'.length);
    assert.deepEqual(
      skipped.map(({ key, reason }) => [key, reason.replace(/:.*/s, '')]),
      [
        [
          'old/Projects 2009.zip/Projects 2009/secret.txt',
          'compressed in Projects 2009.zip with a method memex cannot read (99)',
        ],
        ['old/Projects 2009.zip/Projects 2009/nested.zip', 'a zip inside a zip'],
        [
          'old/Projects 2009.zip/__MACOSX',
          "macOS's resource forks of a zip's files (not files of their own; not read)",
        ],
        [
          'old/broken.zip',
          'a zip archive, but it cannot be read as a zip archive (End of central directory record signature not found. Either not a zip file, or file is truncated.)',
        ],
      ],
    );

    // A zip opened as a folder: its files by their paths in it.
    const opened = await archives.open(projects);
    assert.deepEqual(
      opened.skipped.map((s) => s.key),
      ['Projects 2009/secret.txt'],
    );
    const direct = await listFolder(projects, new Set(['text/plain']), archives);
    assert.deepEqual(
      direct.files.map((file) => file.key),
      ['Projects 2009/plan.txt', 'Projects 2009/report.txt'],
    );
  } finally {
    archives.close();
    await fs.rm(root, { recursive: true, force: true });
  }
});

test('a link in a folder: to a file it is read as the file, to a folder or to nothing it is skipped, saying why', async () => {
  const root = await fs.mkdtemp(path.join(os.tmpdir(), 'memex-folder-links-'));
  try {
    await fs.mkdir(path.join(root, 'docs'));
    await fs.writeFile(path.join(root, 'docs/plan.txt'), 'The plan.');
    await fs.symlink(path.join(root, 'docs/plan.txt'), path.join(root, 'plan-link.txt'));
    await fs.symlink(path.join(root, 'docs'), path.join(root, 'docs-link'));
    await fs.symlink(path.join(root, 'gone.txt'), path.join(root, 'dangling.txt'));
    const { files: listed, skipped } = await listFolder(root, new Set(['text/plain']));
    assert.deepEqual(
      listed.map((file) => [file.key, file.size]),
      [
        ['docs/plan.txt', 9],
        ['plan-link.txt', 9],
      ],
    );
    assert.deepEqual(skipped, [
      { key: 'dangling.txt', reason: 'a link whose target is gone' },
      { key: 'docs-link', reason: 'a link to a folder (not followed: it may lead in a circle)' },
    ]);
  } finally {
    await fs.rm(root, { recursive: true, force: true });
  }
});
