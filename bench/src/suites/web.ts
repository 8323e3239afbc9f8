// The web UI in headless Chromium against a stack filled through the real pipeline: how long the
// first results take after the page loads, how long each keystroke takes to show its results
// (search as you type: the UI's pause of 120 ms included), and how much JavaScript is shipped.
import fs from 'node:fs';
import { gzipSync } from 'node:zlib';
import { Ingest, type ParamsOf } from '@memex/contracts';
import {
  assertWebBuilt,
  browserSkip,
  launchBrowser,
  mailItem,
  mime,
  openContext,
  signIn,
  startStack,
  WEB_DIST_INDEX,
} from '@memex/e2e';
import { seededRandom } from '@memex/testing';
import { percentile, type BenchResult } from '../result.js';
import { settled } from '../settled.js';

/** Items to fill (MEMEX_BENCH_WEB_ITEMS, default 10^5): the pipeline indexes 25–150 mails/s on this 2-core machine, so 10^5 takes 10–60 minutes. */
const ITEMS = Number(process.env.MEMEX_BENCH_WEB_ITEMS ?? 100_000);
/** Mails per memex.ingest call, and calls in flight at once. */
const BATCH = 200;
const IN_FLIGHT = 2;
const LOADS = 10;
const TYPED_QUERIES = 30;
const CORPUS = new URL('../../relevance/corpus.jsonl', import.meta.url);

/** English words (the relevance corpus's), most frequent first, and a Zipf sampler over them. */
function vocabulary(random: () => number): { words: string[]; word: () => string } {
  const counts = new Map<string, number>();
  for (const line of fs.readFileSync(CORPUS, 'utf8').split('\n').filter(Boolean)) {
    const { title, text } = JSON.parse(line) as { title: string; text: string };
    for (const w of `${title} ${text}`.toLowerCase().match(/[a-z]{3,}/g) ?? []) counts.set(w, (counts.get(w) ?? 0) + 1);
  }
  const words = [...counts.entries()].sort((a, b) => b[1] - a[1]).map(([w]) => w);
  const cumulative: number[] = [];
  let sum = 0;
  for (let r = 0; r < words.length; r++) cumulative.push((sum += 1 / (r + 1)));
  return {
    words,
    word: () => {
      const x = random() * sum;
      let lo = 0;
      let hi = words.length - 1;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (cumulative[mid]! < x) lo = mid + 1;
        else hi = mid;
      }
      return words[lo]!;
    },
  };
}

const sentence = (word: () => string, n: number) => Array.from({ length: n }, word).join(' ');

/** The gzipped size of each JavaScript file the build made, and of those index.html loads first. */
function shippedJs(): { initial: number; all: number } {
  const assets = new URL('assets/', `file://${WEB_DIST_INDEX}`);
  const index = fs.readFileSync(WEB_DIST_INDEX, 'utf8');
  let initial = 0;
  let all = 0;
  for (const file of fs.readdirSync(assets).filter((f) => f.endsWith('.js'))) {
    const size = gzipSync(fs.readFileSync(new URL(file, assets))).length;
    all += size;
    if (index.includes(file)) initial += size;
  }
  return { initial, all };
}

