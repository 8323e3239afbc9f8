import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DEFAULT_ENGINE_CONFIG, resolveEngineConfig } from './config.js';
import { Corpus } from './corpus.js';
import { analyzeArcs, detectHiddenArcs } from './hidden-arc.js';
import { bruteForceKnn } from './knn.js';
import { addDays, blend, CorpusBuilder } from './synthetic.js';

const START = new Date('2021-01-01T00:00:00Z');
const cfg = DEFAULT_ENGINE_CONFIG;

/** 200 unrelated notes over three years: the noise every test corpus sits in. */
function withBackground(seed: number): CorpusBuilder {
  const b = new CorpusBuilder(seed);
  b.background(200, START, addDays(START, 3 * 365));
  return b;
}

const sorted = (ids: readonly string[]): string[] => [...ids].sort();

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
