import type { PassedOver } from '@memex/contracts';
import type { Static } from '@sinclair/typebox';

export type PassedOverList = Static<typeof PassedOver>;

/** The files a scan sends nowhere, counted by why, with a few of each (`source.scanned`'s `passed_over`). */
export class PassedOverFiles {
  private readonly byReason = new Map<string, { count: number; examples: string[] }>();

  add(path: string, reason: string): void {
    this.addCounted({ reason, count: 1, examples: [path] });
  }

  /** A count of files passed over for one reason, with some of them (what an archive's read recorded). */
  addCounted({ reason, count, examples }: PassedOverList[number]): void {
    // Within the event's bounds, whatever a file is named (`no handler takes .<255 characters> files`).
    const why = reason.slice(0, 500);
    const entry = this.byReason.get(why) ?? { count: 0, examples: [] };
    entry.count += count;
    for (const path of examples) if (entry.examples.length < 3) entry.examples.push(path.slice(0, 4096));
    this.byReason.set(why, entry);
  }

  /** Most frequent first; at most the 100 most frequent reasons (a type a reason). */
  reasons(): PassedOverList {
    return [...this.byReason]
      .map(([reason, entry]) => ({ reason, ...entry }))
      .sort((a, b) => b.count - a.count || a.reason.localeCompare(b.reason))
      .slice(0, 100);
  }
}
