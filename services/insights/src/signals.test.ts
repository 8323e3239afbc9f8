import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { ItemsDelete, NotesPut, SignalsList, type ResultOf } from '@memex/contracts';
import { readLog } from '@memex/bus';
import { addDays, around, blend, CorpusBuilder } from './domain/engine/synthetic.js';
import { startInsights, type InsightsHarness } from './testing/harness.js';

const START = new Date('2021-01-01T00:00:00Z');
type Listed = ResultOf<typeof SignalsList>;

const sorted = (ids: Iterable<string>): string[] => [...ids].sort();
const memexIds = (ids: Map<string, string>, generated: string[]): string[] =>
  sorted(generated.map((id) => ids.get(id)!));
const ofKind = (listed: Listed, kind: string) => listed.signals.filter((s) => s.kind === kind);
const noteIdsOf = (signal: Listed['signals'][number]) => sorted(signal.notes.map((n) => n.id));

/** A corpus over three years: 200 unrelated notes, the noise each detector must see through. */
function background(seed: number): CorpusBuilder {
  const b = new CorpusBuilder(seed);
  b.background(200, START, addDays(START, 3 * 365));
  return b;
}

describe('hidden_arc through the service', () => {
  let h: InsightsHarness;
  before(async () => {
    h = await startInsights();
  });
  after(async () => h.stop());

  test('fires on a 6-note unlinked thread over 400 days; a note without a vector is left out and counted', async () => {
    const b = background(1);
    const arc = b.cluster(b.direction(), 6, addDays(START, 30), 400);
    const ids = await h.feed(b.notes);
    const put = await h.call(NotesPut, { title: 'Written, not embedded yet', body: 'no vector yet' });

    const listed = await h.call(SignalsList, { min_seq: put.seq });
    assert.equal(listed.detection.ran, true);
    assert.equal(listed.detection.notes, 207);
    assert.equal(listed.detection.unembedded_notes, 1);
    assert.equal(listed.detection.space, 'test-vectors@1');
    const [signal, ...others] = ofKind(listed, 'hidden_arc');
    assert.deepEqual(others, []);
    assert.deepEqual(noteIdsOf(signal!), memexIds(ids, arc));
    assert.equal(signal!.status, 'new');
    assert.equal(signal!.detail['spanDays'], 400);
    assert.match(
      signal!.text,
      /^6 notes over 400 days \(2021-01-31 to 2022-03-07\) belong together but are never linked: "Note n/,
    );
    assert.equal(listed.counts['hidden_arc']!.new, 1);
  });

  test('the second read finds nothing changed and skips detection', async () => {
    const first = await h.call(SignalsList, {});
    const second = await h.call(SignalsList, {});
    assert.equal(second.detection.ran, false);
    assert.equal(second.detection.fingerprint, first.detection.fingerprint);
    assert.deepEqual(second.signals, first.signals);
  });
});

describe('hidden_arc near-misses through the service', () => {
  let h: InsightsHarness;
  before(async () => {
    h = await startInsights();
  });
  after(async () => h.stop());

  test('an arc of 3 notes, a 10-note topic within 90 days, and a hub note linking two arcs', async () => {
    const b = background(2);
    b.cluster(b.direction(), 3, START, 500);
    b.cluster(b.direction(), 10, addDays(START, 300), 90);
    const [dirA, dirB] = [b.direction(), b.direction()];
    const arcA = b.cluster(dirA, 6, START, 400);
    const arcB = b.cluster(dirB, 6, addDays(START, 100), 400);
    b.add({ createdAt: addDays(START, 200), embedding: blend(dirA, dirB), links: [...arcA, ...arcB] });
    const ids = await h.feed(b.notes);

    const arcs = ofKind(await h.call(SignalsList, {}), 'hidden_arc').map(noteIdsOf);
    // The two arcs come out apart (the hub merges nothing); the short thread and the topic not at all.
    assert.deepEqual(arcs.sort(), [memexIds(ids, arcA), memexIds(ids, arcB)].sort());
  });
});

