import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { BlobStore, sha256 } from './index.js';

function tempStore(): BlobStore {
  return new BlobStore(path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'memex-blobs-')), 'blobs'));
}

test('put stores content-addressed under ab/cd/<sha256>; get, has, delete', async () => {
  const store = tempStore();
  const hash = await store.put(Buffer.from('hello'));
  assert.equal(hash, sha256('hello'));
  assert.equal(store.pathOf(hash), path.join(store.root, hash.slice(0, 2), hash.slice(2, 4), hash));
  assert.equal((await store.get(hash)).toString(), 'hello');
  assert.equal(await store.put(Buffer.from('hello')), hash, 'the same bytes again are the same blob');
  await store.delete(hash);
  assert.equal(await store.has(hash), false);
  await assert.rejects(store.get(hash), new RegExp(`blob ${hash} is missing`));
  assert.throws(() => store.pathOf('../etc/passwd'), /not a sha256 blob id/);
});

test('putAll stores a batch the way put does, leaves no temp files, and skips blobs already there', async () => {
  const store = tempStore();
  const contents = Array.from({ length: 300 }, (_, i) => Buffer.from(`blob number ${i}`));
  const batch = new Map(contents.map((bytes) => [sha256(bytes), bytes]));
  await store.put(contents[0]!);
  await store.putAll(batch);
  for (const [hash, bytes] of batch) assert.deepEqual(await store.get(hash), bytes);
  const files = fs.readdirSync(store.root, { recursive: true, withFileTypes: true }).filter((f) => f.isFile());
  assert.equal(files.length, 300);
  assert.ok(
    files.every((f) => /^[0-9a-f]{64}$/.test(f.name)),
    'no temp files left',
  );
  await store.putAll(batch);
  assert.equal(
    fs.readdirSync(store.root, { recursive: true, withFileTypes: true }).filter((f) => f.isFile()).length,
    300,
  );
});
