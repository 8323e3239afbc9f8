import type { EngineConfig } from './config.js';
import { asCorpus, type Corpus } from './corpus.js';
import { byCreatedThenId, daysBetween, round4, signalKey } from './signal-util.js';
import type { EngineNote, HiddenArcDetail, HiddenArcSignal } from './types.js';
import { UnionFind } from './union-find.js';

/** Why a mutual-kNN component is or is not a hidden arc, checked in this order. */
export type ArcVerdict = 'arc' | 'too_small' | 'too_large' | 'too_short' | 'linked';

export interface ArcComponent {
  /** Oldest first. */
  noteIds: string[];
  verdict: ArcVerdict;
  detail: HiddenArcDetail;
}

/**
 * Every mutual-kNN component of two or more notes, with its verdict: the
 * explanation behind detectHiddenArcs (and what tests use to check that a
 * near-miss is rejected for the right reason).
 *
 * Edge a–b only when b is among a's k nearest, a among b's, and their cosine
 * ≥ minSimilarity. A hub note sits near many notes but is rarely among *their*
 * nearest (each has closer peers in its own thread), so it cannot glue two
 * arcs together the way a one-sided kNN graph would.
 */
export function findArcComponents(input: readonly EngineNote[] | Corpus, cfg: EngineConfig): ArcComponent[] {
  const corpus = asCorpus(input);
  const { graph, noteOfRow } = corpus.knn(cfg.knn);
  const { k, indices, similarities } = graph;
  const uf = new UnionFind(graph.n);
  const edgeSimSum = new Float64Array(graph.n);
  const edgeCount = new Int32Array(graph.n);
  const isNeighbour = (row: number, of: number): boolean => {
    for (let p = of * k; p < of * k + k; p++) if (indices[p] === row) return true;
    return false;
  };
  const edges: [number, number, number][] = [];
  for (let a = 0; a < graph.n; a++) {
    for (let p = a * k; p < a * k + k; p++) {
      const b = indices[p]!;
      const sim = similarities[p]!;
      // Each mutual pair is seen from both ends; take it from the smaller row.
      if (b > a && sim >= cfg.hiddenArc.minSimilarity && isNeighbour(a, b)) {
        uf.union(a, b);
        edges.push([a, b, sim]);
      }
    }
  }
  for (const [a, , sim] of edges) {
    const root = uf.find(a);
    edgeSimSum[root] = edgeSimSum[root]! + sim;
    edgeCount[root] = edgeCount[root]! + 1;
  }
  return uf.components(2).map((rows) => {
    const root = uf.find(rows[0]!);
    const members = rows.map((r) => noteOfRow[r]!);
    return judgeComponent(corpus, members, edgeSimSum[root]! / edgeCount[root]!, cfg);
  });
}

function judgeComponent(corpus: Corpus, members: number[], cohesion: number, cfg: EngineConfig): ArcComponent {
  const notes = members.map((i) => corpus.note(i)).sort(byCreatedThenId);
  const first = notes[0]!;
  const last = notes[notes.length - 1]!;
  const memberSet = new Set(members);
  const linked = new Set<string>();
  const { targets } = corpus.links();
  for (const a of members) {
    for (const b of targets[a]!) if (memberSet.has(b)) linked.add(a < b ? `${a}:${b}` : `${b}:${a}`);
  }
  const size = notes.length;
  const spanDays = daysBetween(first.createdAt, last.createdAt);
  const linkDensity = linked.size / ((size * (size - 1)) / 2);
  const detail: HiddenArcDetail = {
    size,
    firstAt: first.createdAt.toISOString(),
    lastAt: last.createdAt.toISOString(),
    spanDays: round4(spanDays),
    linkedPairs: linked.size,
    linkDensity: round4(linkDensity),
    cohesion: round4(cohesion),
  };
  const { minSize, maxSize, minSpanDays, maxLinkDensity } = cfg.hiddenArc;
  const verdict: ArcVerdict =
    size < minSize
      ? 'too_small'
      : size > maxSize
        ? 'too_large'
        : spanDays < minSpanDays
          ? 'too_short'
          : linkDensity > maxLinkDensity
            ? 'linked'
            : 'arc';
  return { noteIds: notes.map((n) => n.id), verdict, detail };
}

/**
 * hidden_arc: mutual-kNN components of minSize–maxSize notes spanning
 * ≥ minSpanDays with near-zero internal links. noteIds oldest first.
 *
 * Key = the set of note ids, so an arc that gains or loses a note is a new
 * signal; triage (applyDetection) carries a dismissal, snooze or mint over to
 * it when most of its notes were already judged, so dismissed noise stays
 * dismissed while a substantially new thread still surfaces.
 * Score = cohesion (mean similarity along the arc's mutual edges).
 */
export function detectHiddenArcs(input: readonly EngineNote[] | Corpus, cfg: EngineConfig): HiddenArcSignal[] {
  return findArcComponents(input, cfg)
    .filter((c) => c.verdict === 'arc')
    .map((c) => ({
      key: signalKey('hidden_arc', [...c.noteIds].sort()),
      kind: 'hidden_arc' as const,
      noteIds: c.noteIds,
      score: c.detail.cohesion,
      detail: c.detail,
    }));
}
