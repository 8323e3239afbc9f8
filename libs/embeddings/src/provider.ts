/** The kinds of embedding provider this library can build. */
export type ProviderKind = 'glove-sif' | 'model2vec' | 'onnx' | 'http';

/** What `describe()` returns: enough to list a model and tell spaces apart. */
export interface ProviderDescription {
  kind: ProviderKind;
  /** Same as the provider's `space`. */
  space: string;
  dims: number;
  /** Where the model came from: a folder, a URL, or the built-in data file. */
  source: string;
  /** Kind-specific facts (max tokens, pooling, protocol, ...), flat for printing. */
  details: Record<string, string | number | boolean>;
}

/**
 * One embedding model. Vectors from different `space`s are not comparable, so every
 * stored vector is tagged with the space that made it.
 */
export interface EmbeddingProvider {
  /**
   * Stable id of model + version, e.g. `glove-100d-sif@2`,
   * `model2vec:potion-base-8M@1a2b3c4d`, `onnx:all-MiniLM-L6-v2@…`, `http:nomic-embed-text@localhost:11434`.
   */
  readonly space: string;
  readonly dims: number;
  /**
   * One vector per text, same order, each of length `dims` and L2-normalized.
   * A text with nothing the model can represent (empty, or only unknown tokens) gets the
   * all-zero vector: callers should not index it (see `isZeroVector`).
   */
  embed(texts: string[]): Promise<Float32Array[]>;
  describe(): ProviderDescription;
  /** Releases native sessions / sockets. The provider must not be used afterwards. */
  close(): Promise<void>;
}

/** Scales `v` in place to unit length; leaves an all-zero vector as it is. */
export function l2normalize(v: Float32Array): Float32Array {
  let sum = 0;
  for (let i = 0; i < v.length; i++) sum += v[i]! * v[i]!;
  if (sum === 0) return v;
  const inv = 1 / Math.sqrt(sum);
  for (let i = 0; i < v.length; i++) v[i]! *= inv;
  return v;
}

/** Dot product, which is the cosine similarity for the normalized vectors providers return. */
export function dot(a: Float32Array, b: Float32Array): number {
  if (a.length !== b.length) throw new Error(`dot: length mismatch ${a.length} vs ${b.length}`);
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i]! * b[i]!;
  return s;
}

/** True for the "no content" vector a provider returns for text it cannot represent. */
export function isZeroVector(v: Float32Array): boolean {
  return v.every((x) => x === 0);
}

/** Splits `items` into consecutive chunks of at most `size`. */
export function chunks<T>(items: readonly T[], size: number): T[][] {
  if (!(size >= 1)) throw new Error(`batch size must be >= 1, got ${size}`);
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}
