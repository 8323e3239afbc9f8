import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
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

test('zip members no reader can open are accounted for, a damaged one names its part, a damaged part is refused', async (t) => {
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
});

/** `tar` as GNU tar (every Debian has it) writes Takeout's .tgz parts. */
const tar = (cwd: string, ...args: string[]) => {
  const run = spawnSync('tar', args, { cwd, encoding: 'utf8' });
  assert.equal(run.status, 0, run.stderr);
};

test("a Takeout's .tgz parts are unpacked beside them and read as the folder, then removed; a photo's sidecar from another part than it", async (t) => {
  const dir = scratch(t);
  const unpacked = path.join(dir, 'unpacked');
  await buildTakeout(unpacked, 'first');
  const warn = () => undefined;
  const folder = await contents(await listTakeout(unpacked, ACCEPTED, warn));
  // The sidecars in the second part, everything else in the first; a long path (past ustar's 100 bytes) too.
  const downloads = path.join(dir, 'downloads');
  fs.mkdirSync(downloads);
  const keys = spawnSync('find', ['Takeout', '-type', 'f'], { cwd: unpacked, encoding: 'utf8' })
    .stdout.trim()
    .split('\n');
  const sidecars = keys.filter((key) => key.endsWith('.json'));
  const first = path.join(downloads, 'takeout-20241201T101010Z-001.tgz');
  tar(unpacked, '--format=gnu', '-czf', first, ...keys.filter((key) => !sidecars.includes(key)));
  tar(unpacked, '--format=pax', '-czf', path.join(downloads, 'takeout-20241201T101010Z-002.tgz'), ...sidecars);

  const opened = await openTakeout([first]);
  try {
    assert.deepEqual(
      opened.parts.map((part) => path.basename(part)),
      ['takeout-20241201T101010Z-001.tgz', 'takeout-20241201T101010Z-002.tgz'],
    );
    assert.deepEqual(opened.skipped, []);
    assert.equal(path.dirname(opened.root), downloads);
    assert.deepEqual(
      await contents(await listTakeout(opened.root, ACCEPTED, warn)),
      folder,
      'as the folder it was made of',
    );
  } finally {
    opened.close();
  }
  assert.deepEqual(
    fs.readdirSync(downloads).sort(),
    ['takeout-20241201T101010Z-001.tgz', 'takeout-20241201T101010Z-002.tgz'],
    'what was unpacked is gone',
  );
});

test('a .tgz unpacks no link and nothing outside its folder; one cut short is refused, naming it', async (t) => {
  const dir = scratch(t);
  const source = path.join(dir, 'source');
  fs.mkdirSync(path.join(source, 'Takeout/Drive/Notes with a rather long name that goes on and on'), {
    recursive: true,
  });
  const long = 'Takeout/Drive/Notes with a rather long name that goes on and on/and a file name that is long too.txt';
  fs.writeFileSync(path.join(source, long), 'long path');
  fs.writeFileSync(path.join(source, 'Takeout/Drive/plan.txt'), 'the plan');
  fs.writeFileSync(path.join(source, 'Takeout/Drive/plan-copy.txt'), 'the plan, again');
  fs.symlinkSync('/etc/passwd', path.join(source, 'Takeout/Drive/passwd'));
  fs.writeFileSync(path.join(dir, 'outside.txt'), 'written by the archive?');
  const archive = path.join(dir, 'takeout-x.tgz');
  // GNU tar keeps `../outside.txt` as named (-P); a hostile or broken archive can hold such a path.
  // And a file name longer than a Linux file system holds (255 bytes), as another system may write.
  const tooLong = `Takeout/Drive/${'n'.repeat(300)}.txt`;
  tar(
    source,
    '-P',
    '-czf',
    archive,
    '--transform',
    `s,^Takeout/Drive/plan-copy.txt$,${tooLong},`,
    'Takeout',
    '../outside.txt',
  );
  fs.rmSync(path.join(dir, 'outside.txt'));

  const opened = await openTakeout([archive]);
  try {
    assert.deepEqual(
      [...opened.skipped].sort((a, b) => a.key.localeCompare(b.key)),
      [
        {
          key: tooLong.replace(/^Takeout\//, ''),
          reason: 'a name this disk cannot hold (ENAMETOOLONG): not unpacked (in takeout-x.tgz)',
        },
        { key: 'Drive/passwd', reason: 'a link in the archive: not unpacked (in takeout-x.tgz)' },
        { key: '../outside.txt', reason: 'a path out of the archive: not unpacked (in takeout-x.tgz)' },
      ].sort((a, b) => a.key.localeCompare(b.key)),
    );
    assert.equal(fs.readFileSync(path.join(opened.root, long), 'utf8'), 'long path');
    assert.equal(fs.readFileSync(path.join(opened.root, 'Takeout/Drive/plan.txt'), 'utf8'), 'the plan');
    assert.equal(fs.existsSync(path.join(dir, 'outside.txt')), false, 'nothing written outside');
  } finally {
    opened.close();
  }

  const cut = path.join(dir, 'cut', 'takeout-y.tgz');
  fs.mkdirSync(path.dirname(cut));
  const plain = path.join(dir, 'big.tar');
  fs.writeFileSync(path.join(source, 'Takeout/Drive/big.bin'), Buffer.alloc(300_000, 7));
  tar(source, '-cf', plain, 'Takeout/Drive/big.bin');
  fs.writeFileSync(cut, gzipSync(fs.readFileSync(plain).subarray(0, 100_000)));
  await assert.rejects(openTakeout([cut]), /takeout-y\.tgz: it is cut short: download it again/);
  assert.deepEqual(fs.readdirSync(path.dirname(cut)), ['takeout-y.tgz'], 'nothing left unpacked');
  // A download cut short: the gzip stream ends early.
  const whole = gzipSync(fs.readFileSync(plain));
  fs.writeFileSync(cut, whole.subarray(0, whole.length - 20));
  await assert.rejects(openTakeout([cut]), /takeout-y\.tgz: it is cut short or damaged \(.+\): download it again/);
});
