import type { Answered, Result } from './uploader.js';
import { noTotals, type ImportState, type Totals } from './state.js';

const EXAMPLES = 3;
const BAR = 24;

function formatBytes(n: number): string {
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(0)} KB`;
  if (n < 1024 ** 3) return `${(n / 1024 ** 2).toFixed(1)} MB`;
  return `${(n / 1024 ** 3).toFixed(2)} GB`;
}

/** What the summary prints, also as JSON with --json. */
export interface Summary {
  source: string;
  target: string;
  seconds: number;
  items_per_second: number;
  run: Totals;
  /** Every run on this source so far, this one included. */
  all_runs: Totals;
  skipped: number;
  rejected: Array<{ reason: string; count: number; examples: string[] }>;
}

/**
 * Counts what the server answered, keeps the import state's totals, draws a progress bar on a
 * terminal, and writes the final summary (created / updated / duplicate / rejected with reasons).
 */
export class ImportReport {
  readonly run: Totals = noTotals();
  private readonly reasons = new Map<string, { count: number; examples: string[] }>();
  private readonly started = performance.now();
  private position = 0;
  private timer: NodeJS.Timeout | undefined;
  skipped = 0;

  constructor(
    private readonly state: ImportState,
    /** How far there is to go, in `unit`s (bytes of an mbox, files of a folder). */
    private readonly total: { value: number; unit: 'bytes' | 'files' },
    private readonly out: NodeJS.WriteStream = process.stderr,
  ) {
    this.position = total.unit === 'bytes' ? state.offset : 0;
  }

  record(batch: Answered[], results: Result[], position: number): void {
    results.forEach((result, i) => {
      this.run[result.status]++;
      this.state.totals[result.status]++;
      if (result.status !== 'rejected') return;
      const key = batch[i]!.key;
      const reason = result.reason ?? 'rejected';
      this.state.rejections.push({ key, reason });
      const entry = this.reasons.get(reason) ?? { count: 0, examples: [] };
      entry.count++;
      if (entry.examples.length < EXAMPLES) entry.examples.push(key);
      this.reasons.set(reason, entry);
    });
    this.position = position;
  }

  /** Redraws the progress line every quarter second, on a terminal only. */
  startProgress(): void {
    if (!this.out.isTTY) return;
    this.timer = setInterval(() => this.draw(), 250);
    this.timer.unref();
  }

  stopProgress(): void {
    clearInterval(this.timer);
    if (this.out.isTTY) this.out.write('\r\x1b[K');
  }

  private items(): number {
    return this.run.created + this.run.updated + this.run.duplicate + this.run.rejected;
  }

  private draw(): void {
    const fraction = this.total.value > 0 ? Math.min(1, this.position / this.total.value) : 1;
    const filled = Math.round(fraction * BAR);
    const amount =
      this.total.unit === 'bytes'
        ? `${formatBytes(this.position)}/${formatBytes(this.total.value)}`
        : `${this.position}/${this.total.value} files`;
    const rate = Math.round(this.items() / ((performance.now() - this.started) / 1000));
    const { created, updated, duplicate, rejected } = this.run;
    this.out.write(
      `\r\x1b[K[${'#'.repeat(filled)}${'.'.repeat(BAR - filled)}] ${(fraction * 100).toFixed(0)}% ${amount}  ${rate}/s  ` +
        `created ${created}  updated ${updated}  duplicate ${duplicate}  rejected ${rejected}`,
    );
  }

  summary(source: string): Summary {
    const seconds = (performance.now() - this.started) / 1000;
    return {
      source,
      target: this.state.target,
      seconds: Math.round(seconds * 10) / 10,
      items_per_second: Math.round(this.items() / Math.max(seconds, 0.001)),
      run: { ...this.run },
      all_runs: { ...this.state.totals },
      skipped: this.skipped,
      rejected: [...this.reasons].map(([reason, { count, examples }]) => ({ reason, count, examples })).sort((a, b) => b.count - a.count),
    };
  }
}

export function formatSummary(summary: Summary, interrupted: boolean): string {
  const { created, updated, duplicate, rejected } = summary.run;
  const lines = [
    `${interrupted ? 'stopped' : 'imported'} ${summary.target} into ${summary.source}: ${created + updated + duplicate + rejected} items in ${summary.seconds} s (${summary.items_per_second}/s)`,
    `  created ${created}, updated ${updated}, duplicate ${duplicate}, rejected ${rejected}${summary.skipped ? `, skipped ${summary.skipped} files of types no handler takes` : ''}`,
  ];
  const all = summary.all_runs;
  if (all.created + all.updated + all.duplicate + all.rejected !== created + updated + duplicate + rejected) {
    lines.push(`  all runs on this source: created ${all.created}, updated ${all.updated}, duplicate ${all.duplicate}, rejected ${all.rejected}`);
  }
  if (summary.rejected.length > 0) {
    lines.push('  rejected:');
    for (const { reason, count, examples } of summary.rejected) lines.push(`    ${count}× ${reason}  (e.g. ${examples.join(', ')})`);
  }
  if (interrupted) lines.push('  run the same command again to continue where it stopped');
  return lines.join('\n');
}
