/**
 * The built-in embedder: GloVe 6B 50-d word vectors (10,000 most frequent words, public
 * domain, see data/PROVENANCE.md) combined into sentence vectors with SIF weighting
 * (Arora, Liang, Ma 2017, "A simple but tough-to-beat baseline for sentence embeddings").
 * Works on a fresh offline machine; a real sentence model (Model2Vec, ONNX) is far better.
 */
import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { ModelLoadError } from "./files.js";
import {
  l2normalize,
  type EmbeddingProvider,
  type ProviderDescription,
} from "./provider.js";
import { ENGLISH_STOP_WORDS } from "./stopwords.js";

/** The committed table, found relative to this file so it works from `dist/`. */
export const BUILTIN_GLOVE_PATH = fileURLToPath(
  new URL("../data/glove-10k.bin", import.meta.url),
);

/** Bump when tokenization, weighting or the default component changes: old vectors become a different space. */
const GLOVE_SIF_VERSION = 1;
export const GLOVE_SIF_SPACE = `glove-6b-50d-sif@${GLOVE_SIF_VERSION}`;

/** SIF smoothing parameter a in a/(a+p(w)); the paper finds 1e-3..1e-4 best. */
const SIF_A = 1e-3;
/** GloVe 6B's full vocabulary size, used to normalize the Zipf estimate of p(w). */
const FULL_VOCAB_SIZE = 400_000;

export interface GloveTable {
  words: string[];
  dims: number;
  /** Row-major `words.length × dims`. */
  vectors: Float32Array;
  index: Map<string, number>;
}

/**
 * Parses the table format: "GLVE", uint32 LE n, dim, L, then L bytes of a JSON array of
 * words, zero padding to a multiple of 4, then n×dim float32 LE, words in frequency order.
 */
export function parseGloveTable(buf: Uint8Array, source: string): GloveTable {
  const fail = (msg: string): never => {
    throw new ModelLoadError(`${source}: ${msg}`, source);
  };
  if (
    buf.byteLength < 16 ||
    new TextDecoder().decode(buf.subarray(0, 4)) !== "GLVE"
  )
    fail('not a GloVe table (missing "GLVE" magic)');
  const view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  const n = view.getUint32(4, true);
  const dims = view.getUint32(8, true);
  const jsonLen = view.getUint32(12, true);
  const vecStart = Math.ceil((16 + jsonLen) / 4) * 4;
  if (buf.byteLength !== vecStart + n * dims * 4)
    fail(`size ${buf.byteLength} does not match ${n} words × ${dims} dims`);
  const words: unknown = JSON.parse(
    new TextDecoder().decode(buf.subarray(16, 16 + jsonLen)),
  );
  if (
    !Array.isArray(words) ||
    words.length !== n ||
    !words.every((w) => typeof w === "string")
  )
    fail(`word list is not an array of ${n} strings`);
  // Copy (Buffer#slice would be a view) so the floats are 4-byte aligned.
  const vectors = new Float32Array(
    new Uint8Array(buf.subarray(vecStart, vecStart + n * dims * 4)).buffer,
  );
  const list = words as string[];
  return {
    words: list,
    dims,
    vectors,
    index: new Map(list.map((w, i) => [w, i])),
  };
}

/**
 * Lowercases, drops possessive "'s", and splits on anything that is not a letter
 * (digits and punctuation are dropped: the table's number tokens are too few to help).
 */
