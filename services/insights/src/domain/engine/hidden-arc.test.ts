import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DEFAULT_ENGINE_CONFIG, resolveEngineConfig } from './config.js';
import { Corpus } from './corpus.js';
import { analyzeArcs, detectHiddenArcs } from './hidden-arc.js';
import { bruteForceKnn } from './knn.js';
import { addDays, blend, CorpusBuilder, normalize } from './synthetic.js';

const START = new Date('2021-01-01T00:00:00Z');
const cfg = DEFAULT_ENGINE_CONFIG;

/** 200 unrelated notes over three years: the noise every test corpus sits in. */
function withBackground(seed: number): CorpusBuilder {
  const b = new CorpusBuilder(seed);
  b.background(200, START, addDays(START, 3 * 365));
  return b;
}

const sorted = (ids: readonly string[]): string[] => [...ids].sort();
const dot = (a: Float32Array, b: Float32Array): number => a.reduce((sum, x, i) => sum + x * b[i]!, 0);

describe('detectHiddenArcs', () => {
  it('fires on an unlinked 6-note thread spread over 400 days, oldest note first', () => {
    const b = withBackground(1);
    const arc = b.cluster(b.direction(), 6, addDays(START, 30), 400);
    const signals = detectHiddenArcs(b.notes, cfg);
    assert.equal(signals.length, 1);
    const [s] = signals;
    assert.deepEqual(s!.noteIds, arc);
    assert.equal(s!.kind, 'hidden_arc');
    assert.equal(s!.detail.size, 6);
    assert.equal(s!.detail.spanDays, 400);
    assert.equal(s!.detail.linkedPairs, 0);
    assert.ok(s!.score > 0.7 && s!.score <= 1, `cohesion ${s!.score}`);
  });

  it('finds arcs at both size bounds (4 and 12 notes) whole', () => {
    const b = withBackground(2);
    const small = b.cluster(b.direction(), 4, START, 200);
    const large = b.cluster(b.direction(), 12, START, 700);
    const found = detectHiddenArcs(b.notes, cfg).map((s) => sorted(s.noteIds));
    assert.deepEqual(found.sort(), [sorted(small), sorted(large)].sort());
  });

  it('near-miss: a thread of 3 notes is a component but too small', () => {
    const b = withBackground(3);
    const three = b.cluster(b.direction(), 3, START, 500);
    assert.deepEqual(detectHiddenArcs(b.notes, cfg), []);
    const component = analyzeArcs(b.notes, cfg).components.find((c) => c.noteIds.includes(three[0]!));
    assert.deepEqual(component?.noteIds, three);
    assert.equal(component?.verdict, 'too_small');
  });

  it('near-miss: a 10-note topic within 90 days is a component but too short', () => {
    const b = withBackground(4);
    const topic = b.cluster(b.direction(), 10, START, 90);
    assert.deepEqual(detectHiddenArcs(b.notes, cfg), []);
    const component = analyzeArcs(b.notes, cfg).components.find((c) => c.noteIds.includes(topic[0]!));
    assert.deepEqual(sorted(component!.noteIds), sorted(topic));
    assert.equal(component!.verdict, 'too_short');
  });

  it('near-miss: notes that already link each other are not hidden', () => {
    const b = withBackground(5);
    const center = b.direction();
    const ids = b.cluster(center, 5, START, 300);
    // Rebuild the same thread with each note linking its predecessor.
    const linked = new CorpusBuilder(5).notes;
    for (const note of b.notes) {
      const at = ids.indexOf(note.id);
      linked.push(at > 0 ? { ...note, links: [ids[at - 1]!] } : note);
    }
    const component = analyzeArcs(linked, cfg).components.find((c) => c.noteIds.includes(ids[0]!));
    assert.equal(component?.verdict, 'linked');
    assert.equal(component?.detail.linkedPairs, 4);
    assert.deepEqual(detectHiddenArcs(linked, cfg), []);
    assert.equal(detectHiddenArcs(b.notes, cfg).length, 1, 'the same notes unlinked do form an arc');
  });

  it('near-miss: a 13-note thread is too large', () => {
    const b = withBackground(6);
    b.cluster(b.direction(), 13, START, 600);
    assert.deepEqual(detectHiddenArcs(b.notes, cfg), []);
    assert.ok(analyzeArcs(b.notes, cfg).components.some((c) => c.verdict === 'too_large' && c.detail.size === 13));
  });

  for (const arcSize of [6, 4]) {
    it(`near-miss: a hub note linking two ${arcSize}-note arcs does not merge them`, () => {
      const b = withBackground(7);
      const [dirA, dirB] = [b.direction(), b.direction()];
      const arcA = b.cluster(dirA, arcSize, START, 400);
      const arcB = b.cluster(dirB, arcSize, addDays(START, 100), 400);
      const hub = b.add({ createdAt: addDays(START, 200), embedding: blend(dirA, dirB), links: [...arcA, ...arcB] }).id;

      // The near-miss is real: the hub's own nearest neighbours reach into both arcs,
      // so a one-sided kNN graph would join them into one blob.
      const corpus = new Corpus(b.notes);
      const { noteOfRow, rowOfNote } = corpus.knn(cfg.knn);
      const exact = bruteForceKnn(
        Float32Array.from(corpus.notes.flatMap((n) => [...n.embedding])),
        corpus.size,
        b.dim,
        cfg.knn.k,
      );
      const row = rowOfNote[corpus.indexOfId.get(hub)!]!;
      const hubNeighbours = [...exact.indices.subarray(row * cfg.knn.k, (row + 1) * cfg.knn.k)].map(
        (r) => corpus.note(noteOfRow[r]!).id,
      );
      assert.ok(hubNeighbours.some((id) => arcA.includes(id)) && hubNeighbours.some((id) => arcB.includes(id)));

      const found = detectHiddenArcs(b.notes, cfg).map((s) => sorted(s.noteIds));
      assert.deepEqual(found.sort(), [sorted(arcA), sorted(arcB)].sort());
    });
  }

  it('cuts out a note bridging two small arcs (reported as a hub)', () => {
    const b = withBackground(7);
    const [dirA, dirB] = [b.direction(), b.direction()];
    b.cluster(dirA, 4, START, 400);
    b.cluster(dirB, 4, addDays(START, 100), 400);
    const hub = b.add({ createdAt: addDays(START, 200), embedding: blend(dirA, dirB) }).id;
    assert.deepEqual(analyzeArcs(b.notes, cfg).hubNoteIds, [hub]);
  });

  it('near-miss: two hub notes between two 12-note arcs (no single cut vertex) do not merge them', () => {
    const b = withBackground(12);
    const [dirA, dirB] = [b.direction(), b.direction()];
    const arcA = b.cluster(dirA, 12, START, 400);
    const arcB = b.cluster(dirB, 12, addDays(START, 100), 400);
    for (const d of [150, 250])
      b.add({ createdAt: addDays(START, d), embedding: blend(dirA, dirB), links: [arcA[0]!, arcB[0]!] });
    // Each arc note has 11 peers closer than the hubs, so no hub is among its 10 nearest: no mutual edge.
    const found = detectHiddenArcs(b.notes, cfg).map((s) => sorted(s.noteIds));
    assert.deepEqual(found.sort(), [sorted(arcA), sorted(arcB)].sort());
    assert.deepEqual(analyzeArcs(b.notes, cfg).hubNoteIds, []);
  });

  it('leaves out a note that hangs on a single mutual edge (and would bring its links)', () => {
    const b = withBackground(13);
    const arc = b.cluster(b.direction(), 6, START, 400, { noise: 0.7 });
    const arcVectors = b.notes.filter((n) => arc.includes(n.id)).map((n) => n.embedding);
    // A direction orthogonal to every arc note (Gram–Schmidt), so the hanger's similarity to
    // an arc note is 0.6 × that note's similarity to the anchor: ≥ 0.5 for the anchor only.
    const away = b.direction();
    for (let round = 0; round < 2; round++) {
      for (const v of arcVectors) {
        const p = dot(away, v) / dot(v, v);
        for (let i = 0; i < away.length; i++) away[i] = away[i]! - p * v[i]!;
      }
    }
    normalize(away);
    const anchor = arcVectors[2]!;
    const pendant = normalize(anchor.map((x, i) => 0.6 * x + 0.8 * away[i]!));
    const hanger = b.add({ createdAt: addDays(START, 500), embedding: pendant, links: [arc[0]!, arc[1]!] });
    const sims = arcVectors.map((v) => dot(v, hanger.embedding));
    assert.equal(sims.filter((s) => s >= cfg.hiddenArc.minSimilarity).length, 1, `one edge only: ${sims}`);
    assert.deepEqual(
      detectHiddenArcs(b.notes, cfg).map((s) => s.noteIds),
      [arc],
    );
  });

  it('gives the same signals whatever the input order', () => {
    const b = withBackground(8);
    b.cluster(b.direction(), 7, START, 365);
    b.cluster(b.direction(), 5, START, 250);
    const forward = detectHiddenArcs(b.notes, cfg);
    assert.equal(forward.length, 2);
    assert.deepEqual(detectHiddenArcs([...b.notes].reverse(), cfg), forward);
  });

  it('keys an arc by its set of notes: same set, same key; a grown arc, a new key', () => {
    const b = withBackground(9);
    const center = b.direction();
    b.cluster(center, 5, START, 300);
    const [before] = detectHiddenArcs(b.notes, cfg);
    assert.equal(detectHiddenArcs(b.notes, cfg)[0]!.key, before!.key);
    b.cluster(center, 1, addDays(START, 320), 0);
    const [after] = detectHiddenArcs(b.notes, cfg);
    assert.equal(after!.detail.size, 6);
    assert.notEqual(after!.key, before!.key);
  });

  it('finds the same arcs with the approximate kNN on a larger corpus', () => {
    const b = new CorpusBuilder(10);
    b.background(3000, START, addDays(START, 5 * 365));
    const arcs = [b.cluster(b.direction(), 8, START, 500), b.cluster(b.direction(), 5, addDays(START, 800), 300)];
    const approximate = resolveEngineConfig({ knn: { exactBelow: 0 } });
    const found = detectHiddenArcs(b.notes, approximate).map((s) => sorted(s.noteIds));
    assert.deepEqual(found.sort(), arcs.map(sorted).sort());
  });

  it('ignores notes without an embedding', () => {
    const b = withBackground(11);
    const arc = b.cluster(b.direction(), 5, START, 300);
    b.add({ createdAt: START });
    assert.deepEqual(
      detectHiddenArcs(b.notes, cfg).map((s) => s.noteIds),
      [arc],
    );
  });
});
