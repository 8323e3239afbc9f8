/// <reference lib="dom" />
// The web UI in headless Chromium against every service as `npm start` runs them, filled with
// generated small mails; then how long the first results take after the page loads, how long each
// keystroke takes to show its results (search as you type), both timed in the page, and how much
// JavaScript is shipped.
//
// Two fills (MEMEX_BENCH_WEB_FILL):
// - `bulk` (default): one mail through `memex import mbox` and the whole pipeline (which makes
//   search's space and tables), then the rest written straight into search's read model as its
//   projector builds it (`bulkLoadSearch`): 10^5 mails in minutes. The search page reads only
//   that model (memex.search through the gateway; the hits carry title, date, snippet and why),
//   so the figures are of the read model the UI queries; other services hold just the one mail.
// - `import`: every mail through the real import path, a part at a time until the size asked for
//   or the time allowed, each part searchable (pipelines idle, read models caught up) before the
//   next — about 35,000 mails in 32 min on two cores, so for smaller sizes.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { newId } from '@memex/bus';
import { assertWebBuilt, browserSkip, launchBrowser, openContext, signIn, WEB_DIST_INDEX } from '@memex/e2e';
import { writeMbox, type GeneratedMessage } from '@memex/ingest/testing';
import { seededRandom } from '@memex/testing';
import { percentile, type BenchResult } from '../result.js';
import { bulkLoadSearch } from '../search-bulk.js';
import { settled } from '../settled.js';
import { importMbox, startWholeStack, type WholeStack } from '../whole-stack.js';

/** Items to fill (MEMEX_BENCH_WEB_ITEMS, default 10^5). */
const ITEMS = Number(process.env.MEMEX_BENCH_WEB_ITEMS ?? 100_000);
/** How to fill (MEMEX_BENCH_WEB_FILL): `bulk` into search's read model (default), or `import` through the import path. */
const FILL = process.env.MEMEX_BENCH_WEB_FILL ?? 'bulk';
if (FILL !== 'bulk' && FILL !== 'import') throw new Error(`MEMEX_BENCH_WEB_FILL is bulk or import, not ${FILL}`);
/** Messages per imported mbox (MEMEX_BENCH_WEB_PART): the fill stops before a part that would end past the time allowed. */
const PART = Number(process.env.MEMEX_BENCH_WEB_PART ?? 10_000);
/** Minutes the fill may take (MEMEX_BENCH_WEB_FILL_MINUTES, default no limit): the figures are then at the size reached. */
const FILL_MINUTES = Number(process.env.MEMEX_BENCH_WEB_FILL_MINUTES ?? Infinity);
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

/** Small mail number `n`: a four-word subject, a forty-word body, from one of 300 people. */
function smallMail(n: number, word: () => string) {
  return {
    from: { name: `Person ${n % 300}`, address: `p${n % 300}@example.com` },
    to: { name: 'Sam Rivera', address: 'sam@example.com' },
    subject: sentence(word, 4),
    body: `${sentence(word, 40)}.\n`,
    date: new Date(Date.UTC(2000 + (n % 24), n % 12, 1 + (n % 28))),
  };
}

/** `count` small mails as an mbox's messages, numbered from `first`. */
function* smallMessages(first: number, count: number, word: () => string): Generator<GeneratedMessage> {
  for (let n = first; n < first + count; n++) {
    const mail = smallMail(n, word);
    const messageId = `${n}@bench.example`;
    const headers = [
      `From: ${mail.from.name} <${mail.from.address}>`,
      `To: ${mail.to.name} <${mail.to.address}>`,
      `Subject: ${mail.subject}`,
      `Date: ${mail.date.toUTCString()}`,
      `Message-ID: <${messageId}>`,
      'Content-Type: text/plain; charset=utf-8',
    ];
    const bytes = Buffer.from(`${headers.join('\n')}\n\n${mail.body}`, 'utf8');
    yield { bytes, messageId, date: mail.date, attachments: 0 };
  }
}

