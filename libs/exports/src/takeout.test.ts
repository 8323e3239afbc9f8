import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { readSidecars } from './takeout.js';

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
