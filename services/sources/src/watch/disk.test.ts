import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { isIgnored, isIgnoredByWatcher, walk } from './disk.js';

test("a watched folder's items leave out hidden files and the parts of a web page saved complete", async () => {
  const root = await fs.mkdtemp(path.join(os.tmpdir(), 'memex-disk-'));
  try {
    for (const file of ['Recipe.html', 'Recipe_files/photo.jpg', '.DS_Store', 'tax_files/scan.jpg', 'holiday.jpg']) {
      await fs.mkdir(path.join(root, path.dirname(file)), { recursive: true });
      await fs.writeFile(path.join(root, file), 'x');
    }
    assert.deepEqual([...(await walk(root)).keys()].sort(), ['Recipe.html', 'holiday.jpg', 'tax_files/scan.jpg']);
    // What the watcher and a reconcile of touched paths skip, by path alone.
    assert.equal(isIgnored(root, 'Recipe_files/photo.jpg'), true);
    assert.equal(isIgnored(root, 'Recipe_files'), true);
    assert.equal(isIgnored(root, '.DS_Store'), true);
    assert.equal(isIgnored(root, 'tax_files/scan.jpg'), false);
    assert.equal(isIgnored(root, 'Recipe.html'), false);
  } finally {
    await fs.rm(root, { recursive: true, force: true });
  }
});

test("a Maildir's folders are read, Maildir++ ones too, but not its deliveries under way", async () => {
  const root = await fs.mkdtemp(path.join(os.tmpdir(), 'memex-maildir-'));
  try {
    for (const file of [
      'cur/1.host:2,S',
      'new/2.host',
      'tmp/3.host',
      'dovecot-uidlist',
      '.Work.2009/cur/4.host:2,',
      '.Work.2009/tmp/5.host',
      '.Work.2009/maildirfolder',
      '.git/config',
      'notes/tmp/draft.md',
    ]) {
      await fs.mkdir(path.join(root, path.dirname(file)), { recursive: true });
      await fs.writeFile(path.join(root, file), 'x');
    }
    assert.deepEqual([...(await walk(root)).keys()].sort(), [
      '.Work.2009/cur/4.host:2,',
      '.Work.2009/maildirfolder',
      'cur/1.host:2,S',
      'dovecot-uidlist',
      'new/2.host',
      'notes/tmp/draft.md',
    ]);
    for (const [relative, ignored] of [
      ['.Work.2009/cur/4.host:2,', false],
      ['.Work.2009', false],
      ['.Work.2009/maildirfolder', false],
      ['.Work.2009/tmp/5.host', true],
      ['tmp/3.host', true],
      ['.git/config', true],
      ['.git', true],
      ['notes/tmp/draft.md', false],
    ] as const)
      assert.equal(isIgnored(root, relative), ignored, relative);
    // A folder the client is making (`cur/` not in it yet) is watched, and only that: what is in
    // it waits for `cur/`, and hidden folders elsewhere stay unwatched.
    await fs.mkdir(path.join(root, '.Lists'));
    await fs.mkdir(path.join(root, 'notes/.cache'));
    for (const [relative, ignored] of [
      ['.Lists', false],
      ['.git', false],
      ['.git/config', true],
      ['.Work.2009/tmp/5.host', true],
      ['notes/.cache', true],
      ['cur/1.host:2,S', false],
    ] as const)
      assert.equal(isIgnoredByWatcher(root, relative), ignored, relative);
  } finally {
    await fs.rm(root, { recursive: true, force: true });
  }
});