/** Imports mails numbered from `first` as one mbox (its own source: a source remembers the file it came from) and waits until they are searchable. */
async function importPart(
  stack: WholeStack,
  work: string,
  first: number,
  size: number,
  word: () => string,
  probe: string,
) {
  const mbox = path.join(work, `part-${first}.mbox`);
  await writeMbox(mbox, smallMessages(first, size, word));
  await importMbox(stack, mbox, `bench-web-${first}`);
  await settled(stack.client, stack.url, probe, 4 * 60 * 60_000);
  fs.rmSync(mbox);
}

/** Every mail through the import path, a part at a time within the time allowed; a description of the fill. */
async function fillByImport(stack: WholeStack, work: string, word: () => string, probe: string) {
  const filling = performance.now();
  const minutes = () => (performance.now() - filling) / 60_000;
  let items = 0;
  let lastPart = 0;
  // A part is imported only when it should end within the time allowed, judged by the last one's.
  while (items < ITEMS && minutes() + lastPart < FILL_MINUTES) {
    const started = minutes();
    const size = Math.min(PART, ITEMS - items);
    await importPart(stack, work, items, size, word, probe);
    items += size;
    lastPart = minutes() - started;
    console.log(
      `${items} mails searchable after ${Math.round(minutes() * 60)} s (load ${os.loadavg()[0]!.toFixed(1)})`,
    );
  }
  const filled = Math.round(minutes() * 60);
  const reached = items < ITEMS ? ` (${ITEMS} asked for: the next part would have ended past ${FILL_MINUTES} min)` : '';
  return {
    items,
    how: `${items} mails imported by memex import mbox, whole stack, searchable in ${filled} s${reached}`,
  };
}

/** One mail through the import path (making search's space and tables), the rest bulk-loaded into search's read model. */
async function fillByBulk(stack: WholeStack, work: string, word: () => string, probe: string) {
  await importPart(stack, work, 0, 1, word, probe);
  const lower = ({ name, address }: { name: string; address: string }) => `${name} <${address}>`.toLowerCase();
  const loaded = await bulkLoadSearch(stack.env.config.databaseUrl, ({ items }) => {
    if (items + 1 >= ITEMS) return undefined;
    return Array.from({ length: Math.min(1000, ITEMS - 1 - items) }, (_, j) => {
      const mail = smallMail(1 + items + j, word);
      return {
        id: newId(),
        title: mail.subject,
        text: mail.body,
        occurred_at: mail.date.toISOString(),
        from: lower(mail.from),
        to: lower(mail.to),
      };
    });
  });
  const how =
    `1 mail imported by memex import mbox, whole stack, then ${loaded.items} bulk-loaded into search's read model ` +
    `(split and embedded in ${Math.round(loaded.generated)} s, copied and indexed in ${Math.round(loaded.loaded)} s)`;
  console.log(`${how} (load ${os.loadavg()[0]!.toFixed(1)})`);
  return { items: 1 + loaded.items, how };
}

/** What the page records of its own drawing (`recordDrawing`), read back by the bench. */
interface Drawing {
  /** When the last key went down. */
  keyAt: number;
  /** When results for each query were first drawn (since the last reset). */
  drawn: Record<string, number>;
  /** When this page load's first hit was drawn (since navigation start). */
  firstHit?: number;
}

/**
 * Run in the page before its own scripts: records, on the page's clock, when keys go down and the
 * frame after results (and the first hit) were put in the page. Playwright's waitFor polls at
 * 0, 20, 50, 100, 100 ms, then every 500 ms, so what it sees was drawn up to half a second earlier.
 */
