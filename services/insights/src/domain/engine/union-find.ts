/** Disjoint sets over 0…n−1 with path compression (halving) and union by size. */
export class UnionFind {
  private readonly parent: Int32Array;
  private readonly setSize: Int32Array;

  constructor(n: number) {
    this.parent = new Int32Array(n);
    for (let i = 0; i < n; i++) this.parent[i] = i;
    this.setSize = new Int32Array(n).fill(1);
  }

  find(x: number): number {
    const parent = this.parent;
    while (parent[x] !== x) {
      parent[x] = parent[parent[x]!]!;
      x = parent[x]!;
    }
    return x;
  }

  /** Returns false when a and b were already in one set. */
  union(a: number, b: number): boolean {
    let ra = this.find(a);
    let rb = this.find(b);
    if (ra === rb) return false;
    if (this.setSize[ra]! < this.setSize[rb]!) [ra, rb] = [rb, ra];
    this.parent[rb] = ra;
    this.setSize[ra] = this.setSize[ra]! + this.setSize[rb]!;
    return true;
  }

  /** The sets with at least `minSize` members, each ascending, ordered by their smallest member. */
  components(minSize = 1): number[][] {
    const byRoot = new Map<number, number[]>();
    for (let i = 0; i < this.parent.length; i++) {
      const root = this.find(i);
      const members = byRoot.get(root);
      if (members) members.push(i);
      else byRoot.set(root, [i]);
    }
    return [...byRoot.values()].filter((m) => m.length >= minSize).sort((a, b) => a[0]! - b[0]!);
  }
}
