import type { EngineConfig } from './config.js';
import { asCorpus, type Corpus } from './corpus.js';
import { detectDanglingLinks } from './dangling-link.js';
import { corpusFingerprint } from './fingerprint.js';
import { detectHiddenArcs } from './hidden-arc.js';
import { detectStaleStates } from './stale-state.js';
import { detectTagBursts } from './tag-burst.js';
import { SIGNAL_KINDS, type EngineNote, type Signal } from './types.js';

/** All four detectors over one prepared corpus (the kNN graph is built once), ordered by kind then key. */
export function detectAll(input: readonly EngineNote[] | Corpus, cfg: EngineConfig): Signal[] {
  const corpus = asCorpus(input);
  const signals: Signal[] = [
    ...detectHiddenArcs(corpus, cfg),
    ...detectStaleStates(corpus, cfg),
    ...detectDanglingLinks(corpus),
    ...detectTagBursts(corpus, cfg),
  ];
  const kindOrder = (s: Signal): number => SIGNAL_KINDS.indexOf(s.kind);
  return signals.sort((a, b) => kindOrder(a) - kindOrder(b) || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

export interface DetectionRun {
  fingerprint: string;
  /** null when the fingerprint equals the previous one: detection was skipped. */
  signals: Signal[] | null;
}

/**
 * The dirty-flagged refresh: detection runs only when the corpus (or the
 * configuration) changed since `previousFingerprint`. The caller stores the
 * returned fingerprint (engine_meta) alongside the signals it applied.
 */
export function detectIfChanged(
  notes: readonly EngineNote[],
  cfg: EngineConfig,
  previousFingerprint: string | undefined,
): DetectionRun {
  const fingerprint = corpusFingerprint(notes, cfg);
  if (fingerprint === previousFingerprint) return { fingerprint, signals: null };
  return { fingerprint, signals: detectAll(notes, cfg) };
}
