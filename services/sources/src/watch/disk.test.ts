import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { isIgnored, walk } from './disk.js';

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
