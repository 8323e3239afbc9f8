import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  InferencesGet,
  MemexError,
  NotesPut,
  SignalsList,
  SignalsTriage,
  InferencesMint,
  type ResultOf,
} from '@memex/contracts';
import { ServiceHost } from '@memex/runtime';
import { agent, startInsights, type InsightsHarness } from './testing/harness.js';

type Signal = ResultOf<typeof SignalsList>['signals'][number];

describe('triage through the service', () => {
  let h: InsightsHarness;
  const byTarget = new Map<string, Signal>();
  let lastSeq = 0;

  /** Pending signals by dangling target, after the read model has applied the last write. */
  async function pending(): Promise<string[]> {
    const listed = await h.call(SignalsList, { min_seq: lastSeq });
    return listed.signals.map((s) => String(s.detail['target'])).sort();
  }

  /** A write that changes the notes, so the next read runs detection again. */
  async function touchNotes(): Promise<void> {
    lastSeq = (await h.call(NotesPut, { body: `unrelated ${lastSeq}` })).seq;
  }

  before(async () => {
    h = await startInsights();
    for (const target of ['Alpha', 'Beta', 'Gamma', 'Delta']) {
      lastSeq = (await h.call(NotesPut, { title: `asks about ${target}`, body: `What is [[${target}]]?` })).seq;
    }
    const listed = await h.call(SignalsList, { min_seq: lastSeq });
    for (const signal of listed.signals) byTarget.set(String(signal.detail['target']), signal);
    assert.deepEqual([...byTarget.keys()].sort(), ['Alpha', 'Beta', 'Delta', 'Gamma']);
  });
  after(async () => h.stop());

  test('dismissed, then detection runs again: it does not come back', async () => {
    const alpha = byTarget.get('Alpha')!;
    const dismissed = await h.call(SignalsTriage, { signal: String(alpha.id), action: 'dismiss' });
    assert.equal(dismissed.status, 'dismissed');
    lastSeq = dismissed.seq;
    await touchNotes();
    const listed = await h.call(SignalsList, { min_seq: lastSeq });
    assert.equal(listed.detection.ran, true);
    assert.ok(!listed.signals.some((s) => s.key === alpha.key));
    assert.equal(listed.counts['dangling_link']!.dismissed, 1);
    const judged = await h.call(SignalsList, { status: 'dismissed' });
    assert.deepEqual(
      judged.signals.map((s) => s.key),
      [alpha.key],
    );
    await assert.rejects(h.call(SignalsTriage, { signal: alpha.key, action: 'dismiss' }), (error: MemexError) => {
      assert.equal(error.code, 'conflict');
      assert.match(error.message, /cannot dismiss a dismissed signal: it is already dismissed/);
      return true;
    });
  });

  test('snoozed until a date: hidden until then, back after it', async () => {
    const beta = byTarget.get('Beta')!;
    await assert.rejects(h.call(SignalsTriage, { signal: beta.key, action: 'snooze' }), /snooze needs until/);
    await assert.rejects(
      h.call(SignalsTriage, { signal: beta.key, action: 'snooze', until: '2001-01-01' }),
      /must be after now/,
    );
    const until = new Date(Date.now() + 2500);
    lastSeq = (await h.call(SignalsTriage, { signal: beta.key, action: 'snooze', until: until.toISOString() })).seq;
    await touchNotes();
    assert.ok(!(await pending()).includes('Beta'));
    const snoozed = await h.call(SignalsList, { status: 'snoozed' });
    assert.deepEqual(
      snoozed.signals.map((s) => [s.key, s.snoozed_until]),
      [[beta.key, until.toISOString()]],
    );
    await sleep(until.getTime() - Date.now() + 100);
    assert.ok((await pending()).includes('Beta'), 'back once the date has passed');
  });

  test('minted from the signal: the signal reads minted and the inference cites its notes', async () => {
    const gamma = byTarget.get('Gamma')!;
    const minted = await h.call(InferencesMint, {
      signal: String(gamma.id),
      title: 'Gamma is a recurring open question',
      summary: 'Asked once, never answered.',
      confidence: 0.4,
      model_id: 'test-model',
    });
    lastSeq = minted.seq;
    assert.ok(!(await pending()).includes('Gamma'));
    const [signal] = (await h.call(SignalsList, { status: 'minted' })).signals;
    assert.equal(signal?.key, gamma.key);
    assert.equal(signal?.inference_id, minted.id);
    const inference = await h.call(InferencesGet, { id: minted.id });
    assert.equal(inference.signal_key, gamma.key);
    assert.deepEqual(
      inference.sources.map((s) => s.note_id),
      gamma.notes.map((n) => n.id),
    );
    await assert.rejects(
      h.call(InferencesMint, { signal: gamma.key, title: 't', summary: 's', confidence: 0.5, model_id: 'm' }),
      /cannot mint a minted signal/,
    );
    await assert.rejects(h.call(SignalsTriage, { signal: gamma.key, action: 'dismiss' }), /minted as inference #1/);
  });

  test('reopened after a dismissal: pending again', async () => {
    lastSeq = (await h.call(SignalsTriage, { signal: byTarget.get('Alpha')!.key, action: 'reopen' })).seq;
    assert.deepEqual(await pending(), ['Alpha', 'Beta', 'Delta']);
    await assert.rejects(h.call(SignalsTriage, { signal: '999', action: 'dismiss' }), /no signal 999/);
  });

  test('an agent sees and judges only signals whose notes are all in its scope', async () => {
    lastSeq = (await h.call(NotesPut, { title: 'Private', body: 'See [[Epsilon]].', labels: ['health'] })).seq;
    const owner = await h.call(SignalsList, { min_seq: lastSeq });
    const epsilon = owner.signals.find((s) => s.detail['target'] === 'Epsilon')!;
    assert.ok(epsilon);
    const work = agent(['work']);
    const seen = await h.call(SignalsList, {}, work);
    assert.ok(!seen.signals.some((s) => s.key === epsilon.key));
    assert.equal(seen.detection.notes, owner.detection.notes - 1);
    await assert.rejects(h.call(SignalsTriage, { signal: epsilon.key, action: 'dismiss' }, work), /no signal/);
    assert.ok((await h.call(SignalsList, {}, agent(['health']))).signals.some((s) => s.key === epsilon.key));
  });

  test('a replay rebuilds the same signals, judgements and inferences', async () => {
    const before = await h.call(SignalsList, { status: 'all' });
    const inference = await h.call(InferencesGet, { id: 1 });
    await h.insights.get(ServiceHost).projector!.rebuild(h.env.config.databaseUrl);
    const after = await h.call(SignalsList, { status: 'all' });
    assert.equal(after.detection.ran, false);
    assert.deepEqual(after.signals, before.signals);
    assert.deepEqual(await h.call(InferencesGet, { id: 1 }), inference);
  });
});
