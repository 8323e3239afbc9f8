import { test } from 'node:test';
import assert from 'node:assert/strict';
import { differences, externalIdOf, readsInPlace, sourceIdFor, type DiskFile, type KnownFile } from './files.js';

const t = new Date('2026-01-01T00:00:00Z');
const disk = (path: string, size = 1): DiskFile => ({ path, size, modifiedAt: t });
const known = (path: string, size = 1): KnownFile => ({
  path,
  item_id: '01J00000000000000000000000',
  external_id: 'x',
  sha256: 'a'.repeat(64),
  in_place: false,
  size,
  modified_at: t,
  rejected: null,
  mailbox: false,
  mbox_tail: null,
  leaving_since: null,
});

test('differences: new, changed (size or time) and gone paths; unchanged ones are left alone', () => {
  const onDisk = new Map([disk('a'), disk('b', 2), disk('new')].map((f) => [f.path, f]));
  const inMemex = new Map([known('a'), known('b'), known('gone')].map((f) => [f.path, f]));
  const d = differences(['a', 'b', 'new', 'gone'], onDisk, inMemex);
  assert.deepEqual(
    d.fresh.map((f) => f.path),
    ['new'],
  );
  assert.deepEqual(
    d.changed.map((c) => c.disk.path),
    ['b'],
  );
  assert.deepEqual(
    d.gone.map((f) => f.path),
    ['gone'],
  );
});

test('differences: a file back where it was after it went (leaving) is changed, to be recorded again', () => {
  const onDisk = new Map([disk('back'), disk('same')].map((f) => [f.path, f]));
  const inMemex = new Map(
    [{ ...known('back'), leaving_since: t }, known('same'), { ...known('away'), leaving_since: t }].map((f) => [
      f.path,
      f,
    ]),
  );
  const d = differences(['back', 'same', 'away'], onDisk, inMemex);
  assert.deepEqual(
    d.changed.map((c) => c.disk.path),
    ['back'],
  );
  assert.deepEqual(
    d.gone.map((f) => f.path),
    ['away'],
  );
});

test('readsInPlace: media auto keeps photos and large files in place, copy and in-place decide for all', () => {
  const settings = {
    name: 'x',
    labels: [],
    media: 'auto' as const,
    in_place_over_bytes: 1000,
    rescan_seconds: 60,
    options: {},
  };
  assert.equal(readsInPlace(settings, 'image/jpeg', 10), true);
  assert.equal(readsInPlace(settings, 'application/pdf', 10), false);
  assert.equal(readsInPlace(settings, 'application/pdf', 1000), true);
  assert.equal(readsInPlace({ ...settings, media: 'copy' }, 'image/jpeg', 10), false);
  assert.equal(readsInPlace({ ...settings, media: 'in-place' }, 'text/plain', 10), true);
});

test('ids: external ids differ by path and content; source ids are slugs, made unique', () => {
  assert.notEqual(externalIdOf('a.txt', 'a'.repeat(64)), externalIdOf('b.txt', 'a'.repeat(64)));
  assert.equal(sourceIdFor('My Papers', new Set()), 'my-papers');
  assert.equal(sourceIdFor('My Papers', new Set(['my-papers'])), 'my-papers-2');
  assert.equal(sourceIdFor('.hidden', new Set()), 'hidden');
  assert.equal(sourceIdFor('Фото', new Set()), 'folder');
});