describe('stale_state, dangling_link and tag_burst through the service', () => {
  let h: InsightsHarness;
  let ids: Map<string, string>;
  const b = background(3);
  const direction = b.direction();
  // A state note updated at day 100, with a note linking to it created at day 150: stale.
  const state = b.add({
    title: 'Job search: where things stand',
    createdAt: START,
    updatedAt: addDays(START, 100),
    frontMatter: { type: 'state' },
    embedding: around(b.rng, direction, 0.3),
  });
  const newer = b.add({ createdAt: addDays(START, 150), links: [state.title], embedding: b.direction() });
  // Near-miss: a state note whose related notes are all older than its last update.
  const fresh = b.add({
    title: 'Garden: current plan',
    createdAt: START,
    updatedAt: addDays(START, 300),
    frontMatter: { type: 'state' },
    embedding: b.direction(),
  });
  b.add({ createdAt: addDays(START, 200), links: [fresh.title], embedding: b.direction() });
  // A link to a note nobody wrote yet.
  const asking = b.add({ createdAt: addDays(START, 20), links: ['Reading list 2024'], embedding: b.direction() });
  // A tag dormant for 8 months then back in a burst; a tag used steadily every two weeks.
  const tagged = (tag: string, days: number[]) =>
    days.map((d) => b.add({ createdAt: addDays(START, d), tags: [tag], embedding: b.direction() }).id);
  const early = tagged('woodworking', [0, 10, 20]);
  const burst = tagged('woodworking', [260, 265, 280]);
  tagged(
    'running',
    Array.from({ length: 40 }, (_, i) => i * 14),
  );

  before(async () => {
    h = await startInsights();
    ids = await h.feed(b.notes);
  });
  after(async () => h.stop());

  test('each fires on its corpus and not on its near-miss', async () => {
    const listed = await h.call(SignalsList, {});
    const [stale, ...otherStale] = ofKind(listed, 'stale_state');
    assert.deepEqual(otherStale, [], 'the state note updated after its related notes is not stale');
    assert.deepEqual(
      stale!.notes.map((n) => n.id),
      [ids.get(state.id), ids.get(newer.id)],
    );
    assert.match(
      stale!.text,
      /^state note "Job search: where things stand" \(updated 2021-04-11\) has 1 newer related note/,
    );

    const [dangling, ...otherDangling] = ofKind(listed, 'dangling_link');
    assert.deepEqual(otherDangling, []);
    assert.deepEqual(
      dangling!.notes.map((n) => n.id),
      [ids.get(asking.id)],
    );
    assert.equal(dangling!.text, `[[Reading list 2024]] names no note; linked from "${asking.title}"`);

    const [revival, ...otherBursts] = ofKind(listed, 'tag_burst');
    assert.deepEqual(otherBursts, [], 'a tag used steadily never bursts');
    assert.deepEqual(
      revival!.notes.map((n) => n.id),
      [early[2]!, ...burst].map((id) => ids.get(id)),
    );
    assert.equal(revival!.detail['tag'], 'woodworking');
  });

  test('the dangling link is gone once its note is written; the stale state once it is updated', async () => {
    await h.call(NotesPut, { title: 'Reading List 2024', body: 'Books to read.' });
    const put = await h.call(NotesPut, {
      id: ids.get(state.id)!,
      title: state.title,
      body: `---\ntype: state\ndate: ${START.toISOString()}\nupdated: ${addDays(START, 160).toISOString()}\n---\nStill looking.`,
    });
    const listed = await h.call(SignalsList, { min_seq: put.seq });
    assert.equal(listed.detection.ran, true);
    assert.deepEqual(ofKind(listed, 'dangling_link'), []);
    assert.deepEqual(ofKind(listed, 'stale_state'), []);
    const all = await h.call(SignalsList, { status: 'all', kinds: ['dangling_link', 'stale_state'] });
    assert.deepEqual(all.signals.map((s) => `${s.kind} present=${s.present}`).sort(), [
      'dangling_link present=false',
      'stale_state present=false',
    ]);
  });

  test('a deleted note leaves its signals', async () => {
    const deleted = await h.call(ItemsDelete, { id: ids.get(burst[0]!)! });
    const listed = await h.call(SignalsList, { min_seq: deleted.seq });
    assert.equal(listed.detection.ran, true);
    const revival = ofKind(listed, 'tag_burst')[0];
    assert.ok(!revival?.notes.some((n) => n.id === ids.get(burst[0]!)));
  });

  test('tags and link targets are on the log only as hashes: once their notes are gone, nothing shows them', async () => {
    const detected: string[] = [];
    for await (const { event } of readLog(h.bus, { filter: 'memex.evt.signals.detected.>', untilCaughtUp: true })) {
      detected.push(JSON.stringify(event));
    }
    assert.ok(detected.some((event) => event.includes('tag_sha256')));
    assert.ok(detected.every((event) => !/woodworking|reading list/i.test(event)));

    const deleted = await h.call(ItemsDelete, { id: ids.get(asking.id)! });
    const all = await h.call(SignalsList, { min_seq: deleted.seq, status: 'all', kinds: ['dangling_link'] });
    const [gone] = all.signals.filter((s) => s.notes.length === 0);
    assert.equal(gone?.detail['target'], '(deleted)');
    assert.match(gone?.text ?? '', /^\[\[\(deleted\)\]\] names no note; linked from "\(deleted note \w+\)"$/);
  });
});

describe('detection longer than a read may wait', () => {
  let h: InsightsHarness;
  before(async () => {
    // A read waits half the request timeout for detection: here 1 ms, so it always goes on in the background.
    h = await startInsights({ config: { rpcTimeoutMs: 2 } });
  });
  after(async () => h.stop());

  test('answers with the last run’s signals while detecting, and stores the run when done', async () => {
    const targetsOf = (listed: Listed) => listed.signals.map((s) => String(s.detail['target'])).sort();
    let settled: string[] = [];
    let sawRunning = 0;
    // A small run may still finish between the read's wait and its query: then it must show as
    // merged, never as running beside its own signals. Rounds until a read caught one running.
    for (let round = 1; round <= 5 && sawRunning === 0; round++) {
      const target = `Elsewhere ${round}`;
      const put = await h.call(NotesPut, { title: `Question ${round}`, body: `What is [[${target}]]?` });
      const first = await h.call(SignalsList, { min_seq: put.seq });
      if (first.detection.running) {
        sawRunning++;
        assert.deepEqual(targetsOf(first), settled, 'while detecting, the last run’s signals');
      } else {
        assert.ok(targetsOf(first).includes(target), 'a run reported done is merged');
      }
      let later = first;
      for (let i = 0; i < 100 && later.detection.running; i++) {
        await sleep(100);
        later = await h.call(SignalsList, {});
      }
      assert.equal(later.detection.running, false);
      settled = [...settled, target].sort();
      assert.deepEqual(targetsOf(later), settled);
    }
    assert.equal(sawRunning, 1, 'some read answered while detection went on');
  });
});
