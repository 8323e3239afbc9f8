import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { benchDetection } from './bench.js';

// Shape only: timings are for `npm run bench`, never asserted.
describe('benchDetection', () => {
  it('runs detection, then skips it on the unchanged corpus', () => {
    const result = benchDetection(2500, { dim: 32, config: { knn: { exactBelow: 1000 } } });
    assert.equal(result.n, 2500);
    assert.equal(result.knn, 'approximate');
    assert.equal(result.secondRunSkipped, true);
    assert.ok(result.firstRunMs >= 0 && result.secondRunMs >= 0);
    assert.ok(result.signals.dangling_link > 0 && result.signals.tag_burst > 0 && result.signals.stale_state > 0);
  });
});
