import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { MailList } from '@memex/contracts';
import type { TestStack } from '@memex/e2e';
import type { Summary } from './report.js';
import { runImport, type ImportKind, type ImportOutcome } from './run.js';

/** Test helpers for imports. */

export function write(root: string, files: Record<string, string | Buffer>): void {
  for (const [name, content] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, name)), { recursive: true });
    fs.writeFileSync(path.join(root, name), content);
  }
}

/** The import summary accounts for every file: counted = earlier + created + updated + duplicate + rejected + skipped. */
export function assertAccounted(summary: Summary, files?: number): void {
  const { created, updated, duplicate, rejected, skipped } = summary.run;
  if (files !== undefined) assert.equal(summary.counted, files, 'every file is counted');
  assert.equal(summary.counted, summary.earlier + created + updated + duplicate + rejected + skipped);
  assert.equal(
    summary.rejected.reduce((n, r) => n + r.count, 0),
    rejected,
    'every rejection has a reason',
  );
  assert.equal(
    summary.skipped.reduce((n, r) => n + r.count, 0),
    skipped,
    'every skip has a reason',
  );
}

/** An import into a test stack as the owner, in small batches. */
export function importInto(stack: TestStack, kind: ImportKind, target: string, source: string): Promise<ImportOutcome> {
  return runImport({
    kind,
    target,
    source,
    home: stack.env.home,
    client: stack.owner,
    labels: [],
    batchItems: 50,
    batchBytes: 4 << 20,
    inFlight: 2,
    retries: 0,
    restart: false,
  });
}

/** The log's last sequence: what a read after an import waits for (`min_seq`). */
export async function lastSeq(stack: TestStack): Promise<number> {
  const health = (await (await fetch(`${stack.url}/healthz`)).json()) as { log: { last_seq: number } };
  return health.log.last_seq;
}

/** An account's messages with a label, once the mail views hold all that was logged. */
export async function labelledMessages(stack: TestStack, account: string, label: string) {
  return (await stack.owner.call(MailList, { view: 'label', label, account, min_seq: await lastSeq(stack) })).messages;
}
