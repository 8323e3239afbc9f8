import type { Signal } from './types.js';

export type SignalStatus = 'new' | 'snoozed' | 'dismissed' | 'minted';

/** Triage state kept per signal key beside the latest detection of it. */
export interface TriageState {
  status: SignalStatus;
  /** Set only while snoozed. */
  snoozedUntil: Date | null;
  firstDetectedAt: Date;
  statusChangedAt: Date | null;
  /** Whether the latest detection still finds this pattern (judged rows are kept when it vanishes, so they never come back). */
  present: boolean;
  /** Key of the row the user judged when this hidden_arc took its status over (see applyDetection). */
  inheritedFrom: string | null;
  /**
   * The notes the signal had when the user last judged it (dismiss, snooze,
   * mint), carried over by inheritance: a grown arc is compared with what
   * the user actually saw, not with an earlier inherited version.
   */
  judgedNoteIds: string[] | null;
  /** The inference minted from it. */
  inferenceId: number | null;
}

export type StoredSignal = Signal & TriageState;

export type TriageAction =
  | { type: 'dismiss' }
  | { type: 'snooze'; until: Date }
  | { type: 'mint'; inferenceId: number }
  /** Undo a dismissal or snooze. */
  | { type: 'reopen' };

export class TriageError extends Error {
  constructor(
    readonly signalKey: string,
    message: string,
  ) {
    super(`signal ${signalKey}: ${message}`);
    this.name = 'TriageError';
  }
}

/** A snooze whose `until` has passed reads as `new`. */
export function effectiveStatus(signal: TriageState, now: Date): SignalStatus {
  return signal.status === 'snoozed' && signal.snoozedUntil !== null && signal.snoozedUntil <= now
    ? 'new'
    : signal.status;
}

/** Signals waiting for the user: still detected and not judged (or back from a snooze). */
export function isPending(signal: StoredSignal, now: Date): boolean {
  return signal.present && effectiveStatus(signal, now) === 'new';
}

/**
 * The triage state machine. Legal moves (from the effective status):
 *   new, snoozed → dismissed | snoozed (until > now) | minted
 *   dismissed, snoozed → new (reopen)
 * minted is final: the inference carries the judgement from there.
 */
export function transitionSignal(signal: StoredSignal, action: TriageAction, now: Date): StoredSignal {
  const from = effectiveStatus(signal, now);
  const fail = (why: string): never => {
    throw new TriageError(signal.key, `cannot ${action.type} a ${from} signal: ${why}`);
  };
  const to = (status: SignalStatus, extra: Partial<TriageState> = {}): StoredSignal => ({
    ...signal,
    status,
    snoozedUntil: null,
    statusChangedAt: now,
    inheritedFrom: null,
    judgedNoteIds: status === 'new' ? null : [...signal.noteIds],
    ...extra,
  });
  if (from === 'minted') fail(`it was minted as inference #${signal.inferenceId}`);
  switch (action.type) {
    case 'dismiss':
      if (from === 'dismissed') fail('it is already dismissed');
      return to('dismissed');
    case 'snooze':
      if (from === 'dismissed') fail('reopen it first');
      if (!(action.until instanceof Date) || Number.isNaN(action.until.getTime())) fail('the until date is invalid');
      if (action.until <= now) fail(`until (${action.until.toISOString()}) must be after now (${now.toISOString()})`);
      return to('snoozed', { snoozedUntil: action.until });
    case 'mint':
      if (from === 'dismissed') fail('reopen it first');
      if (!Number.isInteger(action.inferenceId) || action.inferenceId < 1) {
        fail(`inference id must be a positive integer, got ${action.inferenceId}`);
      }
      return to('minted', { inferenceId: action.inferenceId });
    case 'reopen':
      if (from === 'new') fail('it is not dismissed or snoozed');
      return to('new');
  }
}

export interface DetectionUpdate {
  /** Rows to insert or overwrite, by key. */
  upserts: StoredSignal[];
  /** Rows that stay exactly as stored. */
  unchanged: StoredSignal[];
}

/**
 * Merges a detection run into the stored signals:
 * - a detected key already stored keeps its triage (dismissed and minted stay
 *   so; a snooze past its `until` becomes new) and takes the fresh evidence;
 * - a new key starts as `new`, except a hidden_arc most of whose notes
 *   (strictly more than half) the user already judged in a stored arc
 *   (dismissed, minted or still snoozed; compared with judgedNoteIds): it
 *   inherits that judgement, so an arc that merely grew or shrank does not
 *   resurface, while a thread that is mostly new does, however many runs
 *   it took to grow;
 * - a stored key no longer detected is kept with present = false (never
 *   deleted, so a judgement outlives the pattern's temporary absence).
 */
