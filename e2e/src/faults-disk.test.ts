import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Bus, readEventsOf } from '@memex/bus';
import { ItemIngested, MailAccounts } from '@memex/contracts';
import { mountSmallFilesystem, smallFilesystemSkip, waitUntil, type SmallFilesystem } from '@memex/testing';
import { importMbox, publishedEmails, spawnMemex, type ImportTarget } from './mbox-import.js';
import { archiveFor, startSupervisedStack, type SupervisedStack } from './supervised-stack.js';

/**
 * The blob disk fills during an import: the blob store is a real tmpfs of 8 MB (mounted by this
 * test, which needs root), grown to 64 MB afterwards (a message takes about 12 KB there: a 4 KB page per blob). Items that cannot be stored are failed
 * visibly — the request answers `unavailable` naming the full store, /healthz is degraded and
 * `memex status` says why, the import stops with a true summary — nothing is half-stored (no
 * temp file, no event naming a blob that is not there), and once space returns the same import
 * stores the rest, each message once. (`memex failures` lists events a projector could not apply;
 * these items never reached the log, so they are not there.)
 */
const MESSAGES = 1_000;
const skip = smallFilesystemSkip();

let disk: SmallFilesystem;
let stack: SupervisedStack;
let target: ImportTarget;
before(async () => {
  if (skip) return;
  disk = mountSmallFilesystem(fs.mkdtempSync(path.join(os.tmpdir(), 'memex-blobs-')), 8 * 1024 * 1024);
  stack = await startSupervisedStack(['gateway', 'ingest'], { blobsDir: disk.dir });
  target = await archiveFor(stack, MESSAGES, 31);
});
after(async () => {
  await stack?.stop();
  disk?.unmount();
});

/** Every file under the blob store. */
function blobFiles(dir: string): string[] {
  return fs
    .readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => e.name);
}

test(
  `the blob disk fills during a ${MESSAGES}-message import: failed visibly, nothing half-stored, stored once space returns`,
  { skip },
  async () => {
    const stopped = await importMbox(target, 1).done;
    assert.equal(stopped.code, 1, 'the import stops while the disk is full');
    assert.match(String(stopped.summary['error']), /blob store at .* is full \(ENOSPC\)/);
    const firstRun = stopped.summary['run'] as Record<string, number>;
    assert.ok(firstRun['created']! > 0 && firstRun['created']! < MESSAGES, JSON.stringify(stopped.summary));
    assert.equal(
      stopped.summary['counted'],
      firstRun['created']! + firstRun['duplicate']!,
      'the summary counts only what was stored',
    );

    // Healthz and memex status say why while the disk is full.
    const health = await stack.health();
    assert.equal(health?.status, 'degraded');
    const ingest = health!.services.find((s) => s.service === 'ingest')!;
    assert.match(ingest.problems?.join('\n') ?? '', /blob store at .* has been full since/);
    const status = await spawnMemex(target, ['status']).done;
    assert.equal(status.code, 1);
    assert.match(status.stdout, /ingest: the blob store at .* has been full/);

    // Nothing half-stored: no temp file, and every blob an event names is there, whole.
    const files = blobFiles(disk.dir);
    assert.deepEqual(
      files.filter((f) => f.endsWith('.tmp')),
      [],
      'no temp file left',
    );
    const { published } = await publishedEmails(stack.config.natsUrl);
    assert.equal(published.size, firstRun['created']);
    const names = new Set(files);
    const { missing, checked } = await blobsNamed(stack, names);
    assert.deepEqual(missing, [], 'every blob an event names was written');

    // Space returns: the same command stores the rest, each message once, and healthz is ok again.
    disk.resize(64 * 1024 * 1024);
    const spaceBack = Date.now();
    const resumed = await importMbox(target, 5).done;
    assert.equal(resumed.code, 0, JSON.stringify(resumed.summary));
    const all = resumed.summary['all_runs'] as Record<string, number>;
    assert.equal(all['created'], MESSAGES, JSON.stringify(all));
    const after = await publishedEmails(stack.config.natsUrl);
    assert.equal(after.published.size, MESSAGES);
    assert.deepEqual([...new Set(after.published.values())], [1]);
    const { accounts } = await stack.owner.call(MailAccounts, { min_seq: after.lastSeq });
    assert.deepEqual(
      accounts.map((a) => a.messages),
      [MESSAGES],
    );
    await waitUntil(async () => (await stack.health())?.status === 'ok', 'healthz ok once blobs are written again');
    console.log(
      `faults (blob disk full): ${firstRun['created']} of ${MESSAGES} messages stored before the 8 MB store filled; ` +
        `${checked} blobs named by events all present, no temp files; after growing it the import stored the rest in ${Date.now() - spaceBack} ms; ${MESSAGES} messages checked once each`,
    );
  },
);

/** The content and text blobs each logged email names that are not in the store. */
async function blobsNamed(stack: SupervisedStack, files: Set<string>): Promise<{ missing: string[]; checked: number }> {
  const bus = await Bus.connect(stack.config.natsUrl, 'blob-check');
  const missing: string[] = [];
  let checked = 0;
  try {
    for await (const { event } of readEventsOf(bus, ItemIngested, { untilCaughtUp: true })) {
      for (const hash of [event.data.content_sha256, event.data.text_sha256]) {
        checked++;
        if (!files.has(hash)) missing.push(`${event.data.id}: ${hash}`);
      }
    }
  } finally {
    await bus.close();
  }
  return { missing, checked };
}
