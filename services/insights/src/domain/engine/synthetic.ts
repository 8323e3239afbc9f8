import { createHash } from 'node:crypto';
import { Prng } from './random.js';
import { DAY_MS } from './signal-util.js';
import type { EngineNote } from './types.js';

/**
 * Deterministic synthetic corpora for tests and benchmarks: embeddings drawn
 * around chosen directions, timestamps placed on purpose, so each detector's
 * firing case and its near-miss can be built in a few lines.
 */

export function addDays(date: Date, days: number): Date {
  return new Date(date.getTime() + days * DAY_MS);
}

export function normalize(v: Float32Array): Float32Array {
  let norm = 0;
  for (const x of v) norm += x * x;
  norm = Math.sqrt(norm);
  if (norm === 0) throw new Error('cannot normalise a zero vector');
  for (let i = 0; i < v.length; i++) v[i] = v[i]! / norm;
  return v;
}

export function randomUnitVector(rng: Prng, dim: number): Float32Array {
  const v = new Float32Array(dim);
  for (let i = 0; i < dim; i++) v[i] = rng.gaussian();
  return normalize(v);
}

/**
 * A unit vector near `center`: center + isotropic noise of total norm ≈ `noise`.
 * Two such vectors have cosine ≈ 1/(1+noise²) (0.8 at noise 0.5).
 */
export function around(rng: Prng, center: Float32Array, noise: number): Float32Array {
  const sigma = noise / Math.sqrt(center.length);
  const v = new Float32Array(center.length);
  for (let i = 0; i < v.length; i++) v[i] = center[i]! + sigma * rng.gaussian();
  return normalize(v);
}

/** The normalised sum of unit vectors: a point "between" them, e.g. a hub note. */
export function blend(...vectors: Float32Array[]): Float32Array {
  const first = vectors[0];
  if (!first) throw new Error('blend needs at least one vector');
  const v = new Float32Array(first.length);
  for (const w of vectors) for (let i = 0; i < v.length; i++) v[i] = v[i]! + w[i]!;
  return normalize(v);
}

export interface NoteSpec {
  id: string;
  title?: string;
  createdAt: Date;
  updatedAt?: Date;
  tags?: string[];
  links?: string[];
  frontMatter?: Record<string, unknown>;
  embedding?: Float32Array;
  /** Free text standing for the body; part of the content hash. */
  body?: string;
}

/** Builds an EngineNote whose contentHash covers everything a user could edit. */
export function makeNote(spec: NoteSpec): EngineNote {
  const title = spec.title ?? `Note ${spec.id}`;
  const tags = spec.tags ?? [];
  const links = spec.links ?? [];
  const frontMatter = spec.frontMatter ?? {};
  const contentHash = createHash('sha256')
    .update(JSON.stringify([title, tags, links, frontMatter, spec.body ?? '']))
    .digest('hex');
  return {
    id: spec.id,
    title,
    createdAt: spec.createdAt,
    updatedAt: spec.updatedAt ?? spec.createdAt,
    tags,
    links,
    frontMatter,
    contentHash,
    embedding: spec.embedding ?? new Float32Array(0),
  };
}

/** `count` dates spread evenly from `start` over `spanDays` (first and last included). */
export function spreadDates(start: Date, spanDays: number, count: number): Date[] {
  if (count === 1) return [start];
  return Array.from({ length: count }, (_, i) => addDays(start, (spanDays * i) / (count - 1)));
}

/**
 * Accumulates notes with sequential ids (`prefix` + number) so tests can say
 * "an arc of 6 notes over 400 days" and get back the ids they created.
 */
export class CorpusBuilder {
  readonly notes: EngineNote[] = [];
  readonly rng: Prng;
  private nextId = 1;

  constructor(
    seed: number,
    readonly dim = 64,
    private readonly prefix = 'n',
  ) {
    this.rng = new Prng(seed);
  }

  direction(): Float32Array {
    return randomUnitVector(this.rng, this.dim);
  }

  add(spec: Omit<NoteSpec, 'id'> & { id?: string }): EngineNote {
    const note = makeNote({ ...spec, id: spec.id ?? `${this.prefix}${this.nextId++}` });
    this.notes.push(note);
    return note;
  }

  /** `size` unlinked notes around `center`, created evenly over `spanDays` from `start`. */
  cluster(
    center: Float32Array,
    size: number,
    start: Date,
    spanDays: number,
    options: { noise?: number; tags?: string[] } = {},
  ): string[] {
    return spreadDates(start, spanDays, size).map(
      (createdAt) =>
        this.add({
          createdAt,
          embedding: around(this.rng, center, options.noise ?? 0.5),
          tags: options.tags ?? [],
        }).id,
    );
  }

  /** `count` notes in random directions at random times between `from` and `to`: unrelated background. */
  background(count: number, from: Date, to: Date): string[] {
    const span = to.getTime() - from.getTime();
    return Array.from(
      { length: count },
      () =>
        this.add({
          createdAt: new Date(from.getTime() + Math.floor(this.rng.next() * span)),
          embedding: this.direction(),
        }).id,
    );
  }
}

/**
 * A corpus shaped like a real vault for benchmarks: most notes belong to one
 * of many loose topics (n/40 of them), a few per thousand form long arcs,
 * with tags, links (some dangling) and state notes.
 */
export function benchCorpus(n: number, dim: number, seed = 7): EngineNote[] {
  const rng = new Prng(seed);
  const start = new Date('2010-01-01T00:00:00Z');
  const spanMs = 15 * 365 * DAY_MS;
  const topics = Array.from({ length: Math.max(1, Math.floor(n / 40)) }, () => randomUnitVector(rng, dim));
  const tags = Array.from({ length: 200 }, (_, i) => `tag${i}`);
  const notes: EngineNote[] = [];
  for (let i = 0; i < n; i++) {
    const topic = rng.int(topics.length);
    const createdAt = new Date(start.getTime() + Math.floor(rng.next() * spanMs));
    const links = rng.next() < 0.3 ? [`b${rng.int(n)}`] : rng.next() < 0.02 ? [`Missing ${rng.int(1000)}`] : [];
    notes.push(
      makeNote({
        id: `b${i}`,
        title: `Bench note ${i}`,
        createdAt,
        updatedAt: createdAt,
        tags: [tags[rng.int(tags.length)]!],
        links,
        frontMatter: i % 500 === 0 ? { type: 'state' } : {},
        embedding: around(rng, topics[topic]!, 0.9),
        body: `body ${i}`,
      }),
    );
  }
  return notes;
}