export function applyDetection(
  existing: readonly StoredSignal[],
  detected: readonly Signal[],
  now: Date,
): DetectionUpdate {
  const stored = new Map(existing.map((s) => [s.key, s]));
  const upserts: StoredSignal[] = [];
  const unchanged: StoredSignal[] = [];
  const settle = (before: StoredSignal, after: StoredSignal): void => {
    if (sameRow(before, after)) unchanged.push(before);
    else upserts.push(after);
  };
  const judgedArcs = judgedArcIndex(existing, now);
  const seen = new Set<string>();
  for (const signal of detected) {
    if (seen.has(signal.key)) throw new Error(`applyDetection: signal key ${signal.key} detected twice`);
    seen.add(signal.key);
    const before = stored.get(signal.key);
    if (before) {
      settle(before, { ...before, ...signal, ...wakeIfDue(before, now), present: true } as StoredSignal);
      continue;
    }
    const parent = signal.kind === 'hidden_arc' ? judgedPredecessor(signal.noteIds, judgedArcs) : undefined;
    const triage: TriageState = {
      status: parent?.status ?? 'new',
      snoozedUntil: parent?.snoozedUntil ?? null,
      statusChangedAt: parent ? now : null,
      inheritedFrom: parent ? (parent.inheritedFrom ?? parent.key) : null,
      judgedNoteIds: parent ? (parent.judgedNoteIds ?? parent.noteIds) : null,
      inferenceId: parent?.inferenceId ?? null,
      firstDetectedAt: now,
      present: true,
    };
    upserts.push({ ...signal, ...triage } as StoredSignal);
  }
  for (const before of existing) {
    if (seen.has(before.key)) continue;
    settle(before, { ...before, ...wakeIfDue(before, now), present: false });
  }
  return { upserts, unchanged };
}

function wakeIfDue(signal: StoredSignal, now: Date): Partial<TriageState> {
  return signal.status === 'snoozed' && effectiveStatus(signal, now) === 'new'
    ? { status: 'new', snoozedUntil: null, statusChangedAt: now }
    : {};
}

/** noteId → the judged stored hidden_arcs whose judged notes include it. */
function judgedArcIndex(existing: readonly StoredSignal[], now: Date): Map<string, StoredSignal[]> {
  const index = new Map<string, StoredSignal[]>();
  for (const s of existing) {
    if (s.kind !== 'hidden_arc' || effectiveStatus(s, now) === 'new') continue;
    for (const id of s.judgedNoteIds ?? s.noteIds) {
      const list = index.get(id);
      if (list) list.push(s);
      else index.set(id, [s]);
    }
  }
  return index;
}

/** The judged arc sharing the most judged notes with `noteIds` (ties: smallest key), if they are more than half of them. */
function judgedPredecessor(noteIds: readonly string[], index: Map<string, StoredSignal[]>): StoredSignal | undefined {
  const overlap = new Map<StoredSignal, number>();
  for (const id of noteIds) for (const s of index.get(id) ?? []) overlap.set(s, (overlap.get(s) ?? 0) + 1);
  let best: StoredSignal | undefined;
  let bestCount = 0;
  for (const [s, count] of overlap) {
    if (count > bestCount || (count === bestCount && best !== undefined && s.key < best.key)) {
      best = s;
      bestCount = count;
    }
  }
  return bestCount * 2 > noteIds.length ? best : undefined;
}

function sameRow(a: StoredSignal, b: StoredSignal): boolean {
  return (
    a.status === b.status &&
    a.snoozedUntil?.getTime() === b.snoozedUntil?.getTime() &&
    a.statusChangedAt?.getTime() === b.statusChangedAt?.getTime() &&
    a.present === b.present &&
    a.inheritedFrom === b.inheritedFrom &&
    JSON.stringify(a.judgedNoteIds) === JSON.stringify(b.judgedNoteIds) &&
    a.inferenceId === b.inferenceId &&
    a.score === b.score &&
    sameIds(a.noteIds, b.noteIds) &&
    JSON.stringify(a.detail) === JSON.stringify(b.detail)
  );
}

function sameIds(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((id, i) => id === b[i]);
}
