import type { EngineConfig } from './config.js';
import { asCorpus, type Corpus } from './corpus.js';
import { DAY_MS, daysBetween, round4, signalKey } from './signal-util.js';
import type { EngineNote, TagBurstSignal } from './types.js';

/**
 * tag_burst: a tag with ≥ minPriorUses uses, then no use for ≥ minDormantDays,
 * then ≥ minBurstCount uses within burstWindowDays of the first new one.
 * Only the latest such revival per tag is reported (older ones are history).
 * noteIds = [last use before the gap, the burst's uses oldest first].
 *
 * Key = tag + first note of the revival: the same revival keeps its key as it
 * grows; a later revival after another dormancy is a new signal.
 * Score = ½·min(1, gap/365 days) + ½·min(1, burstCount / (2·minBurstCount)).
 */
export function detectTagBursts(input: readonly EngineNote[] | Corpus, cfg: EngineConfig): TagBurstSignal[] {
  const corpus = asCorpus(input);
  const { minDormantDays, burstWindowDays, minBurstCount, minPriorUses } = cfg.tagBurst;
  const signals: TagBurstSignal[] = [];
  for (const [tag, uses] of [...corpus.tags().entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const times = uses.map((i) => corpus.note(i).createdAt.getTime());
    // Walk gaps from the newest back: the first qualifying one is the latest revival.
    for (let g = uses.length - 1; g >= minPriorUses; g--) {
      const gapDays = (times[g]! - times[g - 1]!) / DAY_MS;
      if (gapDays < minDormantDays) continue;
      const windowEnd = times[g]! + burstWindowDays * DAY_MS;
      let end = g;
      while (end < uses.length && times[end]! <= windowEnd) end++;
      const burst = uses.slice(g, end).map((i) => corpus.note(i));
      if (burst.length < minBurstCount) continue;
      const before = corpus.note(uses[g - 1]!);
      signals.push({
        key: signalKey('tag_burst', [tag, burst[0]!.id]),
        kind: 'tag_burst',
        noteIds: [before.id, ...burst.map((n) => n.id)],
        score: round4(0.5 * Math.min(1, gapDays / 365) + 0.5 * Math.min(1, burst.length / (2 * minBurstCount))),
        detail: {
          tag,
          dormantSince: before.createdAt.toISOString(),
          resurfacedAt: burst[0]!.createdAt.toISOString(),
          gapDays: round4(daysBetween(before.createdAt, burst[0]!.createdAt)),
          burstCount: burst.length,
          priorUses: g,
        },
      });
      break;
    }
  }
  return signals;
}
