import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { findBridgingHubs } from './hubs.js';
import { UnionFind } from './union-find.js';

describe('UnionFind', () => {
  it('joins sets and lists components by smallest member', () => {
    const uf = new UnionFind(7);
    assert.equal(uf.union(5, 6), true);
    assert.equal(uf.union(0, 3), true);
    assert.equal(uf.union(3, 0), false);
    uf.union(6, 2);
    assert.equal(uf.find(2), uf.find(5));
    assert.notEqual(uf.find(0), uf.find(2));
    assert.deepEqual(uf.components(), [[0, 3], [1], [2, 5, 6], [4]]);
    assert.deepEqual(uf.components(2), [
      [0, 3],
      [2, 5, 6],
    ]);
  });

  it('handles a 200,000-long chain without recursion and flattens paths', () => {
    const n = 200_000;
    const uf = new UnionFind(n);
    for (let i = 1; i < n; i++) uf.union(i - 1, i);
    const root = uf.find(n - 1);
    for (let i = 0; i < n; i += 997) assert.equal(uf.find(i), root);
    assert.equal(uf.components().length, 1);
  });
});

describe('findBridgingHubs', () => {
  /** Two 4-cliques (0–3 and 5–8) joined only through vertex 4. */
  const clique = (vs: number[]): [number, number][] =>
    vs.flatMap((a, i) => vs.slice(i + 1).map((b) => [a, b] as [number, number]));
  const edges = [...clique([0, 1, 2, 3]), ...clique([5, 6, 7, 8]), [4, 0], [4, 1], [4, 7]] as [number, number][];
  const hubsOf = (es: [number, number][], n: number, minPiece: number): number[] => {
    const flags = findBridgingHubs(
      n,
      Int32Array.from(es, (e) => e[0]),
      Int32Array.from(es, (e) => e[1]),
      minPiece,
    );
    return [...flags.keys()].filter((v) => flags[v] === 1);
  };

  it('flags a vertex whose removal leaves two pieces of at least minPiece', () => {
    assert.deepEqual(hubsOf(edges, 9, 4), [4]);
  });

  it('ignores cut vertices that only shave off small pieces', () => {
    // Vertex 0 is a cut vertex for the tail 9–10, but that piece is below minPiece.
    assert.deepEqual(hubsOf([...edges, [0, 9], [9, 10]], 11, 4), [4]);
    assert.deepEqual(hubsOf(edges, 9, 5), []);
  });

  it('does not flag anything when the groups are also joined directly', () => {
    assert.deepEqual(hubsOf([...edges, [3, 5]], 9, 4), []);
  });
});
