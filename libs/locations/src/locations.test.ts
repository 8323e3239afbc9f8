import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import {
  fileLocation,
  InvalidLocation,
  isWithin,
  LocationUnreachable,
  memexLocations,
  TooLarge,
  type SchemeReader,
} from './index.js';

test('file: reads ranges and whole files, and says why a missing file or folder cannot be read', async () => {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'memex-locations-'));
  const file = path.join(dir, 'a.txt');
  await fs.writeFile(file, 'hello, world');
  const locations = memexLocations();
  const location = fileLocation(file);
  assert.equal(location, `file:${file}`);
  assert.equal((await locations.stat(location)).size, 12);
  assert.equal((await locations.read(location, 7, 100)).toString(), 'world');
  assert.equal((await locations.readAll(location, 100)).toString(), 'hello, world');
  await assert.rejects(locations.readAll(location, 5), TooLarge);

  await fs.rename(dir, `${dir}-away`);
  await assert.rejects(locations.read(location, 0, 5), (error: unknown) => {
    assert.ok(error instanceof LocationUnreachable);
    assert.match(error.why, /ENOENT/);
    return true;
  });
  await assert.rejects(locations.stat(fileLocation(`${dir}-away`)), /not a regular file/);
  await fs.rm(`${dir}-away`, { recursive: true });
});

test('a location is checked: scheme known, file paths absolute and normalized', async () => {
  const locations = memexLocations();
  for (const bad of ['photos/a.jpg', 'file:photos/a.jpg', 'file:/a/../etc/passwd', 'worker:nas:/a.jpg']) {
    assert.throws(() => locations.check(bad), InvalidLocation, bad);
  }
  // Another scheme registers itself and is read through the same calls.
  const worker: SchemeReader = {
    stat: async () => ({ size: 3, modifiedAt: new Date(0) }),
    read: async (rest, offset, length) => Buffer.from(rest).subarray(offset, offset + length),
  };
  locations.register('worker', worker);
  assert.equal((await locations.read('worker:nas:/abc', 4, 2)).toString(), '/a');
});

test('isWithin: a folder prefix ends with /, anything else names one location', () => {
  assert.ok(isWithin('file:/photos/a.jpg', 'file:/photos/'));
  assert.ok(!isWithin('file:/photos2/a.jpg', 'file:/photos/'));
  assert.ok(isWithin('file:/photos/a.jpg', 'file:/photos/a.jpg'));
  assert.ok(!isWithin('file:/photos/a.jpg', 'file:/photos'));
});
