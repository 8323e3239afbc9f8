import { createHash } from 'node:crypto';
import type { Insertable, Selectable } from 'kysely';
import type { DetectedSignal } from '@memex/contracts';
import {
  normalizeLinkTarget,
  normalizeTag,
  type Signal,
  type SignalStatus,
  type StoredSignal,
} from '../domain/engine/index.js';
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
    detail: redacted(signal),
  };
}

function textHash(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/**
 * A signal's detail without the notes' own words (a tag, a link target), which it names by hash
 * instead: the log and the read model outlive a deleted note, and its words must not (seed §9).
 * `revealed` finds the words again in the signal's notes when it is shown.
 */
function redacted(signal: Signal): Record<string, unknown> {
  switch (signal.kind) {
    case 'tag_burst': {
      const { tag, ...rest } = signal.detail;
      return { ...rest, tag_sha256: textHash(tag) };
    }
    case 'dangling_link': {
      const { target: _written, normalizedTarget, ...rest } = signal.detail;
      return { ...rest, target_sha256: textHash(normalizedTarget) };
    }
    default:
      return signal.detail as unknown as Record<string, unknown>;
  }
}

/** What a signal's notes wrote, as far as they still exist. */
export interface NoteWords {
  tags: string[];
  links: string[];
}

/** Shown in place of words whose every note is gone. */
export const GONE = '(deleted)';

/** A stored signal's detail with the tag or link target read back from its notes (in their order). */
export function revealed<S extends Signal>(signal: S, words: (noteId: string) => NoteWords | undefined): S {
  const detail = signal.detail as unknown as Record<string, unknown>;
  if (!('tag_sha256' in detail || 'target_sha256' in detail)) return signal; // nothing redacted
  const notes = signal.noteIds.flatMap((id) => words(id) ?? []);
  switch (signal.kind) {
    case 'tag_burst': {
      const { tag_sha256, ...rest } = detail;
      const tag = notes.flatMap((note) => note.tags.map(normalizeTag)).find((t) => textHash(t) === tag_sha256);
      return { ...signal, detail: { ...rest, tag: tag ?? GONE } };
    }
    case 'dangling_link': {
      const { target_sha256, ...rest } = detail;
      const written = notes
        .flatMap((note) => note.links)
        .find((link) => textHash(normalizeLinkTarget(link)) === target_sha256);
      const found =
        written === undefined ? {} : { target: written.trim(), normalizedTarget: normalizeLinkTarget(written) };
      return { ...signal, detail: { ...rest, target: GONE, normalizedTarget: GONE, ...found } };
    }
    default:
      return signal;
  }
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
