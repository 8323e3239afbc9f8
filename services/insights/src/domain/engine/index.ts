export type {
  EngineNote,
  Signal,
  SignalKind,
  HiddenArcSignal,
  HiddenArcDetail,
  StaleStateSignal,
  StaleStateDetail,
  DanglingLinkSignal,
  DanglingLinkDetail,
  TagBurstSignal,
  TagBurstDetail,
} from './types.js';
export { SIGNAL_KINDS } from './types.js';
export { DEFAULT_ENGINE_CONFIG, resolveEngineConfig, type EngineConfig, type EngineConfigInput } from './config.js';
export { Corpus, normalizeLinkTarget, normalizeTag } from './corpus.js';
export { buildKnn, bruteForceKnn, approximateKnn, DEFAULT_KNN_OPTIONS, type KnnGraph, type KnnOptions } from './knn.js';
export { UnionFind } from './union-find.js';
export { detectHiddenArcs, analyzeArcs, type ArcAnalysis, type ArcComponent, type ArcVerdict } from './hidden-arc.js';
export { detectStaleStates, isStateNote } from './stale-state.js';
export { detectDanglingLinks } from './dangling-link.js';
export { detectTagBursts } from './tag-burst.js';
export { detectAll, detectIfChanged, type DetectionRun } from './detect.js';
export { corpusFingerprint } from './fingerprint.js';
export {
  applyDetection,
  transitionSignal,
  effectiveStatus,
  isPending,
  TriageError,
  type SignalStatus,
  type StoredSignal,
  type TriageState,
  type TriageAction,
  type DetectionUpdate,
} from './triage.js';
export {
  mintInference,
  remintInference,
  evaluateInference,
  formatCitation,
  renderInference,
  InferenceValidationError,
  type Inference,
  type InferenceSource,
  type MintInput,
  type MintedInference,
  type InferenceStatus,
  type InferenceEvaluation,
  type SourceEvaluation,
  type SourceMark,
} from './inference.js';
export { benchDetection, type DetectionBenchResult } from './bench.js';
export { benchCorpus } from './synthetic.js';
