import { Prng } from './random.js';

/**
 * k-nearest-neighbour graphs over L2-normalised vectors (cosine similarity =
 * dot product), packed row-major in one Float32Array (`n` rows of `dim`).
 *
 * Exact search is O(N²·d). For large corpora we build an approximate graph in
 * about O(N·k·d) per refinement round: a random-projection forest gives every
 * point a first neighbour list (points that share a leaf), then NN-descent
 * refines it ("a neighbour of my neighbour is probably my neighbour"). All
 * randomness comes from a seeded PRNG and ties are broken by index, so the
 * same input always yields the same graph.
 */
export interface KnnGraph {
  readonly n: number;
  readonly k: number;
  /** Row i (entries i·k … i·k+k−1): neighbours of point i, most similar first; −1 pads when n ≤ k. */
  readonly indices: Int32Array;
  readonly similarities: Float32Array;
}

export interface KnnOptions {
  k: number;
  seed: number;
  /** Corpora with at most this many points are searched exactly (brute force). */
  exactBelow: number;
  /**
   * Neighbour-list length used while searching, truncated to k at the end.
   * NN-descent with very short lists gets stuck in local optima; 10 lifts
   * recall at k=5 from about 0.95 to 0.99 on clustered data.
   */
  searchListSize: number;
  /**
   * Random-projection trees used to seed NN-descent; at least 2: from a single
   * tree every list stays inside its leaf and NN-descent cannot leave it.
   */
  trees: number;
  /** Maximum points in a tree leaf; all pairs inside a leaf are compared. */
  leafSize: number;
  /** NN-descent rounds at most. */
  maxIterations: number;
  /** Candidates sampled per point per round (forward + reverse neighbours). */
  maxCandidates: number;
  /** Stop when a round changes fewer than delta·n·k list entries. */
  earlyStopDelta: number;
}

export const DEFAULT_KNN_OPTIONS: Omit<KnnOptions, 'k'> = {
  seed: 42,
  exactBelow: 2000,
  searchListSize: 10,
  trees: 12,
  leafSize: 24,
  maxIterations: 12,
  maxCandidates: 8,
  earlyStopDelta: 0.001,
};

export function dotRows(v: Float32Array, a: number, b: number, dim: number): number {
  let i = a * dim;
  let j = b * dim;
  const end = i + dim - (dim & 3);
  let s0 = 0;
  let s1 = 0;
  let s2 = 0;
  let s3 = 0;
  for (; i < end; i += 4, j += 4) {
    s0 += v[i]! * v[j]!;
    s1 += v[i + 1]! * v[j + 1]!;
    s2 += v[i + 2]! * v[j + 2]!;
    s3 += v[i + 3]! * v[j + 3]!;
  }
  for (const stop = a * dim + dim; i < stop; i++, j++) s0 += v[i]! * v[j]!;
  return s0 + s1 + s2 + s3;
}

/** Fixed-size neighbour lists kept sorted (similarity desc, then index asc). */
class NeighbourLists {
  readonly indices: Int32Array;
  readonly similarities: Float32Array;
  /** 1 when the entry arrived since NN-descent last sampled it. */
  readonly fresh: Uint8Array;

  constructor(
    readonly n: number,
    readonly k: number,
  ) {
    this.indices = new Int32Array(n * k).fill(-1);
    this.similarities = new Float32Array(n * k).fill(-Infinity);
    this.fresh = new Uint8Array(n * k);
  }

  /** Offers j as a neighbour of i; returns true when the list changed. */
  push(i: number, j: number, sim: number): boolean {
    const k = this.k;
    const base = i * k;
    const idx = this.indices;
    const sims = this.similarities;
    // Compare in float32, as stored, so that equal similarities tie-break by index.
    const s = Math.fround(sim);
    const worst = base + k - 1;
    if (s < sims[worst]! || (s === sims[worst]! && idx[worst]! !== -1 && j > idx[worst]!)) return false;
    for (let p = base; p < base + k; p++) if (idx[p] === j) return false;
    let p = worst;
    while (p > base && (sims[p - 1]! < s || (sims[p - 1]! === s && (idx[p - 1]! === -1 || idx[p - 1]! > j)))) {
      idx[p] = idx[p - 1]!;
      sims[p] = sims[p - 1]!;
      this.fresh[p] = this.fresh[p - 1]!;
      p--;
    }
    idx[p] = j;
    sims[p] = s;
    this.fresh[p] = 1;
    return true;
  }

