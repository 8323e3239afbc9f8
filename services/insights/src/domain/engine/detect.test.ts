import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DEFAULT_ENGINE_CONFIG, resolveEngineConfig } from './config.js';
import { detectAll, detectIfChanged } from './detect.js';
import { corpusFingerprint } from './fingerprint.js';
import { addDays, CorpusBuilder } from './synthetic.js';
import { SIGNAL_KINDS } from './types.js';

const START = new Date('2021-01-01T00:00:00Z');
const cfg = DEFAULT_ENGINE_CONFIG;

/** One firing case per detector in a shared corpus. */
function everything() {
  const b = new CorpusBuilder(1);
  b.background(200, START, addDays(START, 1000));
  b.cluster(b.direction(), 6, START, 400);
  const state = b.add({ title: 'Status', createdAt: START, frontMatter: { type: 'state' }, embedding: b.direction() });
  b.add({ createdAt: addDays(START, 30), links: ['Status', 'Missing piece'], embedding: b.direction() });
  for (const d of [0, 5, 200, 204])
    b.add({ createdAt: addDays(START, d), tags: ['climbing'], embedding: b.direction() });
  return { b, state };
}

describe('detectAll', () => {
  it('runs every detector once, ordered by kind then key', () => {
    const { b } = everything();
    const signals = detectAll(b.notes, cfg);
    assert.deepEqual(
      signals.map((s) => s.kind),
      SIGNAL_KINDS,
    );
  });

  it('is deterministic and independent of input order', () => {
    const { b } = everything();
    const shuffled = [...b.notes].sort((x, y) => x.contentHash.localeCompare(y.contentHash));
    assert.deepEqual(detectAll(shuffled, cfg), detectAll(b.notes, cfg));
  });

  it('rejects duplicate ids, invalid dates, mixed or unnormalised embeddings, naming the note', () => {
    const { b } = everything();
    const [first, second] = b.notes;
    assert.throws(() => detectAll([...b.notes, first!], cfg), /duplicate note id "n1"/);
    assert.throws(() => detectAll([{ ...first!, createdAt: new Date('x') }], cfg), /note n1 has an invalid createdAt/);
    assert.throws(
      () => detectAll([first!, { ...second!, embedding: new Float32Array(3) }], cfg),
      /note n2 has a 3-d embedding, others 64-d/,
    );
    const doubled = first!.embedding.map((x) => x * 2);
    assert.throws(() => detectAll([{ ...first!, embedding: doubled }], cfg), /note n1 embedding is not L2-normalised/);
  });
});

describe('corpusFingerprint and detectIfChanged', () => {
  it('ignores note order but sees edits, deletions, re-embedding and configuration', () => {
    const { b, state } = everything();
    const base = corpusFingerprint(b.notes, cfg);
    assert.equal(corpusFingerprint([...b.notes].reverse(), cfg), base);
    const variants = [
      b.notes.map((n) => (n.id === state.id ? { ...n, contentHash: 'edited' } : n)),
      b.notes.map((n) => (n.id === state.id ? { ...n, updatedAt: addDays(n.updatedAt, 1) } : n)),
      // Tags, links and front matter reach the fingerprint through contentHash; a title may not (file names).
      b.notes.map((n) => (n.id === state.id ? { ...n, title: 'Renamed' } : n)),
      b.notes.map((n) => (n.id === state.id ? { ...n, embedding: b.direction() } : n)),
      b.notes.slice(1),
      [...b.notes, b.add({ createdAt: START })],
    ];
    for (const [i, notes] of variants.entries()) assert.notEqual(corpusFingerprint(notes, cfg), base, `variant ${i}`);
    assert.notEqual(corpusFingerprint(b.notes, resolveEngineConfig({ knn: { k: 8 } })), base);
  });

  it('does not cancel out when two notes swap their content', () => {
    const { b } = everything();
    const [x, y] = b.notes;
    const swapped = [
      { ...x!, contentHash: y!.contentHash },
      { ...y!, contentHash: x!.contentHash },
      ...b.notes.slice(2),
    ];
    assert.notEqual(corpusFingerprint(swapped, cfg), corpusFingerprint(b.notes, cfg));
  });

  it('skips detection when nothing changed since the previous run', () => {
    const { b } = everything();
    const first = detectIfChanged(b.notes, cfg, undefined);
    assert.ok(first.signals && first.signals.length === 4);
    assert.deepEqual(detectIfChanged(b.notes, cfg, first.fingerprint), {
      fingerprint: first.fingerprint,
      signals: null,
    });
    b.add({ createdAt: START, links: ['Another gap'] });
    const third = detectIfChanged(b.notes, cfg, first.fingerprint);
    assert.equal(third.signals?.filter((s) => s.kind === 'dangling_link').length, 2);
  });
});
