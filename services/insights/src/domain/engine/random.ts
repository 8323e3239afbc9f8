/**
 * A small seeded PRNG (sfc32), so that everything random in the engine
 * (random-projection trees, NN-descent sampling, synthetic corpora) is
 * reproducible: the same seed and input always give the same output.
 */
export class Prng {
  private a: number;
  private b: number;
  private c: number;
  private d: number;
  private spareGaussian: number | undefined;

  constructor(seed: number) {
    if (!Number.isInteger(seed)) throw new Error(`Prng seed must be an integer, got ${seed}`);
    this.a = 0x9e3779b9;
    this.b = 0x243f6a88;
    this.c = 0xb7e15162;
    this.d = seed >>> 0;
    // Warm up so that close seeds give unrelated streams.
    for (let i = 0; i < 15; i++) this.nextUint32();
  }

  nextUint32(): number {
    const t = (((this.a + this.b) | 0) + this.d) | 0;
    this.d = (this.d + 1) | 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) | 0;
    this.c = (this.c << 21) | (this.c >>> 11);
    this.c = (this.c + t) | 0;
    return t >>> 0;
  }

  /** Uniform in [0, 1). */
  next(): number {
    return this.nextUint32() / 4294967296;
  }

  /** Uniform integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.next() * n);
  }

  /** Standard normal (Box–Muller, caching the second value). */
  gaussian(): number {
    if (this.spareGaussian !== undefined) {
      const g = this.spareGaussian;
      this.spareGaussian = undefined;
      return g;
    }
    let u = 0;
    while (u === 0) u = this.next();
    const v = this.next();
    const r = Math.sqrt(-2 * Math.log(u));
    this.spareGaussian = r * Math.sin(2 * Math.PI * v);
    return r * Math.cos(2 * Math.PI * v);
  }
}
