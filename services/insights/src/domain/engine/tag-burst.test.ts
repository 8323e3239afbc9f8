import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DEFAULT_ENGINE_CONFIG, resolveEngineConfig } from './config.js';
import { addDays, CorpusBuilder } from './synthetic.js';
import { detectTagBursts } from './tag-burst.js';

const START = new Date('2020-01-01T00:00:00Z');
const cfg = DEFAULT_ENGINE_CONFIG;

/** One note per offset (days from START) carrying `tag`. */
function tagged(b: CorpusBuilder, tag: string, days: number[]): string[] {
  return days.map((d) => b.add({ createdAt: addDays(START, d), tags: [tag] }).id);
}

describe('detectTagBursts', () => {
  it('fires on a tag used, dormant for 8 months, then used again in a burst', () => {
    const b = new CorpusBuilder(1);
    const early = tagged(b, 'woodworking', [0, 10, 20]);
    const burst = tagged(b, '#Woodworking', [260, 265, 280]);
    const [signal, ...rest] = detectTagBursts(b.notes, cfg);
    assert.deepEqual(rest, []);
    assert.deepEqual(signal!.noteIds, [early[2], ...burst]);
    assert.deepEqual(signal!.detail, {
      tag: 'woodworking',
      dormantSince: addDays(START, 20).toISOString(),
      resurfacedAt: addDays(START, 260).toISOString(),
      gapDays: 240,
      burstCount: 3,
      priorUses: 3,
    });
    assert.equal(signal!.score, 0.7038); // ½·240/365 + ½·3/4, rounded
  });

  it('near-miss: a tag used steadily every two weeks for two years', () => {
    const b = new CorpusBuilder(2);
    tagged(
      b,
      'running',
      Array.from({ length: 52 }, (_, i) => i * 14),
    );
    assert.deepEqual(detectTagBursts(b.notes, cfg), []);
  });

  it('near-miss: a gap just under the dormancy threshold', () => {
    const b = new CorpusBuilder(3);
    tagged(b, 'chess', [0, 5, 94, 95]);
    assert.deepEqual(detectTagBursts(b.notes, cfg), []);
    assert.equal(detectTagBursts(b.notes, resolveEngineConfig({ tagBurst: { minDormantDays: 89 } })).length, 1);
  });

  it('near-miss: a single use after the gap is not a burst, and a new tag has no dormancy', () => {
    const b = new CorpusBuilder(4);
    tagged(b, 'piano', [0, 3, 200]);
    tagged(b, 'pottery', [0, 300, 301]);
    assert.deepEqual(detectTagBursts(b.notes, cfg), []);
  });

  it('reports only the latest revival, keyed by its first note', () => {
    const b = new CorpusBuilder(5);
    tagged(b, 'spanish', [0, 1, 200, 201, 600]);
    const latest = tagged(b, 'spanish', [610]);
    const [signal] = detectTagBursts(b.notes, cfg);
    assert.equal(signal!.detail.resurfacedAt, addDays(START, 600).toISOString());
    assert.equal(signal!.detail.priorUses, 4);
    // Another use inside the window grows the burst; the key stays.
    b.add({ createdAt: addDays(START, 615), tags: ['spanish'] });
    const [grown] = detectTagBursts(b.notes, cfg);
    assert.equal(grown!.key, signal!.key);
    assert.equal(grown!.detail.burstCount, 3);
    assert.ok(latest.every((id) => grown!.noteIds.includes(id)));
  });
});
