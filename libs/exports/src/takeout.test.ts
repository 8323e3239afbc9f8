import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { readSidecars } from './takeout.js';
import { listTakeout } from './takeout-export.js';

test('Takeout sidecars are found under each name Takeout gives them and read as photo attributes', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'takeout-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const sidecar = (name: string, body: unknown) => fs.writeFileSync(path.join(dir, name), JSON.stringify(body));
  sidecar('IMG_0001.jpg.json', {
    title: 'IMG_0001.jpg',
    description: 'Eiffel tower at night',
    photoTakenTime: { timestamp: '1562265000' },
    geoData: { latitude: 48.8584, longitude: 2.2945, altitude: 35 },
  });
  sidecar('PXL_20230101_101010123.jpg.supplemental-metad.json', {
    photoTakenTime: { timestamp: '1672567810' },
    geoData: { latitude: 0, longitude: 0, altitude: 0 },
    geoDataExif: { latitude: 51.5, longitude: -0.12, altitude: 0 },
  });
  sidecar('IMG_0002.jpg(1).json', { photoTakenTime: { timestamp: '1600000000' } });
  fs.writeFileSync(path.join(dir, 'IMG_0003.jpg.json'), 'not json');
  const warnings: string[] = [];
  const found = await readSidecars(
    dir,
    [
      'IMG_0001.jpg',
      'IMG_0001-edited.jpg',
      'PXL_20230101_101010123.jpg',
      'IMG_0002(1).jpg',
      'IMG_0003.jpg',
      'IMG_0004.jpg',
    ],
    (m) => warnings.push(m),
  );
  assert.deepEqual(found.get('IMG_0001.jpg')?.attributes, {
    title: 'IMG_0001.jpg',
    description: 'Eiffel tower at night',
    taken_at: '2019-07-04T18:30:00.000Z',
    latitude: 48.8584,
    longitude: 2.2945,
    altitude: 35,
  });
  assert.deepEqual(
    found.get('IMG_0001-edited.jpg'),
    found.get('IMG_0001.jpg'),
    'an edited copy shares its original’s sidecar',
  );
  // 0,0 means "no place": the EXIF position Takeout kept is used instead.
  assert.deepEqual(found.get('PXL_20230101_101010123.jpg')?.attributes, {
    taken_at: '2023-01-01T10:10:10.000Z',
    latitude: 51.5,
    longitude: -0.12,
    altitude: 0,
  });
  assert.equal(found.get('IMG_0002(1).jpg')?.attributes.taken_at, '2020-09-13T12:26:40.000Z');
  assert.equal(found.has('IMG_0003.jpg'), false);
  assert.equal(found.has('IMG_0004.jpg'), false);
  assert.match(warnings.join('\n'), /IMG_0003\.jpg\.json: not a Takeout sidecar/);
});

test("Google Keep's notes in a Takeout: each note's page with its labels and the time it was edited; trashed notes, the details and the labels list skipped with why", async (t) => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'takeout-keep-'));
  t.after(() => fs.rmSync(root, { recursive: true, force: true }));
  const keep = path.join(root, 'Takeout', 'Keep');
  fs.mkdirSync(keep, { recursive: true });
  const note = (name: string, details: unknown) => {
    fs.writeFileSync(
      path.join(keep, `${name}.html`),
      `<html><head><title>${name}</title></head><body>${name}</body></html>`,
    );
    fs.writeFileSync(path.join(keep, `${name}.json`), JSON.stringify(details));
  };
  note('Groceries', {
    title: 'Groceries',
    isTrashed: false,
    listContent: [{ text: 'milk', isChecked: false }],
    labels: [{ name: 'Home' }, { name: 'Weekly shop' }],
    createdTimestampUsec: 1617184000000000,
    userEditedTimestampUsec: 1617184112345000,
  });
  note('Old idea', { title: 'Old idea', isTrashed: true, userEditedTimestampUsec: 1500000000000000 });
  fs.writeFileSync(path.join(keep, 'Loose page.html'), '<html><body>no details beside it</body></html>');
  fs.writeFileSync(path.join(keep, 'Labels.txt'), 'Home\nWeekly shop\n');
  const warnings: string[] = [];
  const listing = await listTakeout(root, new Set(['text/html', 'text/plain']), (m) => warnings.push(m));
  assert.deepEqual(warnings, []);
  assert.deepEqual(
    listing.documents.map((d) => [d.key, d.labels, d.modified]),
    [
      ['Keep/Groceries.html', ['keep:Home', 'keep:Weekly-shop'], '2021-03-31T09:48:32.345Z'],
      ['Keep/Loose page.html', [], fs.statSync(path.join(keep, 'Loose page.html')).mtime.toISOString()],
    ],
  );
  assert.deepEqual(Object.fromEntries(listing.skipped.map(({ key, reason }) => [key, reason])), {
    'Keep/Groceries.json': "a Google Keep note's details (time, labels), read with its note",
    'Keep/Old idea.json': "a Google Keep note's details (time, labels), read with its note",
    'Keep/Old idea.html': "a note in Google Keep's trash",
    'Keep/Labels.txt': "Google Keep's list of labels (each note carries its own)",
  });
});