export function gloveTokens(text: string): string[] {
  return (
    text
      .toLowerCase()
      .replace(/(\p{L})['’]s?(?!\p{L})/gu, "$1")
      .match(/\p{L}+/gu) ?? []
  );
}

/** Ordered (suffix, replacement) guesses for inflected words missing from the table. */
const INFLECTIONS: ReadonlyArray<readonly [string, string]> = [
  ["ies", "y"],
  ["es", ""],
  ["s", ""],
  ["ied", "y"],
  ["ed", "e"],
  ["ed", ""],
  ["ing", "e"],
  ["ing", ""],
];

/** Row of `word`, trying simple plural and -ed/-ing stems when the exact word is missing. */
export function lookupWord(
  table: GloveTable,
  word: string,
): number | undefined {
  const exact = table.index.get(word);
  if (exact !== undefined) return exact;
  for (const [suffix, replacement] of INFLECTIONS) {
    if (word.length < suffix.length + 3 || !word.endsWith(suffix)) continue;
    if (suffix === "s" && word.endsWith("ss")) continue; // "glass" is not a plural
    let stem = word.slice(0, -suffix.length);
    const hit = table.index.get(stem + replacement);
    if (hit !== undefined) return hit;
    // "stopped" → "stopp" → "stop"
    if (replacement === "" && stem.length > 2 && stem.at(-1) === stem.at(-2)) {
      stem = stem.slice(0, -1);
      const undoubled = table.index.get(stem);
      if (undoubled !== undefined) return undoubled;
    }
  }
  return undefined;
}

/**
 * Zipf estimate of a word's unigram probability from its frequency rank (0-based), since
 * the table stores order, not counts: p(r) = 1 / ((r+1) · H_N), H_N ≈ ln N + γ.
 */
function zipfProbability(rank: number): number {
  return 1 / ((rank + 1) * (Math.log(FULL_VOCAB_SIZE) + 0.5772156649));
}

/** Top eigenvector of the symmetric matrix `m` (dims×dims), by power iteration. */
function topEigenvector(m: Float64Array, dims: number): Float32Array {
  let u = new Float64Array(dims).fill(1 / Math.sqrt(dims));
  for (let iter = 0; iter < 300; iter++) {
    const next = new Float64Array(dims);
    for (let i = 0; i < dims; i++) {
      let s = 0;
      for (let j = 0; j < dims; j++) s += m[i * dims + j]! * u[j]!;
      next[i] = s;
    }
    const norm = Math.hypot(...next);
    if (norm === 0) break;
    let delta = 0;
    for (let i = 0; i < dims; i++) {
      next[i]! /= norm;
      delta += Math.abs(next[i]! - u[i]!);
    }
    u = next;
    if (delta < 1e-12) break;
  }
  // Fix the sign so the same direction always hashes to the same space id.
  const firstNonZero = u.find((x) => Math.abs(x) > 1e-9) ?? 1;
  return Float32Array.from(u, (x) => (firstNonZero < 0 ? -x : x));
}

/** Accumulates weight · v vᵀ into the dims×dims matrix `m`. */
function addOuter(
  m: Float64Array,
  v: ArrayLike<number>,
  weight: number,
  dims: number,
): void {
  for (let i = 0; i < dims; i++) {
    const wi = weight * v[i]!;
    for (let j = 0; j < dims; j++) m[i * dims + j]! += wi * v[j]!;
  }
}

export interface GloveSifOptions {
  /**
   * Sentences from the user's own data. When given, the common component removed from every
   * vector is the first principal direction of their SIF vectors (as in the SIF paper), and the
   * space id gains a `+pc<sha8>` suffix because vectors depend on the corpus.
   * When not given, the component is the first principal direction of the vocabulary itself,
   * each word weighted by p(w): the direction frequent words share, which is what dominates
   * the common component of real sentence vectors.
   */
  referenceCorpus?: readonly string[];
  /** Another table in the same format (tests, or a larger GloVe export). Default: the built-in one. */
  tablePath?: string;
}

export class GloveSifProvider implements EmbeddingProvider {
  readonly dims: number;
  private readonly weights: Float32Array;

  private constructor(
    private readonly table: GloveTable,
    private readonly component: Float32Array,
    readonly space: string,
    private readonly source: string,
    private readonly referenceSize: number,
  ) {
    this.dims = table.dims;
    this.weights = Float32Array.from(
      table.words,
      (_, rank) => SIF_A / (SIF_A + zipfProbability(rank)),
    );
  }

  static async create(
    options: GloveSifOptions = {},
  ): Promise<GloveSifProvider> {
    const source = options.tablePath ?? BUILTIN_GLOVE_PATH;
    let buf: Buffer;
    try {
      buf = await readFile(source);
    } catch (err) {
      throw new ModelLoadError(
        `cannot read GloVe table ${source}: ${(err as Error).message}`,
        source,
      );
    }
    const table = parseGloveTable(buf, source);
    // Another table is another space: name it by its content.
    const space = options.tablePath
      ? `glove-sif:${sha8(buf)}-${table.dims}d@${GLOVE_SIF_VERSION}`
      : GLOVE_SIF_SPACE;
    const vocabProvider = new GloveSifProvider(
      table,
      vocabularyComponent(table),
      space,
      source,
      0,
    );
    if (!options.referenceCorpus) return vocabProvider;

    const m = new Float64Array(table.dims * table.dims);
    let used = 0;
    for (const text of options.referenceCorpus) {
      const v = vocabProvider.weightedSum(text);
      if (v) {
        addOuter(m, v, 1, table.dims);
        used++;
      }
    }
    if (used === 0)
      throw new Error(
        "GloVe-SIF reference corpus has no text with known words",
      );
    const component = topEigenvector(m, table.dims);
    const pcId = sha8(component);
    return new GloveSifProvider(
      table,
      component,
      `${space}+pc${pcId}`,
      source,
      used,
    );
  }

  /**
   * Unnormalized SIF sum Σ a/(a+p(w)) · v_w over the text's content words; if it has none,
   * over its stop words ("who are you" is still a question); `undefined` when no word is known.
   */
  private weightedSum(text: string): Float32Array | undefined {
    const content: number[] = [];
    const stop: number[] = [];
    for (const word of gloveTokens(text)) {
      const row = lookupWord(this.table, word);
      if (row === undefined) continue;
      (ENGLISH_STOP_WORDS.has(word) ? stop : content).push(row);
    }
    const rows = content.length > 0 ? content : stop;
    if (rows.length === 0) return undefined;
    const { dims, vectors } = this.table;
    const sum = new Float32Array(dims);
    for (const row of rows) {
      const w = this.weights[row]!;
      const off = row * dims;
      for (let d = 0; d < dims; d++) sum[d]! += w * vectors[off + d]!;
    }
    return sum;
  }

  /** SIF vector with the common component removed, normalized; all-zero if no word is known. */
  embedOne(text: string): Float32Array {
    const v = this.weightedSum(text);
    if (!v) return new Float32Array(this.dims);
    let proj = 0;
    for (let d = 0; d < this.dims; d++) proj += v[d]! * this.component[d]!;
    for (let d = 0; d < this.dims; d++) v[d]! -= proj * this.component[d]!;
    return l2normalize(v);
  }

  async embed(texts: string[]): Promise<Float32Array[]> {
    return texts.map((t) => this.embedOne(t));
  }

  describe(): ProviderDescription {
    return {
      kind: "glove-sif",
      space: this.space,
      dims: this.dims,
      source: this.source,
      details: {
        vocabulary: this.table.words.length,
        sifA: SIF_A,
        commonComponent:
          this.referenceSize > 0
            ? `reference corpus (${this.referenceSize} texts)`
            : "vocabulary",
        outOfVocabulary: "zero vector",
      },
    };
  }

  async close(): Promise<void> {}
}

function sha8(data: Uint8Array | Float32Array): string {
  return createHash("sha256").update(data).digest("hex").slice(0, 8);
}

/** First principal direction of the word vectors, each weighted by its probability p(w). */
function vocabularyComponent(table: GloveTable): Float32Array {
  const { dims, vectors, words } = table;
  const m = new Float64Array(dims * dims);
  for (let row = 0; row < words.length; row++)
    addOuter(
      m,
      vectors.subarray(row * dims, (row + 1) * dims),
      zipfProbability(row),
      dims,
    );
  return topEigenvector(m, dims);
}
