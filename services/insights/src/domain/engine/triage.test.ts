import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DEFAULT_ENGINE_CONFIG } from './config.js';
import { detectAll } from './detect.js';
import { addDays, CorpusBuilder } from './synthetic.js';
import {
  applyDetection,
  effectiveStatus,
  isPending,
  transitionSignal,
  TriageError,
  type StoredSignal,
} from './triage.js';
import type { Signal } from './types.js';

const T0 = new Date('2024-03-01T09:00:00Z');
const START = new Date('2021-01-01T00:00:00Z');

/** A stored table kept the way the service would: apply every upsert by key. */
class Table {
  rows = new Map<string, StoredSignal>();
  apply(detected: Signal[], now: Date): ReturnType<typeof applyDetection> {
    const update = applyDetection([...this.rows.values()], detected, now);
    for (const row of update.upserts) this.rows.set(row.key, row);
    return update;
  }
  act(key: string, action: Parameters<typeof transitionSignal>[1], now: Date): StoredSignal {
    const row = transitionSignal(this.get(key), action, now);
    this.rows.set(key, row);
    return row;
  }
  get(key: string): StoredSignal {
    const row = this.rows.get(key);
    if (!row) throw new Error(`no row ${key}`);
    return row;
  }
  pending(now: Date): string[] {
    return [...this.rows.values()].filter((r) => isPending(r, now)).map((r) => r.key);
  }
}

/** A corpus with one dangling link and one hidden arc whose direction can grow it later. */
function corpus() {
  const b = new CorpusBuilder(1);
  b.background(150, START, addDays(START, 900));
  const center = b.direction();
  const arc = b.cluster(center, 6, START, 400);
  b.add({ createdAt: START, links: ['Nowhere'] });
  return { b, center, arc };
}

describe('applyDetection', () => {
  it('stores new signals as new, and an unchanged re-run changes nothing', () => {
    const { b } = corpus();
    const table = new Table();
    const first = table.apply(detectAll(b.notes, DEFAULT_ENGINE_CONFIG), T0);
    assert.deepEqual(first.upserts.map((r) => r.kind).sort(), ['dangling_link', 'hidden_arc']);
    for (const row of first.upserts) {
      assert.equal(row.status, 'new');
      assert.equal(row.present, true);
      assert.deepEqual(row.firstDetectedAt, T0);
    }
    const again = table.apply(detectAll(b.notes, DEFAULT_ENGINE_CONFIG), addDays(T0, 1));
    assert.deepEqual(again.upserts, []);
    assert.equal(again.unchanged.length, 2);
  });

  it('dismiss, then re-run: the signal does not come back', () => {
    const { b } = corpus();
    const table = new Table();
    table.apply(detectAll(b.notes, DEFAULT_ENGINE_CONFIG), T0);
    const arcKey = [...table.rows.values()].find((r) => r.kind === 'hidden_arc')!.key;
    table.act(arcKey, { type: 'dismiss' }, T0);
    b.add({ createdAt: addDays(START, 950), links: ['Elsewhere'] });
    const rerun = table.apply(detectAll(b.notes, DEFAULT_ENGINE_CONFIG), addDays(T0, 30));
    assert.equal(table.get(arcKey).status, 'dismissed');
    assert.ok(!rerun.upserts.some((r) => r.key === arcKey));
    assert.ok(!table.pending(addDays(T0, 30)).includes(arcKey));
    assert.equal(table.pending(addDays(T0, 30)).length, 2, 'the two dangling links are still pending');
  });

  it('snooze until a date: hidden before it, back as new after it', () => {
    const { b } = corpus();
    const table = new Table();
    table.apply(detectAll(b.notes, DEFAULT_ENGINE_CONFIG), T0);
    const key = [...table.rows.values()].find((r) => r.kind === 'dangling_link')!.key;
    const until = addDays(T0, 14);
    table.act(key, { type: 'snooze', until }, T0);
    table.apply(detectAll(b.notes, DEFAULT_ENGINE_CONFIG), addDays(T0, 13));
    assert.equal(table.get(key).status, 'snoozed');
    assert.ok(!table.pending(addDays(T0, 13)).includes(key));
    const after = table.apply(detectAll(b.notes, DEFAULT_ENGINE_CONFIG), addDays(T0, 15));
    assert.deepEqual(
      after.upserts.map((r) => [r.key, r.status, r.snoozedUntil]),
      [[key, 'new', null]],
    );
    assert.ok(table.pending(addDays(T0, 15)).includes(key));
    assert.deepEqual(table.get(key).firstDetectedAt, T0, 'first detection time survives');
  });

  it('mint: the signal becomes minted and stays so', () => {
    const { b } = corpus();
    const table = new Table();
    table.apply(detectAll(b.notes, DEFAULT_ENGINE_CONFIG), T0);
    const key = [...table.rows.values()].find((r) => r.kind === 'hidden_arc')!.key;
    const minted = table.act(key, { type: 'mint', inferenceId: 42 }, T0);
    assert.equal(minted.status, 'minted');
    assert.equal(minted.inferenceId, 42);
    table.apply(detectAll(b.notes, DEFAULT_ENGINE_CONFIG), addDays(T0, 1));
    assert.equal(table.get(key).status, 'minted');
  });

  it('keeps a judged signal that is no longer detected, marked not present', () => {
    const { b } = corpus();
    const table = new Table();
    table.apply(detectAll(b.notes, DEFAULT_ENGINE_CONFIG), T0);
    const key = [...table.rows.values()].find((r) => r.kind === 'dangling_link')!.key;
    table.act(key, { type: 'dismiss' }, T0);
    b.add({ title: 'Nowhere', createdAt: addDays(START, 1000) });
    const gone = table.apply(detectAll(b.notes, DEFAULT_ENGINE_CONFIG), addDays(T0, 1));
    assert.deepEqual(
      gone.upserts.map((r) => [r.key, r.present, r.status]),
      [[key, false, 'dismissed']],
    );
    // The link breaks again (note deleted): it comes back still dismissed.
    b.notes.pop();
    table.apply(detectAll(b.notes, DEFAULT_ENGINE_CONFIG), addDays(T0, 2));
    assert.deepEqual([table.get(key).present, table.get(key).status], [true, 'dismissed']);
  });

  it('a dismissed arc that gains a note stays dismissed (inherited); one that is mostly new surfaces', () => {
    const { b, center, arc } = corpus();
    const table = new Table();
    table.apply(detectAll(b.notes, DEFAULT_ENGINE_CONFIG), T0);
    const oldKey = [...table.rows.values()].find((r) => r.kind === 'hidden_arc')!.key;
    table.act(oldKey, { type: 'dismiss' }, T0);

    b.cluster(center, 1, addDays(START, 450), 0);
    const grown = table.apply(detectAll(b.notes, DEFAULT_ENGINE_CONFIG), addDays(T0, 1));
    const successor = grown.upserts.find((r) => r.kind === 'hidden_arc' && r.key !== oldKey)!;
    assert.equal(successor.noteIds.length, 7);
    assert.deepEqual([successor.status, successor.inheritedFrom], ['dismissed', oldKey]);
    assert.deepEqual(successor.judgedNoteIds, table.get(oldKey).noteIds);
    assert.equal(table.get(oldKey).present, false);

    // Five more: the 6 notes the user judged are not a majority of the 12, although the
    // 7-note successor (itself dismissed by inheritance) would be.
    b.cluster(center, 5, addDays(START, 500), 200);
    table.apply(detectAll(b.notes, DEFAULT_ENGINE_CONFIG), addDays(T0, 2));
    const fresh = [...table.rows.values()].find((r) => r.kind === 'hidden_arc' && r.present)!;
    assert.equal(fresh.noteIds.length, 12);
    assert.ok(arc.every((id) => fresh.noteIds.includes(id)));
    assert.deepEqual([fresh.status, fresh.inheritedFrom], ['new', null]);
  });

  it('rejects a detection listing one key twice', () => {
    const { b } = corpus();
    const [signal] = detectAll(b.notes, DEFAULT_ENGINE_CONFIG);
    assert.throws(() => applyDetection([], [signal!, signal!], T0), /detected twice/);
  });
});

