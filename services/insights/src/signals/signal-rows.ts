import type { Insertable, Selectable } from 'kysely';
import type { DetectedSignal } from '@memex/contracts';
import type { Signal, SignalStatus, StoredSignal } from '../engine/index.js';
import type { SignalsTable } from '../projection/schema.js';

/** A signal as the event carries it → as the engine sees it (the detail is the engine's own, round-tripped). */
export function fromEvent(signal: DetectedSignal): Signal {
  return {
    key: signal.key,
    kind: signal.kind,
    noteIds: signal.note_ids,
    score: signal.score,
    detail: signal.detail,
  } as unknown as Signal;
}

export function toEvent(signal: Signal): DetectedSignal {
  return {
    key: signal.key,
    kind: signal.kind,
    note_ids: signal.noteIds,
    score: signal.score,
    detail: signal.detail as unknown as Record<string, unknown>,
  };
}

export function toStored(row: Selectable<SignalsTable>): StoredSignal {
  return {
    key: row.key,
    kind: row.kind,
    noteIds: row.note_ids,
    score: row.score,
    detail: row.detail,
    status: row.status as SignalStatus,
    snoozedUntil: row.snoozed_until,
    firstDetectedAt: row.first_detected_at,
    statusChangedAt: row.status_changed_at,
    present: row.present,
    inheritedFrom: row.inherited_from,
    judgedNoteIds: row.judged_note_ids,
    inferenceId: row.inference_id,
  } as unknown as StoredSignal;
}

export function toRow(signal: StoredSignal, id: number): Insertable<SignalsTable> {
  return {
    key: signal.key,
    id,
    kind: signal.kind,
    note_ids: signal.noteIds,
    score: signal.score,
    detail: JSON.stringify(signal.detail),
    status: signal.status,
    snoozed_until: signal.snoozedUntil,
    first_detected_at: signal.firstDetectedAt,
    status_changed_at: signal.statusChangedAt,
    present: signal.present,
    inherited_from: signal.inheritedFrom,
    judged_note_ids: signal.judgedNoteIds,
    inference_id: signal.inferenceId,
  };
}
