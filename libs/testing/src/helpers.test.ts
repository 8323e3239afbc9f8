import { test } from 'node:test';
import assert from 'node:assert/strict';
import { seededRandom } from './random.js';
import { waitUntil } from './wait.js';
import { sharedFile, sharedSkip } from './shared.js';
import fs from 'node:fs';

test('a seed gives the same stream in [0, 1) every time; another seed another stream', () => {
  const first = Array.from({ length: 1000 }, seededRandom(7));
  assert.deepEqual(Array.from({ length: 1000 }, seededRandom(7)), first);
  assert.notDeepEqual(Array.from({ length: 1000 }, seededRandom(8)), first);
  assert.ok(first.every((x) => x >= 0 && x < 1));
  const mean = first.reduce((a, b) => a + b, 0) / first.length;
  assert.ok(Math.abs(mean - 0.5) < 0.05, `mean ${mean}`);
});

test('waitUntil resolves once the condition holds, and names what it waited for when it never does', async () => {
  let calls = 0;
  await waitUntil(async () => ++calls === 3, 'the third call', { everyMs: 1 });
  assert.equal(calls, 3);
  await assert.rejects(
    waitUntil(async () => false, 'the kettle to boil', { timeoutMs: 30, everyMs: 5 }),
    /timed out after 0.03 s waiting for the kettle to boil/,
  );
});

test(
  'sharedFile finds the shared corpus beside the checkout, and sharedSkip says why a test cannot run without it',
  { skip: sharedSkip('corpus') },
  () => {
    const corpus = sharedFile('corpus');
    assert.ok(fs.statSync(corpus).isDirectory());
    assert.equal(sharedSkip('corpus'), false);
    assert.match(String(sharedSkip('no/such/file')), /^needs .*no\/such\/file .*absent$/);
    assert.throws(() => sharedFile('no/such/file'), /absent/);
  },
);
