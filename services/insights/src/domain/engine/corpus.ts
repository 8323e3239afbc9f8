import { buildKnn, type KnnGraph, type KnnOptions } from './knn.js';
import type { EngineNote } from './types.js';

/** `[[Target#Heading|alias]]` → "target"; also drops a trailing ".md" and folds case and spaces. */
export function normalizeLinkTarget(raw: string): string {
  let t = raw.trim();
  if (t.startsWith('[[') && t.endsWith(']]')) t = t.slice(2, -2);
  t = t.split('|', 1)[0]!.split('#', 1)[0]!.split('^', 1)[0]!;
  t = t.trim().replace(/\.md$/i, '');
  return t.normalize('NFC').toLowerCase().replace(/\s+/g, ' ').trim();
}

/** "#Project/X " → "project/x". */
export function normalizeTag(raw: string): string {
  return raw.trim().replace(/^#+/, '').normalize('NFC').toLowerCase();
}

/** Links resolved over the whole corpus, by note index. */
export interface ResolvedLinks {
  /** What each note links to (deduplicated, ascending, without itself). */
  targets: number[][];
  /** What links to each note (ascending). */
  backlinks: number[][];
  /** Each note's link targets that name no note, as written. */
  dangling: string[][];
}

/** The kNN graph over the notes that have an embedding, with the row ↔ note mapping. */
export interface CorpusKnn {
  graph: KnnGraph;
  /** Note index of each graph row. */
  noteOfRow: Int32Array;
  /** Graph row of each note, −1 when it has no embedding. */
  rowOfNote: Int32Array;
}

/**
 * The notes prepared once for all detectors: sorted by id (so results do not
 * depend on input order), links resolved, embeddings packed, kNN memoised.
 */
export class Corpus {
  readonly notes: readonly EngineNote[];
  readonly indexOfId = new Map<string, number>();
  private readonly indicesOfTitle = new Map<string, number[]>();
  private resolved: ResolvedLinks | undefined;
  private tagIndex: Map<string, number[]> | undefined;
  private knnMemo: { key: string; value: CorpusKnn } | undefined;

  constructor(notes: readonly EngineNote[]) {
    this.notes = [...notes].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    let dim = -1;
    this.notes.forEach((note, i) => {
      if (this.indexOfId.has(note.id)) throw new Error(`engine: duplicate note id ${JSON.stringify(note.id)}`);
      this.indexOfId.set(note.id, i);
      for (const field of ['createdAt', 'updatedAt'] as const) {
        if (!(note[field] instanceof Date) || Number.isNaN(note[field].getTime())) {
          throw new Error(`engine: note ${note.id} has an invalid ${field}`);
        }
      }
      if (note.embedding.length > 0) {
        if (dim === -1) dim = note.embedding.length;
        else if (note.embedding.length !== dim) {
          throw new Error(`engine: note ${note.id} has a ${note.embedding.length}-d embedding, others ${dim}-d`);
        }
      }
      for (const title of new Set([note.title, ...(note.aliases ?? [])].map(normalizeLinkTarget))) {
        if (title === '') continue;
        const same = this.indicesOfTitle.get(title);
        if (same) same.push(i);
        else this.indicesOfTitle.set(title, [i]);
      }
    });
  }

  get size(): number {
    return this.notes.length;
  }

  note(index: number): EngineNote {
    const note = this.notes[index];
    if (!note) throw new Error(`engine: no note at index ${index}`);
    return note;
  }

  /** Notes a link target names: the note with that exact id, else every note with that title or alias. */
  resolveLink(target: string): readonly number[] {
    const byId = this.indexOfId.get(target.trim());
    if (byId !== undefined) return [byId];
    return this.indicesOfTitle.get(normalizeLinkTarget(target)) ?? [];
  }

  links(): ResolvedLinks {
    if (!this.resolved) {
      const targets: number[][] = [];
      const dangling: string[][] = [];
      const backlinks: number[][] = this.notes.map(() => []);
      this.notes.forEach((note, i) => {
        const found = new Set<number>();
        const missing: string[] = [];
        for (const link of note.links) {
          if (normalizeLinkTarget(link) === '') continue;
          const hits = this.resolveLink(link);
          if (hits.length === 0) missing.push(link);
          for (const h of hits) if (h !== i) found.add(h);
        }
        targets.push([...found].sort((a, b) => a - b));
        dangling.push(missing);
        for (const t of found) backlinks[t]!.push(i);
      });
      this.resolved = { targets, backlinks, dangling };
    }
    return this.resolved;
  }

  /** Normalised tag → indices of the notes carrying it, oldest first (ties by id). */
  tags(): Map<string, number[]> {
    if (!this.tagIndex) {
      const index = new Map<string, number[]>();
      this.notes.forEach((note, i) => {
        for (const tag of new Set(note.tags.map(normalizeTag))) {
          if (tag === '') continue;
          const uses = index.get(tag);
          if (uses) uses.push(i);
          else index.set(tag, [i]);
        }
      });
      for (const uses of index.values()) {
        uses.sort((a, b) => this.note(a).createdAt.getTime() - this.note(b).createdAt.getTime() || a - b);
      }
      this.tagIndex = index;
    }
    return this.tagIndex;
  }

  /** The kNN graph over embedded notes, built once per option set. */
  knn(options: KnnOptions): CorpusKnn {
    const key = JSON.stringify(options);
    if (this.knnMemo?.key === key) return this.knnMemo.value;
    const rowOfNote = new Int32Array(this.size).fill(-1);
    const rows: number[] = [];
    this.notes.forEach((note, i) => {
      if (note.embedding.length > 0) {
        rowOfNote[i] = rows.length;
        rows.push(i);
      }
    });
    const dim = rows.length > 0 ? this.note(rows[0]!).embedding.length : 0;
    const vectors = new Float32Array(rows.length * dim);
    rows.forEach((noteIndex, row) => {
      const { id, embedding } = this.note(noteIndex);
      let norm = 0;
      for (const x of embedding) norm += x * x;
      // Similarity is a dot product only for unit vectors; NaN fails this test too.
      if (!(Math.abs(norm - 1) < 1e-3))
        throw new Error(`engine: note ${id} embedding is not L2-normalised (|v|²=${norm})`);
      vectors.set(embedding, row * dim);
    });
    const graph = buildKnn(vectors, rows.length, dim, options);
    const value = { graph, noteOfRow: Int32Array.from(rows), rowOfNote };
    this.knnMemo = { key, value };
    return value;
  }
}

export function asCorpus(input: readonly EngineNote[] | Corpus): Corpus {
  return input instanceof Corpus ? input : new Corpus(input);
}