  toGraph(): KnnGraph {
    return { n: this.n, k: this.k, indices: this.indices, similarities: this.similarities };
  }
}

function checkShape(vectors: Float32Array, n: number, dim: number, k: number): void {
  if (!Number.isInteger(k) || k < 1) throw new Error(`kNN: k must be a positive integer, got ${k}`);
  if (vectors.length !== n * dim) {
    throw new Error(`kNN: expected ${n}×${dim}=${n * dim} floats, got ${vectors.length}`);
  }
}

/** Exact kNN by comparing every pair: O(N²·d). The reference for recall tests and small corpora. */
export function bruteForceKnn(vectors: Float32Array, n: number, dim: number, k: number): KnnGraph {
  checkShape(vectors, n, dim, k);
  const lists = new NeighbourLists(n, k);
  for (let a = 0; a < n; a++) {
    for (let b = a + 1; b < n; b++) {
      const s = dotRows(vectors, a, b, dim);
      lists.push(a, b, s);
      lists.push(b, a, s);
    }
  }
  return lists.toGraph();
}

/** Exact below `exactBelow` points, approximate (RP forest + NN-descent) above. */
export function buildKnn(vectors: Float32Array, n: number, dim: number, options: KnnOptions): KnnGraph {
  return n <= options.exactBelow ? bruteForceKnn(vectors, n, dim, options.k) : approximateKnn(vectors, n, dim, options);
}

export function approximateKnn(vectors: Float32Array, n: number, dim: number, options: KnnOptions): KnnGraph {
  const { k } = options;
  checkShape(vectors, n, dim, k);
  if (options.trees < 2) throw new Error(`kNN: approximate search needs at least 2 trees, got ${options.trees}`);
  const rng = new Prng(options.seed);
  const lists = new NeighbourLists(n, Math.max(k, options.searchListSize));
  const offerPair = (a: number, b: number): number => {
    const s = dotRows(vectors, a, b, dim);
    return (lists.push(a, b, s) ? 1 : 0) + (lists.push(b, a, s) ? 1 : 0);
  };
  for (let t = 0; t < options.trees; t++) {
    for (const leaf of rpTreeLeaves(vectors, n, dim, options.leafSize, rng)) {
      for (let x = 0; x < leaf.length; x++) {
        for (let y = x + 1; y < leaf.length; y++) offerPair(leaf[x]!, leaf[y]!);
      }
    }
  }
  nnDescent(lists, offerPair, rng, options);
  return truncate(lists.toGraph(), k);
}

function truncate(graph: KnnGraph, k: number): KnnGraph {
  if (graph.k === k) return graph;
  const indices = new Int32Array(graph.n * k);
  const similarities = new Float32Array(graph.n * k);
  for (let i = 0; i < graph.n; i++) {
    indices.set(graph.indices.subarray(i * graph.k, i * graph.k + k), i * k);
    similarities.set(graph.similarities.subarray(i * graph.k, i * graph.k + k), i * k);
  }
  return { n: graph.n, k, indices, similarities };
}

/**
 * One angular random-projection tree: each node splits its points by the
 * hyperplane equidistant from two of them picked at random (for unit vectors
 * that is sign(x·(p−q))), until at most `leafSize` remain.
 */