function recordDrawing() {
  const drawing = window as unknown as Drawing;
  drawing.keyAt = 0;
  drawing.drawn = {};
  addEventListener('keydown', () => (drawing.keyAt = performance.now()), true);
  new MutationObserver(() => {
    const query = document.querySelector('.results')?.getAttribute('data-query');
    if (query && !(query in drawing.drawn)) {
      drawing.drawn[query] = NaN; // taken: one frame callback per query
      requestAnimationFrame(() => (drawing.drawn[query] = performance.now()));
    }
    if (drawing.firstHit === undefined && document.querySelector('.results .hit')) {
      drawing.firstHit = NaN;
      requestAnimationFrame(() => (drawing.firstHit = performance.now()));
    }
  }).observe(document, { subtree: true, childList: true, attributes: true, attributeFilter: ['data-query'] });
}

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
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'memex-bench-web-'));
  const stack = await startWholeStack();
  try {
    const { items, how } = await (FILL === 'bulk' ? fillByBulk : fillByImport)(stack, work, word, words[0]!);

    const browser = await launchBrowser();
    try {
      const { page } = await openContext(browser);
      await page.addInitScript(recordDrawing);
      await signIn(page, stack.url, stack.token);
      // First results: a fresh navigation to /search?q=… until the first hit is on screen. Each
      // reading waits a frame in the page first, so recordDrawing's frame callbacks have run.
      const loads: number[] = [];
      for (let i = 0; i < LOADS; i++) {
        const q = words[50 + i]!;
        await page.goto(`${stack.url}/search?q=${q}`);
        await page.locator(`.results[data-query="${q}"] .hit`).first().waitFor();
        loads.push(
          await page.evaluate(
            async () => (await new Promise(requestAnimationFrame), (window as unknown as Drawing).firstHit!),
          ),
        );
      }
      // As you type: each keystroke until that prefix's results are drawn, and the search request in it.
      const keystrokes: Array<{ prefix: string; ms: number; request: number; seen: number }> = [];
      const box = page.locator('#q');
      for (let i = 0; i < TYPED_QUERIES; i++) {
        await box.fill('');
        const query = `${words[20 + Math.floor(random() * 400)]} ${words[20 + Math.floor(random() * 400)]}`;
        for (let end = 1; end <= query.length; end++) {
          if (query[end - 1] === ' ') {
            await page.keyboard.type(' ');
            continue;
          }
          const prefix = query.slice(0, end).trim();
          await page.evaluate(() => {
            (window as unknown as Drawing).drawn = {};
            performance.clearResourceTimings();
          });
          const started = performance.now();
          await page.keyboard.type(query[end - 1]!);
          await page.locator(`.results[data-query="${prefix}"]`).waitFor();
          const seen = performance.now() - started;
          const { ms, request } = await page.evaluate(async (q) => {
            await new Promise(requestAnimationFrame);
            const drawing = window as unknown as Drawing;
            const searches = performance
              .getEntriesByType('resource')
              .filter((e) => e.name.endsWith('/api/v1/memex/search') && e.startTime >= drawing.keyAt);
            return { ms: drawing.drawn[q]! - drawing.keyAt, request: searches.at(-1)?.duration ?? NaN };
          }, prefix);
          keystrokes.push({ prefix, ms, request, seen });
        }
      }
      const typed = keystrokes.map((k) => k.ms);
      const requests = keystrokes.map((k) => k.request).filter((x) => !Number.isNaN(x));
      const slowest = [...keystrokes].sort((a, b) => b.ms - a.ms).slice(0, 8);
      console.log(
        `slowest keystrokes: ${slowest.map((k) => `"${k.prefix}" ${Math.round(k.ms)} ms (request ${Math.round(k.request)})`).join(', ')}`,
      );
      const js = shippedJs();
      const ms = (x: number) => Math.round(x);
      return [
        {
          suite: 'web',
          name: `time to first results after load at ${items} items (p50)`,
          value: ms(percentile(loads, 50)),
          unit: 'ms',
          notes: `${LOADS} loads of /search?q=<word>, navigation start to the frame after the first hit was put in the page (timed in the page); first (cold) load ${ms(loads[0]!)} ms; ${how}`,
        },
        {
          suite: 'web',
          name: `search as you type at ${items} items (p95)`,
          value: ms(percentile(typed, 95)),
          unit: 'ms',
          notes:
            `${typed.length} keystrokes, keydown to the frame after that prefix's results were put in the page (timed in the page); p50 ${ms(percentile(typed, 50))} ms; ` +
            `its memex.search request (browser to gateway to search and back): p50 ${ms(percentile(requests, 50))} ms, p95 ${ms(percentile(requests, 95))} ms; ` +
            `as Playwright's waitFor saw it (it polls at 0, 20, 50, 100, 100 ms, then every 500): p50 ${ms(
              percentile(
                keystrokes.map((k) => k.seen),
                50,
              ),
            )} ms, p95 ${ms(
              percentile(
                keystrokes.map((k) => k.seen),
                95,
              ),
            )} ms`,
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
    fs.rmSync(work, { recursive: true, force: true });
  }
}
