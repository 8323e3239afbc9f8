/** One measured figure; `reference` is the same measure of a peer or raw baseline taken in the same run. */
export interface BenchResult {
  suite: string;
  name: string;
  value: number;
  unit: string;
  reference?: { name: string; value: number };
  /** value / reference.value, when a reference was measured. */
  ratio?: number;
  notes?: string;
}

export function withRatio(result: BenchResult): BenchResult {
  if (!result.reference || result.reference.value === 0) return result;
  return { ...result, ratio: Math.round((result.value / result.reference.value) * 1000) / 1000 };
}

export function percentile(sortedOrNot: number[], p: number): number {
  const sorted = [...sortedOrNot].sort((a, b) => a - b);
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}
