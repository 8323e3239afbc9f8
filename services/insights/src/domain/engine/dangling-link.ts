import { asCorpus, normalizeLinkTarget, type Corpus } from './corpus.js';
import { round4, signalKey } from './signal-util.js';
import type { DanglingLinkSignal, EngineNote } from './types.js';

/**
 * dangling_link: a [[link]] whose target names no note (by id or title), one
 * signal per normalised target. noteIds = the notes linking to it, by id.
 * Key = the normalised target, so dismissing it sticks while it stays
 * missing; once a note with that title exists the signal is no longer
 * detected. Score = 1 − 1/(1 + number of linking notes).
 */
export function detectDanglingLinks(input: readonly EngineNote[] | Corpus): DanglingLinkSignal[] {
  const corpus = asCorpus(input);
  const byTarget = new Map<string, { written: string; sources: string[] }>();
  corpus.links().dangling.forEach((targets, i) => {
    const source = corpus.note(i).id;
    for (const written of targets) {
      const normalized = normalizeLinkTarget(written);
      const entry = byTarget.get(normalized);
      // Notes are visited in id order, so `written` is the lowest id's spelling.
      if (!entry) byTarget.set(normalized, { written: written.trim(), sources: [source] });
      else if (entry.sources[entry.sources.length - 1] !== source) entry.sources.push(source);
    }
  });
  return [...byTarget.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([normalizedTarget, { written, sources }]) => ({
      key: signalKey('dangling_link', [normalizedTarget]),
      kind: 'dangling_link' as const,
      noteIds: sources,
      score: round4(1 - 1 / (1 + sources.length)),
      detail: { target: written, normalizedTarget, sourceCount: sources.length },
    }));
}
