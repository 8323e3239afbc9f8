/** A note as the engine sees it: a memex note or a Markdown document, already parsed by the caller. */
export interface EngineNote {
  id: string;
  title: string;
  createdAt: Date;
  updatedAt: Date;
  /** Without the leading '#'; compared case-insensitively. */
  tags: string[];
  /**
   * Targets of the note's [[links]], by title or id, as written. `[[Target#Heading|alias]]`
   * may be passed whole: the part after '|' and after '#' is ignored, as is a trailing '.md'.
   */
  links: string[];
  /** Other names links may use for it (a document's file name, front matter `aliases`). */
  aliases?: string[];
  frontMatter: Record<string, unknown>;
  /** Hash of the note's content as stored; any edit must change it. */
  contentHash: string;
  /** L2-normalised. Length 0 when the note has no embedding yet: it then takes no part in vector detectors. */
  embedding: Float32Array;
}

export type SignalKind = 'hidden_arc' | 'stale_state' | 'dangling_link' | 'tag_burst';
export const SIGNAL_KINDS: readonly SignalKind[] = ['hidden_arc', 'stale_state', 'dangling_link', 'tag_burst'];

export interface HiddenArcDetail {
  size: number;
  /** ISO dates of the first and last note (by createdAt). */
  firstAt: string;
  lastAt: string;
  spanDays: number;
  /** Unordered note pairs inside the arc joined by a [[link]] in either direction. */
  linkedPairs: number;
  /** linkedPairs / (size·(size−1)/2). */
  linkDensity: number;
  /** Mean cosine similarity over the arc's mutual-kNN edges. */
  cohesion: number;
}

export interface StaleStateDetail {
  stateNoteId: string;
  stateUpdatedAt: string;
  /** Related notes created after the state note's last update, oldest first. */
  newerNoteIds: string[];
  newestAt: string;
}

export interface DanglingLinkDetail {
  /** The link target as first written (by the lowest note id that links to it). */
  target: string;
  /** The normalised form used for matching. */
  normalizedTarget: string;
  sourceCount: number;
}

export interface TagBurstDetail {
  tag: string;
  /** Last use before the dormant gap. */
  dormantSince: string;
  /** First use after it. */
  resurfacedAt: string;
  gapDays: number;
  /** Uses within the burst window starting at resurfacedAt. */
  burstCount: number;
  /** Uses before the gap. */
  priorUses: number;
}

interface SignalOf<K extends SignalKind, D> {
  /** Deterministic fingerprint: re-detection of the same pattern maps onto the same stored row. */
  key: string;
  kind: K;
  /** The evidence, in a kind-specific order (documented per detector). */
  noteIds: string[];
  /** In [0, 1], higher = more worth a look; rounded to 4 decimals so re-runs compare equal. */
  score: number;
  detail: D;
}

export type HiddenArcSignal = SignalOf<'hidden_arc', HiddenArcDetail>;
export type StaleStateSignal = SignalOf<'stale_state', StaleStateDetail>;
export type DanglingLinkSignal = SignalOf<'dangling_link', DanglingLinkDetail>;
export type TagBurstSignal = SignalOf<'tag_burst', TagBurstDetail>;

/**
 * A detected signal. Detection is a pure function of the corpus and the
 * configuration (no clock), which is what makes the dirty-flag skip sound;
 * when it was first seen is triage state, kept on StoredSignal.
 */
export type Signal = HiddenArcSignal | StaleStateSignal | DanglingLinkSignal | TagBurstSignal;
