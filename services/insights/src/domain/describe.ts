import type { Signal } from './engine/index.js';

const day = (iso: string): string => iso.slice(0, 10);

function quoted(titles: string[], max = 4): string {
  const shown = titles.slice(0, max).map((t) => `"${t}"`);
  return titles.length > max ? `${shown.join(', ')} and ${titles.length - max} more` : shown.join(', ');
}

/** One line saying what a signal found, with the titles of its notes (`titleOf` an id → its title). */
export function describeSignal(signal: Signal, titleOf: (id: string) => string): string {
  switch (signal.kind) {
    case 'hidden_arc': {
      const d = signal.detail;
      return `${d.size} notes over ${Math.round(d.spanDays)} days (${day(d.firstAt)} to ${day(d.lastAt)}) belong together but are ${d.linkedPairs === 0 ? 'never linked' : `linked only ${d.linkedPairs} time${d.linkedPairs === 1 ? '' : 's'}`}: ${quoted(signal.noteIds.map(titleOf))}`;
    }
    case 'stale_state': {
      const d = signal.detail;
      const n = d.newerNoteIds.length;
      return `state note "${titleOf(d.stateNoteId)}" (updated ${day(d.stateUpdatedAt)}) has ${n} newer related note${n === 1 ? '' : 's'}: ${quoted(d.newerNoteIds.map(titleOf))}`;
    }
    case 'dangling_link': {
      const d = signal.detail;
      return `[[${d.target}]] names no note; linked from ${quoted(signal.noteIds.map(titleOf))}`;
    }
    case 'tag_burst': {
      const d = signal.detail;
      return `#${d.tag} resurfaced on ${day(d.resurfacedAt)} after ${Math.round(d.gapDays)} days dormant: ${d.burstCount} uses since, ${d.priorUses} before`;
    }
  }
}