export async function run(): Promise<BenchResult[]> {
  const skip = browserSkip();
  if (skip) throw new Error(skip);
  assertWebBuilt();
  const random = seededRandom(7);
  const { words, word } = vocabulary(random);
  const stack = await startStack(['ingest', 'pipelines', 'search', 'graph']);
  try {
    const filling = performance.now();
    const batch = (i: number) => {
      const items = Array.from({ length: Math.min(BATCH, ITEMS - i) }, (_, j) => {
        const n = i + j;
        const bytes = mime(
          [
            ['From', `Person ${n % 300} <p${n % 300}@example.com>`],
            ['To', 'Sam Rivera <sam@example.com>'],
            ['Subject', sentence(word, 4)],
            ['Date', new Date(Date.UTC(2000 + (n % 24), n % 12, 1 + (n % 28))).toUTCString()],
            ['Message-ID', `<${n}@bench.example>`],
          ],
          `${sentence(word, 40)}.\n`,
        );
        return mailItem(bytes, 'bench-web', `m${n}`);
      });
      return ingestRetrying(items);
    };
    // Under load a batch can outlast the RPC timeout while ingest still takes it in; sent again,
    // ingest knows each mail by its source and external id, so nothing is stored twice.
    const ingestRetrying = async (items: ParamsOf<typeof Ingest>['items'], attempt = 1): Promise<unknown> => {
      try {
        return await stack.owner.call(Ingest, { items });
      } catch (error) {
        const code = (error as { code?: string }).code;
        if (attempt >= 5 || (code !== 'timeout' && code !== 'unavailable')) throw error;
        return ingestRetrying(items, attempt + 1);
      }
    };
    // A few batches in flight keep ingest busy while the next is generated and sent.
    const starts = Array.from({ length: Math.ceil(ITEMS / BATCH) }, (_, k) => k * BATCH);
    for (let k = 0; k < starts.length; k += IN_FLIGHT) await Promise.all(starts.slice(k, k + IN_FLIGHT).map(batch));
    await settled(stack.owner, stack.url, words[0]!, 60 * 60_000);
    const filled = (performance.now() - filling) / 1000;
    const how = `${ITEMS} mails indexed through ingest and the pipeline in ${Math.round(filled)} s`;

    const browser = await launchBrowser();
    try {
      const { page } = await openContext(browser);
      await signIn(page, stack.url, stack.ownerToken);
      // First results: a fresh navigation to /search?q=… until the first hit is on screen.
      const loads: number[] = [];
      for (let i = 0; i < LOADS; i++) {
        const q = words[50 + i]!;
        const started = performance.now();
        await page.goto(`${stack.url}/search?q=${q}`);
        await page.locator(`.results[data-query="${q}"] .hit`).first().waitFor();
        loads.push(performance.now() - started);
      }
      // As you type: each keystroke until that prefix's results are shown.
      const keystrokes: number[] = [];
      const box = page.locator('#q');
      for (let i = 0; i < TYPED_QUERIES; i++) {
        await box.fill('');
        const query = `${words[20 + Math.floor(random() * 400)]} ${words[20 + Math.floor(random() * 400)]}`;
        for (let end = 1; end <= query.length; end++) {
          if (query[end - 1] === ' ') {
            await page.keyboard.type(' ');
            continue;
          }
          const started = performance.now();
          await page.keyboard.type(query[end - 1]!);
          await page.locator(`.results[data-query="${query.slice(0, end).trim()}"]`).waitFor();
          keystrokes.push(performance.now() - started);
        }
      }
      const js = shippedJs();
      const ms = (x: number) => Math.round(x);
      return [
        {
          suite: 'web',
          name: `time to first results after load at ${ITEMS} items (p50)`,
          value: ms(percentile(loads, 50)),
          unit: 'ms',
          notes: `${LOADS} loads of /search?q=<word>, navigation start to first hit drawn; first (cold) load ${ms(loads[0]!)} ms; ${how}`,
        },
        {
          suite: 'web',
          name: `search as you type at ${ITEMS} items (p95)`,
          value: ms(percentile(keystrokes, 95)),
          unit: 'ms',
          notes: `${keystrokes.length} keystrokes, key press to that prefix's results drawn (includes the UI's 120 ms typing pause); p50 ${ms(percentile(keystrokes, 50))} ms`,
        },
        {
          suite: 'web',
          name: 'JavaScript shipped, first load (gzipped)',
          value: Math.round(js.initial / 102.4) / 10,
          unit: 'KB',
          notes: `all JavaScript including the pages loaded on first use (graph: cytoscape; items: mail parsing and sanitizing): ${Math.round(js.all / 102.4) / 10} KB gzipped`,
        },
      ];
    } finally {
      await browser.close();
    }
  } finally {
    await stack.stop();
  }
}
