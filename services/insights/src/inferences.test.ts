import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  ContextBrief,
  InferencesGet,
  InferencesList,
  InferencesMint,
  InferencesRemint,
  ItemsDelete,
  ItemsGet,
  MemexError,
  NotesPut,
  Search,
} from '@memex/contracts';
import { readLog } from '@memex/bus';
import { GraphModule } from '@memex/graph';
import { PipelinesModule } from '@memex/pipelines';
import { SearchModule } from '@memex/search';
import { agent, startInsights, type InsightsHarness } from './testing/harness.js';

const synthesis = { summary: 'Both notes say so.', confidence: 0.78, model_id: 'claude-test' };

describe('inferences: provenance and invalidation on read', () => {
  let h: InsightsHarness;
  const notes: Record<'sleep' | 'mood' | 'coffee', string> = { sleep: '', mood: '', coffee: '' };

  before(async () => {
    h = await startInsights();
    for (const name of Object.keys(notes) as Array<keyof typeof notes>) {
      notes[name] = (await h.call(NotesPut, { title: `On ${name}`, body: `Notes on ${name}.` })).id;
    }
  });
  after(async () => h.stop());

  test('minted with small ids in order; cited as a hypothesis with its sources; unknown sources refused', async () => {
    const first = await h.call(InferencesMint, {
      ...synthesis,
      title: 'Short sleep precedes low mood',
      sources: [notes.sleep, notes.mood],
    });
    assert.equal(first.id, 1);
    assert.equal(first.citation, `[Inference #1, conf 0.78, from notes #${notes.sleep}, #${notes.mood}]`);
    const second = await h.call(InferencesMint, { ...synthesis, title: 'Coffee helps', sources: [notes.coffee] });
    assert.equal(second.id, 2);
    await assert.rejects(
      h.call(InferencesMint, { ...synthesis, title: 'x', sources: [notes.sleep, '01J00000000000000000000000'] }),
      (error: MemexError) => error.code === 'not_found' && /no note 01J00000000000000000000000/.test(error.message),
    );
    await assert.rejects(h.call(InferencesMint, { ...synthesis, title: 'x' }), /give the source notes/);
    await assert.rejects(
      h.call(InferencesMint, { ...synthesis, title: 'x', sources: [notes.sleep, notes.sleep] }),
      /is cited twice/,
    );
    const got = await h.call(InferencesGet, { id: 1, min_seq: second.seq });
    assert.equal(got.status, 'active');
    assert.deepEqual(
      got.sources.map((s) => [s.note_id, s.title, s.mark]),
      [
        [notes.sleep, 'On sleep', ' '],
        [notes.mood, 'On mood', ' '],
      ],
    );
    assert.equal(got.made_by, 'owner');
  });

  test('an edited source makes it stale (~ on that source); a deleted one orphaned (✗, evidence kept)', async () => {
    const edit = await h.call(NotesPut, { id: notes.sleep, title: 'On sleep', body: 'Notes on sleep, revised.' });
    const stale = await h.call(InferencesGet, { id: 1, min_seq: edit.seq });
    assert.equal(stale.status, 'stale');
    assert.deepEqual(
      stale.sources.map((s) => s.mark),
      ['~', ' '],
    );
    assert.equal(stale.citation, `[Inference #1, conf 0.78, from notes ~#${notes.sleep}, #${notes.mood}] [!] STALE`);
    assert.match(stale.card, /^\[!\] STALE {2}Inference #1: Short sleep precedes low mood\n/);
    assert.notEqual(stale.sources[0]!.current_hash, stale.sources[0]!.snapshot_hash);

    const deletion = await h.call(ItemsDelete, { id: notes.mood });
    const orphaned = await h.call(InferencesGet, { id: 1, min_seq: deletion.seq });
    assert.equal(orphaned.status, 'orphaned');
    assert.deepEqual(
      orphaned.sources.map((s) => [s.mark, s.title, s.current_hash]),
      [
        ['~', 'On sleep', stale.sources[0]!.current_hash],
        ['✗', 'On mood', null],
      ],
    );
    assert.equal(orphaned.sources[1]!.snapshot_hash, stale.sources[1]!.snapshot_hash, 'the evidence row is kept');
    assert.match(orphaned.card, /✗ #\S+ {2}deleted \(evidence kept: hash [0-9a-f]{12} at mint\)/);

    const flagged = await h.call(InferencesList, { status: 'flagged' });
    assert.deepEqual(
      flagged.inferences.map((i) => [i.id, i.status]),
      [[1, 'orphaned']],
    );
    assert.deepEqual(
      (await h.call(InferencesList, { status: 'active' })).inferences.map((i) => i.id),
      [2],
    );
  });

  test('re-minting returns it to active; a deleted source must be left out', async () => {
    await assert.rejects(h.call(InferencesRemint, { id: 1 }), new RegExp(`no note ${notes.mood}`));
    const reminted = await h.call(InferencesRemint, {
      id: 1,
      summary: 'Only the sleep notes remain; still plausible.',
      confidence: 0.6,
      sources: [notes.sleep],
    });
    assert.equal(reminted.revision, 2);
    const active = await h.call(InferencesGet, { id: 1, min_seq: reminted.seq });
    assert.equal(active.status, 'active');
    assert.equal(active.title, 'Short sleep precedes low mood');
    assert.equal(active.summary, 'Only the sleep notes remain; still plausible.');
    assert.equal(active.citation, `[Inference #1, conf 0.60, from notes #${notes.sleep}]`);
    await assert.rejects(h.call(InferencesGet, { id: 99 }), /no inference #99/);
  });

  test('an agent sees, cites and mints only from notes in its scope', async () => {
    const secret = await h.call(NotesPut, { title: 'Diagnosis', body: 'Private.', labels: ['health'] });
    const mixed = await h.call(InferencesMint, {
      ...synthesis,
      title: 'Health and coffee',
      sources: [notes.coffee, secret.id],
    });
    const work = agent(['work']);
    const seen = await h.call(InferencesList, { min_seq: mixed.seq }, work);
    assert.deepEqual(
      seen.inferences.map((i) => i.id),
      [2, 1],
    );
    await assert.rejects(h.call(InferencesGet, { id: mixed.id }, work), /no inference/);
    assert.equal((await h.call(InferencesGet, { id: mixed.id }, agent(['health']))).id, mixed.id);
    await assert.rejects(
      h.call(InferencesMint, { ...synthesis, title: 'x', sources: [secret.id] }, work),
      new RegExp(`no note ${secret.id}`),
    );
    const own = await h.call(InferencesMint, { ...synthesis, title: 'Coffee, again', sources: [notes.coffee] }, work);
    assert.equal((await h.call(InferencesGet, { id: own.id, min_seq: own.seq })).made_by, 'token:agent-work');
  });
});

describe('inferences stay apart from notes: search and briefs never return them', () => {
  let h: InsightsHarness;
  before(async () => {
    h = await startInsights({
      services: [
        (config) => PipelinesModule.register(config, { workers: 1 }),
        (config) => SearchModule.register(config),
        (config) => GraphModule.register(config),
      ],
    });
  });
  after(async () => h.stop());

  test('an inference is in the log but in no item, search hit or brief line', async () => {
    const note = await h.call(NotesPut, { title: 'Zebra sightings', body: 'Saw zebras at the waterhole twice.' });
    const minted = await h.call(InferencesMint, {
      title: 'Zebras return to the waterhole xylophonically',
      summary: 'A quuxinferential pattern across sightings.',
      confidence: 0.5,
      model_id: 'claude-test',
      sources: [note.id],
    });
    // The note is found (search works), and by then search has read past the inference.
    let hits: string[] = [];
    for (let i = 0; i < 120 && !hits.includes(note.id); i++) {
      hits = (await h.call(Search, { q: 'zebra', min_seq: minted.seq })).hits.map((hit) => hit.id);
      if (!hits.includes(note.id)) await sleep(250);
    }
    assert.deepEqual(hits, [note.id]);
    for (const q of ['xylophonically', 'quuxinferential']) {
      assert.deepEqual((await h.call(Search, { q, mode: 'keyword' })).hits, [], q);
    }
    const meaning = await h.call(Search, { q: 'zebras return to the waterhole', mode: 'meaning' });
    assert.ok(meaning.hits.every((hit) => hit.id === note.id));

    const brief = await h.call(ContextBrief, {
      labels: [],
      text: 'zebra xylophonically quuxinferential',
      min_seq: minted.seq,
    });
    assert.ok(
      brief.lines.some((line) => line.refs.includes(`item:${note.id}`)),
      brief.text,
    );
    assert.doesNotMatch(brief.text, /xylophonically|quuxinferential/);

    // No item was made of it: the only items are the note, and the inference is only an inference.minted event.
    await assert.rejects(h.call(ItemsGet, { id: String(minted.id) }), /no item/);
    const types: string[] = [];
    for await (const { event } of readLog(h.bus, { untilCaughtUp: true })) {
      if (JSON.stringify(event.data).includes('xylophonically')) types.push(event.type);
    }
    assert.deepEqual(types, ['inference.minted']);
  });
});
