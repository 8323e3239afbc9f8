import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DEFAULT_ENGINE_CONFIG, resolveEngineConfig } from './config.js';

describe('resolveEngineConfig', () => {
  it('defaults to the spec’s values', () => {
    const { hiddenArc } = resolveEngineConfig();
    assert.deepEqual([hiddenArc.minSize, hiddenArc.maxSize, hiddenArc.minSpanDays], [4, 12, 180]);
    assert.deepEqual(resolveEngineConfig(), DEFAULT_ENGINE_CONFIG);
  });

  it('overlays partial sections', () => {
    const cfg = resolveEngineConfig({ hiddenArc: { minSpanDays: 365 }, knn: { k: 6 } });
    assert.equal(cfg.hiddenArc.minSpanDays, 365);
    assert.equal(cfg.hiddenArc.maxSize, 12);
    assert.equal(cfg.knn.k, 6);
    assert.equal(cfg.knn.trees, DEFAULT_ENGINE_CONFIG.knn.trees);
  });

  it('names the offending field', () => {
    assert.throws(() => resolveEngineConfig({ knn: { k: 0 } }), /knn\.k must be an integer ≥ 1, got 0/);
    assert.throws(
      () => resolveEngineConfig({ hiddenArc: { minSize: 6, maxSize: 5 } }),
      /hiddenArc\.maxSize must be an integer ≥ 6, got 5/,
    );
    assert.throws(
      () => resolveEngineConfig({ hiddenArc: { maxLinkDensity: 2 } }),
      /hiddenArc\.maxLinkDensity must be in \[0, 1\]/,
    );
    assert.throws(() => resolveEngineConfig({ knn: { trees: 1 } }), /knn\.trees must be an integer ≥ 2/);
    assert.throws(() => resolveEngineConfig({ tagBurst: { minDormantDays: Number.NaN } }), /tagBurst\.minDormantDays/);
  });
});
