import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { approximateKnn, bruteForceKnn, buildKnn, DEFAULT_KNN_OPTIONS, dotRows, type KnnGraph } from './knn.js';
import { Prng } from './random.js';
import { around, randomUnitVector } from './synthetic.js';

/** n unit vectors around `clusters` random centres: the shape of real note embeddings. */
function clustered(n: number, dim: number, clusters: number, seed: number): Float32Array {
  const rng = new Prng(seed);
  const centres = Array.from({ length: clusters }, () => randomUnitVector(rng, dim));
  const v = new Float32Array(n * dim);
  for (let i = 0; i < n; i++) v.set(around(rng, centres[rng.int(clusters)]!, 0.9), i * dim);
  return v;
}

function row(g: KnnGraph, i: number): number[] {
  return [...g.indices.subarray(i * g.k, (i + 1) * g.k)];
}

function recall(approx: KnnGraph, exact: KnnGraph): number {
  let hits = 0;
  for (let i = 0; i < exact.n; i++) {
    const truth = new Set(row(exact, i));
    hits += row(approx, i).filter((j) => truth.has(j)).length;
  }
  return hits / (exact.n * exact.k);
}

describe('bruteForceKnn', () => {
  it('lists each point’s k most similar others, most similar first, never itself', () => {
    const dim = 8;
    const v = clustered(60, dim, 3, 1);
    const g = bruteForceKnn(v, 60, dim, 4);
    for (let i = 0; i < 60; i++) {
      const expected = Array.from({ length: 60 }, (_, j) => j)
        .filter((j) => j !== i)
        .sort((a, b) => dotRows(v, i, b, dim) - dotRows(v, i, a, dim) || a - b)
        .slice(0, 4);
      assert.deepEqual(row(g, i), expected, `row ${i}`);
      const sims = [...g.similarities.subarray(i * 4, i * 4 + 4)];
      assert.deepEqual(
        sims,
        [...sims].sort((a, b) => b - a),
      );
    }
  });

  it('pads with −1 when there are fewer than k other points', () => {
    const v = clustered(3, 4, 1, 2);
    const g = bruteForceKnn(v, 3, 4, 5);
    assert.deepEqual(row(g, 0).slice(2), [-1, -1, -1]);
    assert.equal(row(g, 0).filter((j) => j >= 0).length, 2);
  });

  it('breaks similarity ties by index', () => {
    // Four identical vectors: every neighbour is equally similar.
    const v = new Float32Array([1, 0, 1, 0, 1, 0, 1, 0]);
    const g = bruteForceKnn(v, 4, 2, 2);
    assert.deepEqual(row(g, 0), [1, 2]);
    assert.deepEqual(row(g, 3), [0, 1]);
  });

  it('rejects a buffer that does not hold n×dim floats, and k < 1', () => {
    assert.throws(() => bruteForceKnn(new Float32Array(10), 3, 4, 2), /expected 3×4=12 floats, got 10/);
    assert.throws(() => bruteForceKnn(new Float32Array(12), 3, 4, 0), /k must be a positive integer/);
  });
});

describe('approximateKnn', () => {
  const n = 3000;
  const dim = 64;
  const v = clustered(n, dim, 75, 3);
  const exact = bruteForceKnn(v, n, dim, 10);

  it('recalls at least 90% of the exact 10 nearest neighbours on 3,000 clustered vectors', () => {
    const approx = approximateKnn(v, n, dim, { ...DEFAULT_KNN_OPTIONS, k: 10 });
    const r = recall(approx, exact);
    assert.ok(r >= 0.9, `recall ${r.toFixed(4)}`);
  });

  it('keeps recall ≥ 0.9 at k = 5 too', () => {
    const exact5 = bruteForceKnn(v, n, dim, 5);
    const r = recall(approximateKnn(v, n, dim, { ...DEFAULT_KNN_OPTIONS, k: 5 }), exact5);
    assert.ok(r >= 0.9, `recall ${r.toFixed(4)}`);
  });

  it('is deterministic for a seed, and the seed matters', () => {
    const options = { ...DEFAULT_KNN_OPTIONS, k: 10 };
    const a = approximateKnn(v, n, dim, options);
    const b = approximateKnn(v, n, dim, options);
    assert.deepEqual(a.indices, b.indices);
    assert.deepEqual(a.similarities, b.similarities);
    // Without refinement the forest alone decides, so another seed shows.
    const rough = { ...options, trees: 2, maxIterations: 0 };
    const c = approximateKnn(v, n, dim, rough);
    const d = approximateKnn(v, n, dim, { ...rough, seed: 7 });
    assert.notDeepEqual(c.indices, d.indices);
  });

  it('NN-descent refines the forest’s first guess', () => {
    const forestOnly = approximateKnn(v, n, dim, { ...DEFAULT_KNN_OPTIONS, k: 10, trees: 2, maxIterations: 0 });
    const refined = approximateKnn(v, n, dim, { ...DEFAULT_KNN_OPTIONS, k: 10, trees: 2 });
    assert.ok(recall(refined, exact) > recall(forestOnly, exact) + 0.5);
  });

  it('copes with duplicate vectors (degenerate splits)', () => {
    const dup = new Float32Array(500 * 4);
    for (let i = 0; i < 500; i++) dup.set([0.5, 0.5, 0.5, 0.5], i * 4);
    const g = approximateKnn(dup, 500, 4, { ...DEFAULT_KNN_OPTIONS, k: 3 });
    for (let i = 0; i < 500; i++) assert.ok(row(g, i).every((j) => j >= 0 && j !== i));
  });
});

describe('buildKnn', () => {
  it('is exact up to exactBelow points', () => {
    const v = clustered(300, 16, 10, 4);
    const exact = bruteForceKnn(v, 300, 16, 5);
    assert.deepEqual(buildKnn(v, 300, 16, { ...DEFAULT_KNN_OPTIONS, k: 5, exactBelow: 300 }).indices, exact.indices);
    const rough = { ...DEFAULT_KNN_OPTIONS, k: 5, exactBelow: 299, trees: 2, maxIterations: 0 };
    assert.notDeepEqual(buildKnn(v, 300, 16, rough).indices, exact.indices);
  });
});