function rpTreeLeaves(vectors: Float32Array, n: number, dim: number, leafSize: number, rng: Prng): Int32Array[] {
  const leaves: Int32Array[] = [];
  const all = new Int32Array(n);
  for (let i = 0; i < n; i++) all[i] = i;
  const stack: Int32Array[] = [all];
  const normal = new Float32Array(dim);
  while (stack.length > 0) {
    const node = stack.pop()!;
    if (node.length <= leafSize) {
      leaves.push(node);
      continue;
    }
    const p = node[rng.int(node.length)]!;
    let q = node[rng.int(node.length)]!;
    if (q === p) q = node[(node.indexOf(p) + 1) % node.length]!;
    for (let c = 0; c < dim; c++) normal[c] = vectors[p * dim + c]! - vectors[q * dim + c]!;
    const side = new Uint8Array(node.length);
    let left = 0;
    for (let x = 0; x < node.length; x++) {
      const base = node[x]! * dim;
      let m = 0;
      for (let c = 0; c < dim; c++) m += normal[c]! * vectors[base + c]!;
      // Points on the hyperplane (e.g. duplicates) go to a random side.
      const goesLeft = m > 0 || (m === 0 && rng.next() < 0.5);
      side[x] = goesLeft ? 1 : 0;
      if (goesLeft) left++;
    }
    if (left === 0 || left === node.length) {
      // Degenerate split (all points identical along this direction): halve at random.
      for (let x = 0; x < node.length; x++) side[x] = 0;
      for (let chosen = 0; chosen < node.length >> 1;) {
        const x = rng.int(node.length);
        if (side[x] === 0) {
          side[x] = 1;
          chosen++;
        }
      }
      left = node.length >> 1;
    }
    const l = new Int32Array(left);
    const r = new Int32Array(node.length - left);
    for (let x = 0, li = 0, ri = 0; x < node.length; x++) {
      if (side[x] === 1) l[li++] = node[x]!;
      else r[ri++] = node[x]!;
    }
    stack.push(r, l);
  }
  return leaves;
}

/** Per-point candidate buffers that keep the `cap` entries of lowest random priority. */
class CandidateSample {
  readonly items: Int32Array;
  readonly priorities: Uint32Array;
  readonly counts: Int32Array;

  constructor(
    n: number,
    readonly cap: number,
  ) {
    this.items = new Int32Array(n * cap);
    this.priorities = new Uint32Array(n * cap);
    this.counts = new Int32Array(n);
  }

  clear(): void {
    this.counts.fill(0);
  }

  add(i: number, j: number, priority: number): void {
    const base = i * this.cap;
    const count = this.counts[i]!;
    for (let p = base; p < base + count; p++) if (this.items[p] === j) return;
    if (count < this.cap) {
      this.items[base + count] = j;
      this.priorities[base + count] = priority;
      this.counts[i] = count + 1;
      return;
    }
    let worst = base;
    for (let p = base + 1; p < base + count; p++) if (this.priorities[p]! > this.priorities[worst]!) worst = p;
    if (priority < this.priorities[worst]!) {
      this.items[worst] = j;
      this.priorities[worst] = priority;
    }
  }

  has(i: number, j: number): boolean {
    const base = i * this.cap;
    for (let p = base; p < base + this.counts[i]!; p++) if (this.items[p] === j) return true;
    return false;
  }
}

/** NN-descent (Dong et al. 2011) with sampled forward + reverse candidates, as in pynndescent. */
function nnDescent(
  lists: NeighbourLists,
  offerPair: (a: number, b: number) => number,
  rng: Prng,
  options: KnnOptions,
): void {
  const { n, k } = lists;
  const fresh = new CandidateSample(n, options.maxCandidates);
  const old = new CandidateSample(n, options.maxCandidates);
  for (let iteration = 0; iteration < options.maxIterations; iteration++) {
    fresh.clear();
    old.clear();
    for (let i = 0; i < n; i++) {
      for (let p = i * k; p < i * k + k; p++) {
        const j = lists.indices[p]!;
        if (j < 0) continue;
        const priority = rng.nextUint32();
        const sample = lists.fresh[p] === 1 ? fresh : old;
        sample.add(i, j, priority);
        sample.add(j, i, priority);
      }
    }
    // Entries sampled this round have had their chance: mark them old.
    for (let i = 0; i < n; i++) {
      for (let p = i * k; p < i * k + k; p++) {
        const j = lists.indices[p]!;
        if (j >= 0 && lists.fresh[p] === 1 && fresh.has(i, j)) lists.fresh[p] = 0;
      }
    }
    let updates = 0;
    for (let i = 0; i < n; i++) {
      const fBase = i * fresh.cap;
      const fCount = fresh.counts[i]!;
      const oBase = i * old.cap;
      const oCount = old.counts[i]!;
      for (let x = 0; x < fCount; x++) {
        const a = fresh.items[fBase + x]!;
        for (let y = x + 1; y < fCount; y++) updates += offerPair(a, fresh.items[fBase + y]!);
        for (let y = 0; y < oCount; y++) {
          const b = old.items[oBase + y]!;
          if (b !== a) updates += offerPair(a, b);
        }
      }
    }
    if (updates <= options.earlyStopDelta * n * k) break;
  }
}
