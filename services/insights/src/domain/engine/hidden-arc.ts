import type { EngineConfig } from './config.js';
import { asCorpus, type Corpus } from './corpus.js';
import { byCreatedThenId, daysBetween, round4, signalKey } from './signal-util.js';
import type { EngineNote, HiddenArcDetail, HiddenArcSignal } from './types.js';
import { findBridgingHubs } from './hubs.js';
import { UnionFind } from './union-find.js';

/** Why a mutual-kNN component is or is not a hidden arc, checked in this order. */
export type ArcVerdict = 'arc' | 'too_small' | 'too_large' | 'too_short' | 'linked';

export interface ArcComponent {
  /** Oldest first. */
  noteIds: string[];
  verdict: ArcVerdict;
  detail: HiddenArcDetail;
}

export interface ArcAnalysis {
  /** Every component of the pruned mutual-kNN graph (so at least 3 notes), with its verdict. */
  components: ArcComponent[];
  /** Notes cut out of the graph because they bridged two arc-sized groups (see hubs.ts). */
  hubNoteIds: string[];
}

/**
 * The explanation behind detectHiddenArcs (and what tests use to check that a
 * near-miss is rejected for the right reason).
 *
 * Edge a–b only when b is among a's k nearest, a among b's, and their cosine
 * ≥ minSimilarity. A hub note sits near many notes but is rarely among *their*
 * nearest (each has closer peers in its own thread), so it cannot glue two
 * arcs together the way a one-sided kNN graph would; for arcs too small for
 * that to hold, bridging hubs are cut out before union-find, and so is any
 * note left hanging on a single edge.
 */
export function analyzeArcs(input: readonly EngineNote[] | Corpus, cfg: EngineConfig): ArcAnalysis {
  const corpus = asCorpus(input);
  const { graph, noteOfRow } = corpus.knn(cfg.knn);
  const { k, indices, similarities } = graph;
  const isNeighbour = (row: number, of: number): boolean => {
    for (let p = of * k; p < of * k + k; p++) if (indices[p] === row) return true;
    return false;
  };
  const from: number[] = [];
  const to: number[] = [];
  const sims: number[] = [];
  for (let a = 0; a < graph.n; a++) {
    for (let p = a * k; p < a * k + k; p++) {
      const b = indices[p]!;
      // Each mutual pair is seen from both ends; take it from the smaller row.
      if (b > a && similarities[p]! >= cfg.hiddenArc.minSimilarity && isNeighbour(a, b)) {
        from.push(a);
        to.push(b);
        sims.push(similarities[p]!);
      }
    }
  }
  const hubs = findBridgingHubs(graph.n, Int32Array.from(from), Int32Array.from(to), cfg.hiddenArc.minSize);
  const dropped = peelPendants(graph.n, from, to, hubs);
  const uf = new UnionFind(graph.n);
  const kept = (e: number): boolean => !dropped[from[e]!] && !dropped[to[e]!];
  for (let e = 0; e < from.length; e++) if (kept(e)) uf.union(from[e]!, to[e]!);
  const edgeSimSum = new Float64Array(graph.n);
  const edgeCount = new Int32Array(graph.n);
  for (let e = 0; e < from.length; e++) {
    if (!kept(e)) continue;
    const root = uf.find(from[e]!);
    edgeSimSum[root] = edgeSimSum[root]! + sims[e]!;
    edgeCount[root] = edgeCount[root]! + 1;
  }
  const components = uf.components(2).map((rows) => {
    const root = uf.find(rows[0]!);
    const members = rows.map((r) => noteOfRow[r]!);
    return judgeComponent(corpus, members, edgeSimSum[root]! / edgeCount[root]!, cfg);
  });
  const hubNoteIds: string[] = [];
  hubs.forEach((isHub, row) => {
    if (isHub) hubNoteIds.push(corpus.note(noteOfRow[row]!).id);
  });
  return { components, hubNoteIds };
}

/**
 * Drops the hubs, then repeatedly every vertex left with fewer than two
 * edges (the 2-core): a note hanging on a single mutual edge, such as a hub
 * that made it into one arc's neighbour lists, is too weakly attached to
 * count as part of the thread (and would bring its links with it).
 */
function peelPendants(n: number, from: number[], to: number[], hubs: Uint8Array): Uint8Array {
  const dropped = Uint8Array.from(hubs);
  const degree = new Int32Array(n);
  const neighbours: number[][] = Array.from({ length: n }, () => []);
  for (let e = 0; e < from.length; e++) {
    const [a, b] = [from[e]!, to[e]!];
    if (dropped[a] || dropped[b]) continue;
    degree[a]!++;
    degree[b]!++;
    neighbours[a]!.push(b);
    neighbours[b]!.push(a);
  }
  const queue: number[] = [];
  for (let v = 0; v < n; v++) if (!dropped[v] && degree[v]! < 2) queue.push(v);
  while (queue.length > 0) {
    const v = queue.pop()!;
    if (dropped[v]) continue;
    dropped[v] = 1;
    for (const w of neighbours[v]!) {
      if (!dropped[w] && --degree[w]! < 2) queue.push(w);
    }
  }
  return dropped;
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
  return analyzeArcs(input, cfg)
    .components.filter((c) => c.verdict === 'arc')
    .map((c) => ({
      key: signalKey('hidden_arc', [...c.noteIds].sort()),
      kind: 'hidden_arc' as const,
      noteIds: c.noteIds,
      score: c.detail.cohesion,
      detail: c.detail,
    }));
}
