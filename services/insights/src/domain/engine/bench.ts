import { pathToFileURL } from 'node:url';
import { resolveEngineConfig, type EngineConfigInput } from './config.js';
import { detectIfChanged } from './detect.js';
import { benchCorpus } from './synthetic.js';
import { SIGNAL_KINDS, type SignalKind } from './types.js';

export interface DetectionBenchResult {
  n: number;
  dim: number;
  k: number;
  /** Whether the kNN graph was exact (n ≤ knn.exactBelow) or approximate. */
  knn: 'exact' | 'approximate';
  /** Full detection on a changed corpus (fingerprint + kNN + four detectors), wall clock. */
  firstRunMs: number;
  /** The same corpus again: only the fingerprint is computed, detection is skipped. */
  secondRunMs: number;
  /** CPU time of this process for each run: steadier than wall time on a shared machine. */
  firstRunCpuMs: number;
  secondRunCpuMs: number;
  secondRunSkipped: boolean;
  signals: Record<SignalKind, number>;
  /** firstRunCpuMs / (n·k) in microseconds: roughly constant if detection scales as N·k. */
  firstRunCpuMicrosPerNoteK: number;
}

/** Times detection on a generated vault-like corpus of n notes (generation not timed). */
export function benchDetection(
  n: number,
  options: { dim?: number; seed?: number; config?: EngineConfigInput } = {},
): DetectionBenchResult {
  const dim = options.dim ?? 384;
  const cfg = resolveEngineConfig(options.config);
  const notes = benchCorpus(n, dim, options.seed);
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const first = detectIfChanged(notes, cfg, undefined);
  const t1 = performance.now();
  const cpu1 = process.cpuUsage();
  const second = detectIfChanged(notes, cfg, first.fingerprint);
  const t2 = performance.now();
  const cpu2 = process.cpuUsage();
  const cpuMs = (from: NodeJS.CpuUsage, to: NodeJS.CpuUsage): number =>
    Math.round((to.user + to.system - from.user - from.system) / 100) / 10;
  const signals = Object.fromEntries(SIGNAL_KINDS.map((kind) => [kind, 0])) as Record<SignalKind, number>;
  for (const s of first.signals ?? []) signals[s.kind]++;
  return {
    n,
    dim,
    k: cfg.knn.k,
    knn: n <= cfg.knn.exactBelow ? 'exact' : 'approximate',
    firstRunMs: Math.round(t1 - t0),
    secondRunMs: Math.round((t2 - t1) * 100) / 100,
    firstRunCpuMs: cpuMs(cpu0, cpu1),
    secondRunCpuMs: cpuMs(cpu1, cpu2),
    secondRunSkipped: second.signals === null,
    signals,
    firstRunCpuMicrosPerNoteK: Math.round((cpuMs(cpu0, cpu1) * 1000) / (n * cfg.knn.k)),
  };
}

// `node dist/engine/bench.js [n…]` prints one JSON line per size (default 10,000 and 100,000).
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const sizes = process.argv.slice(2).map(Number);
  for (const n of sizes.length > 0 ? sizes : [10_000, 100_000]) {
    console.log(JSON.stringify({ bench: 'insights.detection', ...benchDetection(n) }));
  }
}
