import type { EngineConfig } from './config.js';
import { asCorpus, normalizeTag, type Corpus } from './corpus.js';
import { byCreatedThenId, round4, signalKey } from './signal-util.js';
import type { EngineNote, StaleStateSignal } from './types.js';

/** A state note: front matter `type` (a string or a list) names a state type, or it carries a state tag. */
export function isStateNote(note: EngineNote, cfg: EngineConfig): boolean {
  const types = new Set(cfg.staleState.frontMatterTypes.map((t) => t.toLowerCase()));
  const declared = note.frontMatter['type'];
  const declaredTypes = Array.isArray(declared) ? declared : [declared];
  if (declaredTypes.some((t) => typeof t === 'string' && types.has(t.trim().toLowerCase()))) return true;
  const tags = new Set(cfg.staleState.tags.map(normalizeTag));
  return note.tags.some((t) => tags.has(normalizeTag(t)));
}

/**
 * stale_state: a state note with at least minNewerNotes related notes created
 * after its last update (relatedness: see EngineConfig.staleState).
 * noteIds = [state note, newer related notes oldest first].
 *
 * Key = state note id + its updatedAt: dismissing "this version is out of
 * date" sticks until the note is edited; staleness of the edited version is a
 * new signal. Score = 1 − 1/(1 + number of newer notes).
 */
export function detectStaleStates(input: readonly EngineNote[] | Corpus, cfg: EngineConfig): StaleStateSignal[] {
  const corpus = asCorpus(input);
  const states = corpus.notes.flatMap((note, i) => (isStateNote(note, cfg) ? [i] : []));
  if (states.length === 0) return [];
  const related = relatedNotes(corpus, states, cfg);
  const signals: StaleStateSignal[] = [];
  for (const s of states) {
    const state = corpus.note(s);
    const newer = [...related.get(s)!]
      .map((i) => corpus.note(i))
      .filter((n) => n.createdAt.getTime() > state.updatedAt.getTime())
      .sort(byCreatedThenId);
    if (newer.length < cfg.staleState.minNewerNotes) continue;
    const stateUpdatedAt = state.updatedAt.toISOString();
    signals.push({
      key: signalKey('stale_state', [state.id, stateUpdatedAt]),
      kind: 'stale_state',
      noteIds: [state.id, ...newer.map((n) => n.id)],
      score: round4(1 - 1 / (1 + newer.length)),
      detail: {
        stateNoteId: state.id,
        stateUpdatedAt,
        newerNoteIds: newer.map((n) => n.id),
        newestAt: newer[newer.length - 1]!.createdAt.toISOString(),
      },
    });
  }
  return signals;
}

/** For each state note: the indices of the notes related to it (never itself). */
function relatedNotes(corpus: Corpus, states: number[], cfg: EngineConfig): Map<number, Set<number>> {
  const { relatedMinSimilarity, maxRelatedTagNotes } = cfg.staleState;
  const related = new Map(states.map((s) => [s, new Set<number>()]));
  const { targets, backlinks } = corpus.links();
  const tagIndex = corpus.tags();
  const stateTags = new Set(cfg.staleState.tags.map(normalizeTag));
  for (const s of states) {
    const set = related.get(s)!;
    for (const i of targets[s]!) set.add(i);
    for (const i of backlinks[s]!) set.add(i);
    for (const tag of new Set(corpus.note(s).tags.map(normalizeTag))) {
      const uses = tagIndex.get(tag);
      if (stateTags.has(tag) || !uses || uses.length > maxRelatedTagNotes) continue;
      for (const i of uses) set.add(i);
    }
  }
  // kNN neighbours either way: one pass over the graph finds both directions.
  const { graph, noteOfRow, rowOfNote } = corpus.knn(cfg.knn);
  const stateOfRow = new Map<number, number>();
  for (const s of states) if (rowOfNote[s]! >= 0) stateOfRow.set(rowOfNote[s]!, s);
  for (let row = 0; row < graph.n; row++) {
    for (let p = row * graph.k; p < row * graph.k + graph.k; p++) {
      const other = graph.indices[p]!;
      if (other < 0 || graph.similarities[p]! < relatedMinSimilarity) continue;
      const fromState = stateOfRow.get(row);
      if (fromState !== undefined) related.get(fromState)!.add(noteOfRow[other]!);
      const toState = stateOfRow.get(other);
      if (toState !== undefined) related.get(toState)!.add(noteOfRow[row]!);
    }
  }
  for (const s of states) related.get(s)!.delete(s);
  return related;
}
