import { DEFAULT_KNN_OPTIONS, type KnnOptions } from './knn.js';

/** Every detector parameter; defaults follow the inference-engine spec where it names a value. */
export interface EngineConfig {
  /**
   * The kNN graph shared by hidden_arc (mutual edges) and stale_state
   * (relatedness). k = 10: a mutual-kNN graph with small k breaks clusters
   * apart (a note whose nearest all have closer peers gets no edge); on
   * synthetic arcs of 4–12 notes, 199 of 200 came out whole at k = 10 against
   * 132 at k = 5. The hubs a larger k lets in are cut out by the hub guard.
   */
  knn: KnnOptions;
  hiddenArc: {
    /**
     * A mutual-kNN edge also needs at least this cosine similarity. Without a
     * floor, mutual-kNN links unrelated notes in sparse regions (every point
     * has k nearest, however far). Not in the spec; tune to the embedding model.
     */
    minSimilarity: number;
    /** Spec: 4–12 notes. */
    minSize: number;
    maxSize: number;
    /** Spec: span ≥ 180 days (last createdAt − first createdAt). */
    minSpanDays: number;
    /**
     * Spec: "near-zero internal links". Linked pairs / all pairs in the
     * component must not exceed this: 0.05 allows no link in arcs of up to 6
     * notes, one link from 7 notes, three in 12.
     */
    maxLinkDensity: number;
  };
  staleState: {
    /** A note is a state note when front matter `type` is one of these (case-insensitive)… */
    frontMatterTypes: string[];
    /** …or when it carries one of these tags. */
    tags: string[];
    /**
     * A note is related to a state note when they link (either way), share a
     * tag other than the state tags that at most `maxRelatedTagNotes` notes
     * carry (broader tags say nothing), or are kNN neighbours (either way)
     * with at least `relatedMinSimilarity`.
     */
    relatedMinSimilarity: number;
    maxRelatedTagNotes: number;
    /** Fire when at least this many related notes were created after the state note's last update. */
    minNewerNotes: number;
  };
  tagBurst: {
    /** A gap of at least this many days between two uses is dormancy ("dormant for months"). */
    minDormantDays: number;
    /** The revival must have at least `minBurstCount` uses within `burstWindowDays` of resurfacing… */
    burstWindowDays: number;
    minBurstCount: number;
    /** …and the tag at least `minPriorUses` uses before the gap (else it is new, not revived). */
    minPriorUses: number;
  };
}

export const DEFAULT_ENGINE_CONFIG: EngineConfig = {
  knn: { k: 10, ...DEFAULT_KNN_OPTIONS },
  hiddenArc: { minSimilarity: 0.5, minSize: 4, maxSize: 12, minSpanDays: 180, maxLinkDensity: 0.05 },
  staleState: {
    frontMatterTypes: ['state'],
    tags: ['state'],
    relatedMinSimilarity: 0.6,
    maxRelatedTagNotes: 50,
    minNewerNotes: 1,
  },
  tagBurst: { minDormantDays: 90, burstWindowDays: 30, minBurstCount: 2, minPriorUses: 2 },
};

export type EngineConfigInput = { [S in keyof EngineConfig]?: Partial<EngineConfig[S]> };

/** Defaults overlaid with `input`, validated; throws naming the offending field. */
export function resolveEngineConfig(input: EngineConfigInput = {}): EngineConfig {
  const cfg: EngineConfig = {
    knn: { ...DEFAULT_ENGINE_CONFIG.knn, ...input.knn },
    hiddenArc: { ...DEFAULT_ENGINE_CONFIG.hiddenArc, ...input.hiddenArc },
    staleState: { ...DEFAULT_ENGINE_CONFIG.staleState, ...input.staleState },
    tagBurst: { ...DEFAULT_ENGINE_CONFIG.tagBurst, ...input.tagBurst },
  };
  const int = (path: string, value: number, min: number): void => {
    if (!Number.isInteger(value) || value < min) {
      throw new Error(`engine config: ${path} must be an integer ≥ ${min}, got ${value}`);
    }
  };
  const within = (path: string, value: number, lo: number, hi: number): void => {
    if (!(value >= lo && value <= hi))
      throw new Error(`engine config: ${path} must be in [${lo}, ${hi}], got ${value}`);
  };
  int('knn.k', cfg.knn.k, 1);
  int('knn.seed', cfg.knn.seed, 0);
  int('knn.exactBelow', cfg.knn.exactBelow, 0);
  int('knn.searchListSize', cfg.knn.searchListSize, 1);
  int('knn.trees', cfg.knn.trees, 2);
  int('knn.leafSize', cfg.knn.leafSize, 2);
  int('knn.maxIterations', cfg.knn.maxIterations, 0);
  int('knn.maxCandidates', cfg.knn.maxCandidates, 1);
  within('knn.earlyStopDelta', cfg.knn.earlyStopDelta, 0, 1);
  within('hiddenArc.minSimilarity', cfg.hiddenArc.minSimilarity, -1, 1);
  int('hiddenArc.minSize', cfg.hiddenArc.minSize, 2);
  int('hiddenArc.maxSize', cfg.hiddenArc.maxSize, cfg.hiddenArc.minSize);
  within('hiddenArc.minSpanDays', cfg.hiddenArc.minSpanDays, 0, Infinity);
  within('hiddenArc.maxLinkDensity', cfg.hiddenArc.maxLinkDensity, 0, 1);
  within('staleState.relatedMinSimilarity', cfg.staleState.relatedMinSimilarity, -1, 1);
  int('staleState.maxRelatedTagNotes', cfg.staleState.maxRelatedTagNotes, 0);
  int('staleState.minNewerNotes', cfg.staleState.minNewerNotes, 1);
  within('tagBurst.minDormantDays', cfg.tagBurst.minDormantDays, 0, Infinity);
  within('tagBurst.burstWindowDays', cfg.tagBurst.burstWindowDays, 0, Infinity);
  int('tagBurst.minBurstCount', cfg.tagBurst.minBurstCount, 1);
  int('tagBurst.minPriorUses', cfg.tagBurst.minPriorUses, 1);
  return cfg;
}
