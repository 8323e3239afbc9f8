/**
 * Hub guard for hidden_arc. Mutual kNN keeps a hub note out of an arc only
 * when every arc note has k peers closer than the hub; an arc smaller than
 * k+1 notes does not, so a hub between two small arcs can still get mutual
 * edges into both. Such a hub is an articulation point whose removal leaves
 * two or more pieces of arc size; we find those with Tarjan's algorithm
 * (iterative, O(V+E)) and the caller drops them from the graph.
 */

/** Compressed adjacency of an undirected graph given as edge endpoint arrays. */
function adjacency(n: number, from: Int32Array, to: Int32Array): { start: Int32Array; next: Int32Array } {
  const start = new Int32Array(n + 1);
  for (let e = 0; e < from.length; e++) {
    start[from[e]! + 1]!++;
    start[to[e]! + 1]!++;
  }
  for (let v = 0; v < n; v++) start[v + 1] = start[v + 1]! + start[v]!;
  const fill = start.slice(0, n);
  const next = new Int32Array(from.length * 2);
  for (let e = 0; e < from.length; e++) {
    next[fill[from[e]!]!++] = to[e]!;
    next[fill[to[e]!]!++] = from[e]!;
  }
  return { start, next };
}

/**
 * Vertices whose removal splits their connected component into at least two
 * pieces of `minPiece` or more vertices. Returns a 0/1 flag per vertex.
 */
export function findBridgingHubs(n: number, from: Int32Array, to: Int32Array, minPiece: number): Uint8Array {
  const { start, next } = adjacency(n, from, to);
  const disc = new Int32Array(n).fill(-1);
  const low = new Int32Array(n);
  const parent = new Int32Array(n).fill(-1);
  const cursor = new Int32Array(n);
  const subtree = new Int32Array(n);
  /** Vertices cut off below v when v is removed, and how many of those pieces are big. */
  const separated = new Int32Array(n);
  const bigPieces = new Int32Array(n);
  const hubs = new Uint8Array(n);
  let time = 0;
  for (let root = 0; root < n; root++) {
    if (disc[root] !== -1 || start[root] === start[root + 1]) continue;
    const order: number[] = [];
    const stack = [root];
    const enter = (v: number): void => {
      disc[v] = low[v] = time++;
      cursor[v] = start[v]!;
      subtree[v] = 1;
      order.push(v);
    };
    enter(root);
    while (stack.length > 0) {
      const v = stack[stack.length - 1]!;
      if (cursor[v]! < start[v + 1]!) {
        const w = next[cursor[v]!++]!;
        if (disc[w] === -1) {
          parent[w] = v;
          enter(w);
          stack.push(w);
        } else if (w !== parent[v]) {
          low[v] = Math.min(low[v]!, disc[w]!);
        }
        continue;
      }
      stack.pop();
      const p = parent[v]!;
      if (p < 0) continue;
      low[p] = Math.min(low[p]!, low[v]!);
      subtree[p] = subtree[p]! + subtree[v]!;
      if (low[v]! >= disc[p]!) {
        separated[p] = separated[p]! + subtree[v]!;
        if (subtree[v]! >= minPiece) bigPieces[p]!++;
      }
    }
    const size = subtree[root]!;
    if (size < 2 * minPiece + 1) continue;
    for (const v of order) {
      // Besides the pieces cut off below v, the rest of the component (above v) is one more piece.
      const rest = size - 1 - separated[v]!;
      if (bigPieces[v]! + (rest >= minPiece ? 1 : 0) >= 2) hubs[v] = 1;
    }
  }
  return hubs;
}