describe('transitionSignal', () => {
  const { b } = corpus();
  const [fresh] = applyDetection([], detectAll(b.notes, DEFAULT_ENGINE_CONFIG), T0).upserts;
  const row = fresh!;

  it('moves new → snoozed → dismissed → new (reopen) → minted', () => {
    const snoozed = transitionSignal(row, { type: 'snooze', until: addDays(T0, 3) }, T0);
    assert.deepEqual([snoozed.status, snoozed.snoozedUntil], ['snoozed', addDays(T0, 3)]);
    const dismissed = transitionSignal(snoozed, { type: 'dismiss' }, addDays(T0, 1));
    assert.deepEqual(
      [dismissed.status, dismissed.snoozedUntil, dismissed.statusChangedAt],
      ['dismissed', null, addDays(T0, 1)],
    );
    const reopened = transitionSignal(dismissed, { type: 'reopen' }, addDays(T0, 2));
    assert.equal(reopened.status, 'new');
    assert.equal(transitionSignal(reopened, { type: 'mint', inferenceId: 7 }, addDays(T0, 2)).status, 'minted');
  });

  it('refuses illegal moves with an error naming the signal and the reason', () => {
    const dismissed = transitionSignal(row, { type: 'dismiss' }, T0);
    const minted = transitionSignal(row, { type: 'mint', inferenceId: 3 }, T0);
    const cases: [StoredSignal, Parameters<typeof transitionSignal>[1], RegExp][] = [
      [dismissed, { type: 'dismiss' }, /cannot dismiss a dismissed signal: it is already dismissed/],
      [dismissed, { type: 'mint', inferenceId: 1 }, /cannot mint a dismissed signal: reopen it first/],
      [dismissed, { type: 'snooze', until: addDays(T0, 1) }, /reopen it first/],
      [minted, { type: 'dismiss' }, /cannot dismiss a minted signal: it was minted as inference #3/],
      [minted, { type: 'reopen' }, /minted as inference #3/],
      [row, { type: 'reopen' }, /cannot reopen a new signal/],
      [row, { type: 'snooze', until: T0 }, /must be after now/],
      [row, { type: 'snooze', until: new Date('nope') }, /until date is invalid/],
      [row, { type: 'mint', inferenceId: 0 }, /positive integer/],
    ];
    for (const [signal, action, message] of cases) {
      assert.throws(
        () => transitionSignal(signal, action, T0),
        (e: unknown) => e instanceof TriageError && message.test(e.message) && e.message.includes(row.key),
        `${signal.status} + ${action.type}`,
      );
    }
  });

  it('treats an expired snooze as new', () => {
    const snoozed = transitionSignal(row, { type: 'snooze', until: addDays(T0, 1) }, T0);
    assert.equal(effectiveStatus(snoozed, addDays(T0, 1)), 'new');
    assert.throws(() => transitionSignal(snoozed, { type: 'reopen' }, addDays(T0, 2)), /cannot reopen a new signal/);
  });
});
