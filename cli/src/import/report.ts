import type { Answered, Result } from './uploader.js';
import { noTotals, type ImportState, type Totals } from './state.js';

const EXAMPLES = 3;
const BAR = 24;

function formatBytes(n: number): string {
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(0)} KB`;
  if (n < 1024 ** 3) return `${(n / 1024 ** 2).toFixed(1)} MB`;
  return `${(n / 1024 ** 3).toFixed(2)} GB`;
}

type Reasons = Array<{ reason: string; count: number; examples: string[] }>;

/** What the summary prints, also as JSON with --json. */
export interface Summary {
  source: string;
  target: string;
  seconds: number;
  items_per_second: number;
  /**
   * Every file (folder, Maildir) or message (mbox) this run came across, each counted once:
   * counted = earlier + created + updated + duplicate + rejected + skipped.
   */
  counted: number;
  /** Files done by earlier runs on this source, not sent again (an mbox resumes past them: 0). */
  earlier: number;
  run: Totals;
  /** Every run on this source so far, this one included. */
  all_runs: Totals;
  rejected: Reasons;
  skipped: Reasons;
}

/** Reasons with their counts and a few examples, most frequent first. */
class ReasonCount {
  private readonly reasons = new Map<string, { count: number; examples: string[] }>();

  add(reason: string, key: string): void {
    const entry = this.reasons.get(reason) ?? { count: 0, examples: [] };
    entry.count++;
    if (entry.examples.length < EXAMPLES) entry.examples.push(key);
    this.reasons.set(reason, entry);
  }

  list(): Reasons {
    return [...this.reasons]
      .map(([reason, { count, examples }]) => ({ reason, count, examples }))
      .sort((a, b) => b.count - a.count);
  }
}

/**
 * Counts what the server answered, keeps the import state's totals, draws a progress bar on a
 * terminal, and writes the final summary (created / updated / duplicate / rejected with reasons).
 */
export class ImportReport {
  readonly run: Totals = noTotals();
  private readonly rejections = new ReasonCount();
  private readonly skips = new ReasonCount();
  private readonly started = performance.now();
  private position = 0;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly state: ImportState,
    /** How far there is to go, in `unit`s (bytes of an mbox, files of a folder, items of an Outlook data file). */
    private readonly total: { value: number; unit: 'bytes' | 'files' | 'items' },
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
      this.rejections.add(reason, key);
    });
    this.position = position;
  }

  /** A file not sent, and why. */
  skip(key: string, reason: string): void {
    this.run.skipped++;
    this.state.totals.skipped++;
    this.skips.add(reason, key);
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

  private counted(): number {
    return this.items() + this.run.skipped;
  }

  private draw(): void {
    const fraction = this.total.value > 0 ? Math.min(1, this.position / this.total.value) : 1;
    const filled = Math.round(fraction * BAR);
    const amount =
      this.total.unit === 'bytes'
        ? `${formatBytes(this.position)}/${formatBytes(this.total.value)}`
        : `${this.position}/${this.total.value} ${this.total.unit}`;
    const rate = Math.round(this.items() / ((performance.now() - this.started) / 1000));
    const { created, updated, duplicate, rejected } = this.run;
    this.out.write(
      `\r\x1b[K[${'#'.repeat(filled)}${'.'.repeat(BAR - filled)}] ${(fraction * 100).toFixed(0)}% ${amount}  ${rate}/s  ` +
        `created ${created}  updated ${updated}  duplicate ${duplicate}  rejected ${rejected}`,
    );
  }

  summary(source: string, earlier: number): Summary {
    const seconds = (performance.now() - this.started) / 1000;
    return {
      source,
      target: this.state.target,
      seconds: Math.round(seconds * 10) / 10,
      items_per_second: Math.round(this.items() / Math.max(seconds, 0.001)),
      counted: earlier + this.counted(),
      earlier,
      run: { ...this.run },
      all_runs: { ...this.state.totals },
      rejected: this.rejections.list(),
      skipped: this.skips.list(),
    };
  }
}

export function formatSummary(summary: Summary, interrupted: boolean): string {
  const { created, updated, duplicate, rejected, skipped } = summary.run;
  const lines = [
    `${interrupted ? 'stopped' : 'imported'} ${summary.target} into ${summary.source}: ${summary.counted} counted in ${summary.seconds} s (${summary.items_per_second} items/s)`,
    `  created ${created}, updated ${updated}, duplicate ${duplicate}, rejected ${rejected}, skipped ${skipped}${summary.earlier ? `, done by earlier runs ${summary.earlier}` : ''}`,
  ];
  const all = summary.all_runs;
  const total = (t: typeof all) => t.created + t.updated + t.duplicate + t.rejected + t.skipped;
  if (total(all) !== total(summary.run)) {
    lines.push(
      `  all runs on this source: created ${all.created}, updated ${all.updated}, duplicate ${all.duplicate}, rejected ${all.rejected}, skipped ${all.skipped}`,
    );
  }
  for (const [what, reasons] of [
    ['rejected', summary.rejected],
    ['skipped', summary.skipped],
  ] as const) {
    if (reasons.length === 0) continue;
    lines.push(`  ${what}:`);
    for (const { reason, count, examples } of reasons)
      lines.push(`    ${count}× ${reason}  (e.g. ${examples.join(', ')})`);
  }
  if (interrupted) lines.push('  run the same command again to continue where it stopped');
  return lines.join('\n');
}
