import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { Search } from '@memex/contracts';
import { Bus } from '@memex/bus';
import { speakWorkerHeartbeat, startStack, type TestStack } from '@memex/e2e';
import { waitUntil } from '@memex/testing';

const CLI = fileURLToPath(new URL('../../bin/memex.js', import.meta.url));

/** The README's walk-through of watched folders, as written, against a real stack. */
describe('memex sources', () => {
  let stack: TestStack;
  let papers: string;
  before(async () => {
    stack = await startStack(['ingest', 'pipelines', 'search', 'sources']);
    papers = path.join(await fs.mkdtemp(path.join(os.tmpdir(), 'memex-cli-sources-')), 'Papers');
    await fs.mkdir(papers);
    await fs.writeFile(path.join(papers, 'transformers.md'), '# Attention\n\nSelf-attention replaces recurrence.\n');
  });
  after(async () => {
    await stack?.stop();
    await fs.rm(path.dirname(papers), { recursive: true, force: true });
  });

  const memex = async (...args: string[]) =>
    (
      await promisify(execFile)(process.execPath, [CLI, ...args], {
        env: { ...process.env, MEMEX_URL: stack.url, MEMEX_HOME: stack.config.home },
      })
    ).stdout;

  test('add a folder, see it listed with its counts, search it by source:, pause, resume, rescan, remove', async () => {
    assert.match(await memex('sources', 'add', 'folder', papers, '--labels', 'client:acme'), /as source papers/);
    await waitUntil(async () => /1 items from 1 files/.test(await memex('sources')), 'the first scan', {
      timeoutMs: 30_000,
      everyMs: 200,
    });
    assert.match(
      await memex('sources', 'list'),
      /^papers {2}folder .*\/Papers\/ {2}active {2}1 items from 1 files \(0 in place\), 0 failed/m,
    );
    // The search read model follows the log: wait until it has the note.
    await waitUntil(
      async () => (await stack.owner.call(Search, { q: 'recurrence source:papers' })).hits.length === 1,
      'the note found with source:papers',
      { timeoutMs: 30_000, everyMs: 200 },
    );
    assert.equal((await stack.owner.call(Search, { q: 'recurrence source:elsewhere' })).hits.length, 0);

    await fs.writeFile(path.join(papers, 'notes.txt'), 'reading list');
    assert.match(await memex('sources', 'get', 'papers'), /labels: client:acme; media: auto/);
    assert.match(await memex('sources', 'pause', 'papers'), /paused papers/);
    assert.match(await memex('sources', 'list'), /papers .* paused/);
    await memex('sources', 'resume', 'papers');
    assert.match(await memex('sources', 'rescan', 'papers'), /papers: 2 files; 0 new/);
    assert.match(await memex('sources', 'list'), /2 items from 2 files/);
    assert.match(await memex('sources', 'remove', 'papers'), /removed papers; its items stay/);
    assert.match(await memex('sources'), /no sources/);
  });

  test('a worker: its failed files with why, and the jobs queued on it in its pipelines backlog', async () => {
    // This test speaks a worker's heartbeat (memex worker's own are in cli/src/worker/worker.test.ts).
    const bus = await Bus.connect(stack.config.natsUrl, 'cli-sources-worker');
    const silence = speakWorkerHeartbeat(bus.nc, {
      name: 'cli-nas',
      folders: ['/volume1/photos'],
      extracts: true,
      counts: { files: 0, items: 0, failed: 1 },
      jobs: { extract: 2, derive: 1 },
      failures: [{ path: '/volume1/photos/scan.pdf', reason: 'unreadable PDF', modified_at: '2026-01-01T00:00:00Z' }],
    });
    try {
      await waitUntil(async () => /cli-nas/.test(await memex('sources')), 'the worker heard', {
        timeoutMs: 30_000,
        everyMs: 200,
      });
      const got = await memex('sources', 'get', 'worker.cli-nas');
      assert.match(
        got,
        /^worker\.cli-nas {2}worker {2}\/volume1\/photos {2}active {2}0 items from 0 files, 1 failed, pipelines backlog 3 jobs \(3 on the worker\), reachable/m,
      );
      assert.match(got, /^ {2}failed: \/volume1\/photos\/scan\.pdf: unreadable PDF$/m);
    } finally {
      silence();
      await bus.close();
    }
  });
});
