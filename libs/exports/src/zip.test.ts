import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildTakeout, damageZipMember, zipOf, zipTakeout } from './testing/index.js';
import { files } from './files.js';
import { readMbox } from './mbox.js';
import { listTakeout, openTakeout, type TakeoutListing } from './takeout-export.js';

const ACCEPTED = new Set(['image/jpeg', 'text/html', 'text/plain']);

function scratch(t: { after(fn: () => void): void }): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'takeout-zip-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** A listing as its files' places and contents say, without where it was read from (a folder, or zips). */
async function contents(listing: TakeoutListing) {
  const of = async (file: { key: string; file: string; type: string; size: number }) => ({
    key: file.key,
    type: file.type,
    size: file.size,
    sha: (await files.readFile(file.file)).toString('base64').slice(0, 80),
  });
  const messages = [];
  for (const mbox of listing.mboxes)
    for await (const message of readMbox(mbox.file)) messages.push([mbox.key, message.offset, message.bytes.length]);
  return {
    messages,
    photos: await Promise.all(
      listing.photos.map(async (photo) => ({
        ...(await of(photo)),
        attributes: photo.attributes,
        labels: photo.labels,
      })),
    ),
    documents: await Promise.all(listing.documents.map(of)),
    skipped: listing.skipped,
  };
}

test("a Takeout's zip parts are read as the folder they unpack to, a photo's sidecar and album file from another part than it", async (t) => {
  const dir = scratch(t);
  const unpacked = path.join(dir, 'unpacked');
  await buildTakeout(unpacked, 'first');
  // Photos and the mbox in the first part; sidecars and the album's metadata.json in the second.
  const parts = await zipTakeout(unpacked, path.join(dir, 'downloads'), 'takeout-20241201T101010Z', 2, (key) =>
    key.endsWith('.json') ? 1 : 0,
  );
  const warnings: string[] = [];
  const warn = (message: string) => warnings.push(message);
  const folder = await contents(await listTakeout(unpacked, ACCEPTED, warn));

  // One part names the export: its other parts beside it come along.
  const opened = await openTakeout([parts[0]!]);
  try {
    assert.deepEqual(opened.parts, parts);
    assert.deepEqual(opened.skipped, []);
    const zipped = await contents(await listTakeout(opened.root, ACCEPTED, warn));
    assert.deepEqual(zipped, folder, 'the same keys, types, bytes, sidecar attributes and album labels');
  } finally {
    opened.close();
  }
  assert.deepEqual(warnings, []);
  const reasons = new Map(folder.skipped.map(({ key, reason }) => [key, reason]));
  assert.match(reasons.get('Google Photos/Rome 2019/IMG_0002.jpg.json')!, /a sidecar .* read with its photo/);
  assert.match(reasons.get('Google Photos/Rome 2019/metadata.json')!, /its title labels the album's photos/);
  assert.equal(folder.messages.length, 5);
  assert.equal(folder.photos.length, 2);
  assert.deepEqual(folder.photos.find((p) => p.key.endsWith('IMG_0002.jpg'))?.labels, ['album:Rome-2019']);
  assert.ok(
    folder.photos.every((photo) => !photo.key.startsWith('Takeout/')),
    'keys are from the Takeout folder, whichever folder was named',
  );

  // A folder holding only the export's zips is read as them.
  const fromFolder = await openTakeout([path.join(dir, 'downloads')]);
  try {
    assert.deepEqual(fromFolder.parts, parts);
  } finally {
    fromFolder.close();
  }
  // Once closed, the parts' paths are nothing.
  await assert.rejects(files.readFile(`${parts[0]}/Takeout/archive_browser.html`), { code: 'ENOTDIR' });
});

test('zip members no reader can open are accounted for, a damaged one names its part, a damaged part or a .tgz is refused', async (t) => {
  const dir = scratch(t);
  const first = await zipOf(path.join(dir, 'takeout-x-001.zip'), {
    'Takeout/Drive/notes.txt': 'meeting notes '.repeat(2000),
    'Takeout/Drive/odd.txt': 'compressed in a way nobody reads '.repeat(100),
    'Takeout/Drive/twice.txt': 'first copy',
  });
  await zipOf(path.join(dir, 'takeout-x-002.zip'), { 'Takeout/Drive/twice.txt': 'second copy' });
  damageZipMember(first, 'Takeout/Drive/odd.txt', { method: 99 }); // AES, which yauzl does not read
  damageZipMember(first, 'Takeout/Drive/notes.txt', { garble: true });

  const opened = await openTakeout([first]);
  try {
    assert.deepEqual(opened.skipped, [
      {
        key: 'Drive/odd.txt',
        reason: 'compressed in takeout-x-001.zip with a method memex cannot read (99): unpack it',
      },
      { key: 'Drive/twice.txt', reason: 'in takeout-x-002.zip again (read from takeout-x-001.zip)' },
    ]);
    const listing = await listTakeout(opened.root, ACCEPTED, () => undefined);
    assert.deepEqual(
      listing.documents.map((d) => d.key),
      ['Drive/notes.txt', 'Drive/twice.txt'],
    );
    assert.equal((await files.readFile(`${opened.root}/Takeout/Drive/twice.txt`)).toString(), 'first copy');
    await assert.rejects(
      files.readFile(`${opened.root}/Takeout/Drive/notes.txt`),
      /takeout-x-001\.zip\/Takeout\/Drive\/notes\.txt \(in takeout-x-001\.zip\) is damaged after \d+ bytes/,
    );
  } finally {
    opened.close();
  }

  // A part cut short (its central directory gone) is refused, naming it.
  const cut = path.join(dir, 'cut', 'takeout-y-001.zip');
  fs.mkdirSync(path.dirname(cut));
  const bytes = fs.readFileSync(first);
  fs.writeFileSync(cut, bytes.subarray(0, bytes.length - 200));
  await assert.rejects(openTakeout([cut]), /takeout-y-001\.zip: it cannot be read as a zip archive/);
  await assert.rejects(
    openTakeout([path.join(dir, 'takeout-20241201T101010Z-001.tgz')]),
    /cannot be read packed .*unpack it \(tar xzf\) and import the folder, or export as \.zip/,
  );
});
