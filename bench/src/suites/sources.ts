import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Search, SourcesAdd, SourcesGet } from '@memex/contracts';
import { startStack } from '@memex/e2e';
import { waitUntil } from '@memex/testing';
import { percentile, type BenchResult } from '../result.js';

/**
 * Files of the first scan: MEMEX_BENCH_SOURCE_FILES (10000 for the figure), else 1,000 so
 * that a run on a busy 2-core machine (the scan, then indexing every note, then the latency
 * files) stays within about three minutes.
 */
const FILES = Number(process.env['MEMEX_BENCH_SOURCE_FILES'] || 1_000);
/** Files timed one at a time from appearing in the folder to being found by search. */
const LATENCY_FILES = 20;

/** A word of letters only (search splits words at digits), different for every n and run. */
function letters(n: number): string {
  return (n * 7919 + Date.now())
    .toString(26)
    .split('')
    .map((c) => String.fromCharCode(97 + parseInt(c, 26)))
    .join('');
}

/** A small Markdown note with a word no other file has. */
function note(i: number): string {
  return `# Note ${i}\n\nMeeting notes about the project, word marker${i}x. Next steps and owners follow.\n`;
}

/**
 * Watched folders through the full stack (gateway, ingest, pipelines, search, sources):
 * files/s of a new folder's first scan (small Markdown notes, copied into the blob store), and
 * the time from a file being written into a watched folder to memex.search finding it.
 */
export async function run(): Promise<BenchResult[]> {
  const load = () => `load ${os.loadavg()[0]!.toFixed(1)}`;
  const stack = await startStack(['ingest', 'pipelines', 'search', 'sources']);
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'memex-bench-sources-'));
  const results: BenchResult[] = [];
  try {
    const folder = path.join(dir, 'notes');
    for (let i = 0; i < FILES; i += 100) {
      const sub = path.join(folder, `batch-${Math.floor(i / 1000)}`);
      await fs.mkdir(sub, { recursive: true });
      await Promise.all(
        Array.from({ length: Math.min(100, FILES - i) }, (_, j) =>
          fs.writeFile(path.join(sub, `note-${i + j}.md`), note(i + j)),
        ),
      );
    }
    let started = performance.now();
    const { id } = await stack.owner.call(SourcesAdd, { kind: 'folder', path: folder });
    await waitUntil(
      async () => (await stack.owner.call(SourcesGet, { id })).source.last_scan !== null,
      'the first scan',
      {
        timeoutMs: 900_000,
        everyMs: 250,
      },
    );
    const seconds = (performance.now() - started) / 1000;
    const { source } = await stack.owner.call(SourcesGet, { id });
    if (source.counts.files !== FILES) throw new Error(`the scan recorded ${source.counts.files} of ${FILES} files`);
    results.push({
      suite: 'sources',
      name: `first scan of a watched folder of ${FILES} small Markdown notes (read, hashed, memex.ingest, path → item recorded)`,
      value: Math.round(FILES / seconds),
      unit: 'files/s',
      notes: `${seconds.toFixed(1)} s; ${load()}`,
    });

    console.log(`${results[0]!.name}: ${results[0]!.value} ${results[0]!.unit} — ${results[0]!.notes}`);
    // Latency on a quiet memex: first every note of the scan is extracted and indexed.
    started = performance.now();
    await waitUntil(
      async () => (await stack.owner.call(Search, { q: `meeting source:${id}` })).total >= FILES,
      'every note searchable',
      { timeoutMs: 900_000, everyMs: 1000 },
    );
    const indexed = (performance.now() - started) / 1000;
    console.log(`every note searchable ${indexed.toFixed(1)} s after the first scan ended; ${load()}`);
    const toItem: number[] = [];
    const latencies: number[] = [];
    for (let n = 0; n < LATENCY_FILES; n++) {
      const word = `zz${letters(n)}`;
      started = performance.now();
      await fs.writeFile(path.join(folder, `fresh-${n}.md`), `# Fresh note ${n}\n\nA new note: ${word}.\n`);
      await waitUntil(
        async () => (await stack.owner.call(SourcesGet, { id })).source.counts.files === FILES + n + 1,
        `fresh-${n}.md an item`,
        { timeoutMs: 60_000, everyMs: 20 },
      );
      toItem.push(performance.now() - started);
      // The word is in no other file, in any run: a hit is the new file.
      const found = async () => (await stack.owner.call(Search, { q: word })).hits.length > 0;
      await waitUntil(found, `${word} searchable`, { timeoutMs: 60_000, everyMs: 20 });
      latencies.push(performance.now() - started);
    }
    const itemP = (q: number) => Math.round(percentile(toItem, q));
    results.push({
      suite: 'sources',
      name: `a file written into a watched folder until it is an item (recorded by the sources service), p50`,
      value: itemP(50),
      unit: 'ms',
      notes: `p95 ${itemP(95)} ms; ${load()}`,
    });
    const p = (q: number) => Math.round(percentile(latencies, q));
    results.push({
      suite: 'sources',
      name: `a file written into a watched folder until memex.search finds it (${LATENCY_FILES} files, one at a time), p50`,
      value: p(50),
      unit: 'ms',
      notes: `p95 ${p(95)} ms, max ${p(100)} ms; includes chokidar's 200 ms write-settle wait and 150 ms batching; ${load()}`,
    });
    results.push({
      suite: 'sources',
      name: `a file written into a watched folder until memex.search finds it, p95`,
      value: p(95),
      unit: 'ms',
      notes: load(),
    });
  } finally {
    await stack.stop();
    await fs.rm(dir, { recursive: true, force: true });
  }
  return results;
}
