import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DEFAULT_ENGINE_CONFIG, resolveEngineConfig } from './config.js';
import { detectStaleStates, isStateNote } from './stale-state.js';
import { addDays, around, CorpusBuilder } from './synthetic.js';

const START = new Date('2022-01-01T00:00:00Z');
const cfg = DEFAULT_ENGINE_CONFIG;

/** A state note last updated at START + 100 days, in 100 unrelated background notes. */
function withStateNote(seed: number, extra: { tags?: string[] } = {}) {
  const b = new CorpusBuilder(seed);
  b.background(100, START, addDays(START, 400));
  const direction = b.direction();
  const state = b.add({
    title: 'Job search: where things stand',
    createdAt: START,
    updatedAt: addDays(START, 100),
    frontMatter: { type: 'state' },
    embedding: around(b.rng, direction, 0.3),
    tags: extra.tags ?? [],
  });
  return { b, state, direction };
}

describe('detectStaleStates', () => {
  it('fires when a note linking to the state note is created after its last update', () => {
    const { b, state } = withStateNote(1);
    const newer = b.add({
      createdAt: addDays(START, 150),
      links: ['Job search: where things stand'],
      embedding: b.direction(),
    });
    const [signal, ...rest] = detectStaleStates(b.notes, cfg);
    assert.deepEqual(rest, []);
    assert.deepEqual(signal!.noteIds, [state.id, newer.id]);
    assert.deepEqual(signal!.detail, {
      stateNoteId: state.id,
      stateUpdatedAt: state.updatedAt.toISOString(),
      newerNoteIds: [newer.id],
      newestAt: newer.createdAt.toISOString(),
    });
    assert.equal(signal!.score, 0.5);
  });

  it('counts notes the state note links to, notes near it in meaning, and notes sharing a narrow tag; newest last', () => {
    const { b, state, direction } = withStateNote(2, { tags: ['jobsearch'] });
    const linkedTo = b.add({ createdAt: addDays(START, 130), embedding: b.direction() });
    const similar = b.add({ createdAt: addDays(START, 120), embedding: around(b.rng, direction, 0.3) });
    const tagged = b.add({ createdAt: addDays(START, 140), tags: ['JobSearch'], embedding: b.direction() });
    const notes = b.notes.map((n) => (n.id === state.id ? { ...n, links: [linkedTo.id] } : n));
    const [signal] = detectStaleStates(notes, cfg);
    assert.deepEqual(signal!.detail.newerNoteIds, [similar.id, linkedTo.id, tagged.id]);
    assert.equal(signal!.score, 0.75);
  });

  it('near-miss: related notes all older than the last update', () => {
    const { b } = withStateNote(3);
    b.add({ createdAt: addDays(START, 50), links: ['Job search: where things stand'], embedding: b.direction() });
    b.add({ createdAt: addDays(START, 100), links: ['Job search: where things stand'], embedding: b.direction() });
    assert.deepEqual(detectStaleStates(b.notes, cfg), []);
  });

  it('near-miss: newer notes that are unrelated, or share only a broad tag or the state tag', () => {
    const { b } = withStateNote(4, { tags: ['state', 'work'] });
    b.add({ createdAt: addDays(START, 200), embedding: b.direction() });
    b.add({ createdAt: addDays(START, 210), tags: ['state'], embedding: b.direction() });
    // #work is on more notes than maxRelatedTagNotes allows.
    for (let i = 0; i < 3; i++) b.add({ createdAt: addDays(START, 220 + i), tags: ['work'], embedding: b.direction() });
    const narrow = resolveEngineConfig({ staleState: { maxRelatedTagNotes: 3 } });
    assert.deepEqual(detectStaleStates(b.notes, narrow), []);
    assert.equal(detectStaleStates(b.notes, cfg).length, 1, 'with the default cap #work does relate them');
  });

  it('keys by state note and version: an edit makes later staleness a new signal', () => {
    const { b, state } = withStateNote(5);
    b.add({ createdAt: addDays(START, 150), links: [state.id], embedding: b.direction() });
    const [before] = detectStaleStates(b.notes, cfg);
    assert.equal(detectStaleStates([...b.notes].reverse(), cfg)[0]!.key, before!.key);
    const edited = b.notes.map((n) => (n.id === state.id ? { ...n, updatedAt: addDays(START, 160) } : n));
    assert.deepEqual(detectStaleStates(edited, cfg), [], 'the edit caught up with the newer note');
    edited.push(b.add({ createdAt: addDays(START, 170), links: [state.id], embedding: b.direction() }));
    const [after] = detectStaleStates(edited, cfg);
    assert.notEqual(after!.key, before!.key);
  });

  it('honours minNewerNotes', () => {
    const { b, state } = withStateNote(6);
    b.add({ createdAt: addDays(START, 150), links: [state.id], embedding: b.direction() });
    assert.deepEqual(detectStaleStates(b.notes, resolveEngineConfig({ staleState: { minNewerNotes: 2 } })), []);
  });
});

describe('isStateNote', () => {
  const note = (frontMatter: Record<string, unknown>, tags: string[] = []) =>
    new CorpusBuilder(1).add({ createdAt: START, frontMatter, tags });
  it('reads front matter type (any case, or in a list) and the state tag', () => {
    assert.equal(isStateNote(note({ type: 'State' }), cfg), true);
    assert.equal(isStateNote(note({ type: ['project', 'state'] }), cfg), true);
    assert.equal(isStateNote(note({}, ['#State']), cfg), true);
    assert.equal(isStateNote(note({ type: 'journal' }), cfg), false);
    assert.equal(isStateNote(note({ status: 'state' }), cfg), false);
  });
});
