import { test } from 'node:test';
import assert from 'node:assert/strict';
import { READ_EVERY_MS, readAgainIn } from './lag-gate.js';

test('the lags are read every second while the slowest could pass the limit soon, else up to every five', () => {
  const limit = 50_000;
  assert.equal(
    readAgainIn(undefined, { at: 0, slowest: 0 }, limit),
    READ_EVERY_MS.least,
    'the first reading: no rate yet',
  );
  assert.equal(
    readAgainIn({ at: 0, slowest: 1_000 }, { at: 1_000, slowest: 1_200 }, limit),
    READ_EVERY_MS.most,
    'rising by 200 a second, 48,800 below the limit',
  );
  assert.equal(
    readAgainIn({ at: 0, slowest: 40_000 }, { at: 1_000, slowest: 45_000 }, limit),
    READ_EVERY_MS.least,
    'rising by 5,000 a second, one second below it',
  );
  assert.equal(
    readAgainIn({ at: 0, slowest: 30_000 }, { at: 1_000, slowest: 34_000 }, limit),
    2_000,
    'rising by 4,000 a second, four seconds below it: again in two',
  );
  assert.equal(
    readAgainIn({ at: 0, slowest: 9_000 }, { at: 5_000, slowest: 8_000 }, limit),
    READ_EVERY_MS.most,
    'falling',
  );
  assert.equal(
    readAgainIn({ at: 0, slowest: 70_000 }, { at: 1_000, slowest: 60_000 }, limit),
    READ_EVERY_MS.least,
    'past the limit, even falling: imports wait on the next reading',
  );
});
