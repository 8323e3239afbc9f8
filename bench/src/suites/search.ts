import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { newId } from '@memex/bus';
import { Search, type ItemKind, type SearchMode } from '@memex/contracts';
import { createDatabase } from '@memex/db';
import { benchEmbed, builtinGloveTablePath, defaultProvider, parseGloveTable } from '@memex/embeddings';
import { PROBES, SearchHarness, shardOf, shardsOf, type TestItem } from '@memex/search/testing';
import { seededRandom } from '@memex/testing';
import { Notmuch, timed } from '../notmuch.js';
import { percentile, type BenchResult } from '../result.js';
import { bulkLoadSearch } from '../search-bulk.js';

const MODES: SearchMode[] = ['keyword', 'meaning', 'hybrid'];
const RELEVANCE_DIR = new URL('../../relevance/', import.meta.url);
/** Passage counts to fill through the whole pipeline (MEMEX_BENCH_SEARCH_SIZES)... */
const SIZES = sizes(process.env.MEMEX_BENCH_SEARCH_SIZES, '10000,100000');
/** ...and to bulk-load into the read model (MEMEX_BENCH_SEARCH_BULK; empty to skip). */
const BULK_SIZES = sizes(process.env.MEMEX_BENCH_SEARCH_BULK, '1000000');

function sizes(value: string | undefined, fallback: string): number[] {
  return (value ?? fallback).split(',').filter(Boolean).map(Number);
}
const LATENCY_QUERIES = 200;

interface CorpusItem {
  id: string;
  kind: ItemKind | 'note';
  date: string;
  title: string;
  text: string;
  from?: string;
  to?: string;
}
interface Judged {
  id: string;
  q: string;
  type: string;
  relevant: Record<string, number>;
}

function readJsonl<T>(name: string): T[] {
  return fs
    .readFileSync(new URL(name, RELEVANCE_DIR), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as T);
}

function address(text: string | undefined): Array<{ name: string; address: string }> {
  const match = text ? /^(.*?)\s*<([^>]+)>$/.exec(text) : null;
  return match ? [{ name: match[1]!, address: match[2]!.toLowerCase() }] : [];
}

/** nDCG@k with gain 2^grade − 1 against the ideal order of the judgments. */
export function ndcgAt(ranked: string[], relevant: Record<string, number>, k = 10): number {
  const dcg = (grades: number[]) => grades.slice(0, k).reduce((sum, g, i) => sum + (2 ** g - 1) / Math.log2(i + 2), 0);
  const ideal = dcg(Object.values(relevant).sort((a, b) => b - a));
  return ideal === 0 ? 0 : dcg(ranked.map((id) => relevant[id] ?? 0)) / ideal;
}

export function recallAt(ranked: string[], relevant: Record<string, number>, k = 10): number {
  const wanted = Object.keys(relevant);
  return wanted.filter((id) => ranked.slice(0, k).includes(id)).length / wanted.length;
}

const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / Math.max(values.length, 1);
const r3 = (value: number) => Math.round(value * 1000) / 1000;

/** nDCG@10 and recall@10 of each mode over the judged set in bench/relevance. */
async function relevance(): Promise<BenchResult[]> {
  const corpus = readJsonl<CorpusItem>('corpus.jsonl');
  const queries = readJsonl<Judged>('queries.jsonl');
  const h = await SearchHarness.start({ workers: 2 });
  try {
    const corpusId = new Map<string, string>();
    for (const item of corpus) {
      const id =
        item.kind === 'note'
          ? await h.note(item.title, item.text)
          : await h.ingest({
              title: item.title,
              text: item.text,
              kind: item.kind,
              occurred_at: `${item.date}T12:00:00Z`,
              meta: { from: address(item.from), to: address(item.to) },
            });
      corpusId.set(id, item.id);
    }
    await h.settle(10 * 60_000);
    const results: BenchResult[] = [];
    for (const mode of MODES) {
      const scored: Array<{ type: string; ndcg: number; recall: number }> = [];
      for (const query of queries) {
        const { hits } = await h.call(Search, { q: query.q, mode, limit: 10 });
        const ranked = hits.map((hit) => corpusId.get(hit.id) ?? hit.id);
        scored.push({
          type: query.type,
          ndcg: ndcgAt(ranked, query.relevant),
          recall: recallAt(ranked, query.relevant),
        });
      }
      const byType = [...new Set(scored.map((s) => s.type))]
        .map((type) => `${type} ${r3(mean(scored.filter((s) => s.type === type).map((s) => s.ndcg)))}`)
        .join(', ');
      const set = `${queries.length} judged queries, ${corpus.length} items`;
      results.push(
        {
          suite: 'search',
          name: `relevance nDCG@10, ${mode}`,
          value: r3(mean(scored.map((s) => s.ndcg))),
          unit: 'nDCG',
          notes: `${set}; by type: ${byType}`,
        },
        {
          suite: 'search',
          name: `relevance recall@10, ${mode}`,
          value: r3(mean(scored.map((s) => s.recall))),
          unit: 'recall',
          notes: set,
        },
      );
    }
    return results;
  } finally {
    await h.stop();
  }
}

/** Zipf-distributed words from the GloVe vocabulary (frequency ordered): text with realistic term statistics. */
class TextGenerator {
  private readonly cumulative: Float64Array;
  /** Deterministic, so every run indexes the same text. */
  readonly random = seededRandom(42);

  constructor(readonly words: string[]) {
    this.cumulative = new Float64Array(words.length);
    let sum = 0;
    for (let r = 0; r < words.length; r++) this.cumulative[r] = sum += 1 / (r + 1);
    for (let r = 0; r < words.length; r++) this.cumulative[r]! /= sum;
  }

  word(): string {
    const x = this.random();
    let lo = 0;
    let hi = this.cumulative.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.cumulative[mid]! < x) lo = mid + 1;
      else hi = mid;
    }
    return this.words[lo]!;
  }

  /** Paragraphs of about 200 words (one passage each), of sentences of 8–20 words. */
  text(paragraphs: number): string {
    const out: string[] = [];
    for (let p = 0; p < paragraphs; p++) {
      const sentences: string[] = [];
      for (let n = 0; n < 200;) {
        const length = 8 + Math.floor(this.random() * 13);
        const words = Array.from({ length }, () => this.word());
        words[0] = words[0]!.charAt(0).toUpperCase() + words[0]!.slice(1);
        sentences.push(`${words.join(' ')}.`);
        n += length;
      }
      out.push(sentences.join(' '));
    }
    return out.join('\n\n');
  }

  /** A search a person might type: 1–3 words of middling frequency. */
  query(): string {
    const count = 1 + Math.floor(this.random() * 3);
    return Array.from({ length: count }, () => this.words[100 + Math.floor(this.random() * 2900)]!).join(' ');
  }
}

const labelOf = (passages: number) => (passages >= 1e6 ? `${passages / 1e6}M` : `${passages / 1e3}k`);

/** A synthetic mail of two ~200-word paragraphs (two passages), spread over 24 years. */
function syntheticMail(generator: TextGenerator, i: number): TestItem & { occurred_at: string } {
  return {
    title: generator.text(1).slice(0, 60).replace(/\.$/, ''),
    text: generator.text(2),
    kind: 'email',
    occurred_at: new Date(Date.UTC(2000 + (i % 24), i % 12, 1 + (i % 28))).toISOString(),
  };
}

/** A Maildir for notmuch to index the same mails as memex: `cur`, `new` and `tmp` in a fresh directory. */
function maildirFor(): string {
  const maildir = fs.mkdtempSync(path.join(os.tmpdir(), 'memex-bench-maildir-'));
  for (const sub of ['cur', 'new', 'tmp']) fs.mkdirSync(path.join(maildir, sub));
  return maildir;
}

/** Mails as messages in the Maildir, numbered from `first` (their Message-IDs and file names). */
function writeToMaildir(
  maildir: string,
  first: number,
  mails: Array<{ title: string; text: string; occurred_at: string }>,
) {
  mails.forEach((mail, j) =>
    fs.writeFileSync(
      path.join(maildir, 'cur', `${first + j}.bench:2,S`),
      `From: Bench <bench@example.com>\nTo: Sam <sam@example.com>\nSubject: ${mail.title}\nDate: ${new Date(mail.occurred_at).toUTCString()}\nMessage-ID: <${first + j}@bench.example>\n\n${mail.text}\n`,
    ),
  );
}

/** Indexing rate through the whole pipeline, then lag, latency, ANN recall and notmuch side by side. */
async function pipelineScale(target: number, generator: TextGenerator): Promise<BenchResult[]> {
  const label = labelOf(target);
  const items = Math.ceil(target / 2);
  const h = await SearchHarness.start({ workers: 2 });
  const maildir = maildirFor();
  try {
    // Texts and blobs first: what ingest does before tier 1 starts is not part of the indexing rate.
    const prepared: Array<{ item: TestItem; sha: string }> = [];
    for (let i = 0; i < items; i += 200) {
      const batch = Array.from({ length: Math.min(200, items - i) }, (_, j) => syntheticMail(generator, i + j));
      writeToMaildir(maildir, i, batch);
      const shas = await Promise.all(batch.map((item) => h.blobs.put(Buffer.from(item.text))));
      batch.forEach((item, j) => prepared.push({ item, sha: shas[j]! }));
    }
    const indexing = await timed(async () => {
      for (let i = 0; i < prepared.length; i += 500) await h.ingestPrepared(prepared.slice(i, i + 500));
      await h.settle(4 * 60 * 60_000);
    });
    const db = createDatabase<unknown>(h.env.config.databaseUrl, { schema: 'search', max: 2 });
    try {
      const { rows } = await sql<{ n: number }>`select count(*)::int as n from parts`.execute(db);
      const passages = rows[0]!.n;
      return [
        {
          suite: 'search',
          name: `indexing rate at ${label} passages (split, embed, project)`,
          value: Math.round(passages / (indexing / 1000)),
          unit: 'passages/s',
          notes: `${passages} passages of ${items} items in ${Math.round(indexing / 1000)} s, 2 worker threads`,
        },
        ...(await measure(h, db, generator, label, maildir)),
      ];
    } finally {
      await db.destroy();
    }
  } finally {
    await h.stop();
    fs.rmSync(maildir, { recursive: true, force: true });
  }
}

/**
 * The same read model at a size the pipeline would take hours to fill here, bulk-loaded as the
 * projector would build it (`bulkLoadSearch`). One item first goes through the whole pipeline,
 * which creates the space and its tables; the live services answer the queries. The same mails
 * go into a Maildir for notmuch, so keyword latency stands beside `notmuch search` at every size.
 */
async function bulkScale(target: number, generator: TextGenerator): Promise<BenchResult[]> {
  const label = labelOf(target);
  const h = await SearchHarness.start({ workers: 1 });
  const db = createDatabase<unknown>(h.env.config.databaseUrl, { schema: 'search', max: 2 });
  const maildir = maildirFor();
  try {
    await h.ingest(syntheticMail(generator, 0));
    await h.settle();
    const people = { from: 'bench <bench@example.com>', to: 'sam <sam@example.com>' };
    const { items, passages, generated, loaded } = await bulkLoadSearch(h.env.config.databaseUrl, (sofar) => {
      if (sofar.passages >= target) return undefined;
      const mails = Array.from({ length: 500 }, (_, j) => ({
        id: newId(),
        ...syntheticMail(generator, sofar.items + j),
        ...people,
      }));
      writeToMaildir(maildir, sofar.items, mails);
      return mails;
    });
    const measured = await measure(h, db, generator, label, maildir);
    const how = `${passages} passages of ${items} items bulk-loaded (split and embedded in ${Math.round(generated)} s; copied and indexed in ${Math.round(loaded)} s)`;
    return measured.map((result) => ({ ...result, notes: result.notes ? `${result.notes}; ${how}` : how }));
  } finally {
    await db.destroy();
    await h.stop();
    fs.rmSync(maildir, { recursive: true, force: true });
  }
}

/** Ingest-to-searchable lag, latency per mode (beside notmuch when a Maildir of the same mail is given), ANN recall. */
async function measure(
  h: SearchHarness,
  db: ReturnType<typeof createDatabase<unknown>>,
  generator: TextGenerator,
  label: string,
  maildir?: string,
): Promise<BenchResult[]> {
  const results: BenchResult[] = [];
  // Ingest → searchable, on the idle system.
  const lags: number[] = [];
  for (let i = 0; i < 5; i++) {
    const token = `zqxlag${label}${i}`;
    const started = performance.now();
    await h.ingest({ title: `lag probe ${i}`, text: `A fresh message mentioning ${token} once.` });
    while ((await h.call(Search, { q: token, mode: 'keyword', limit: 1 })).hits.length === 0) {
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    lags.push(performance.now() - started);
  }
  results.push({
    suite: 'search',
    name: `ingest-to-searchable lag at ${label}, p50 of 5`,
    value: Math.round(percentile(lags, 50)),
    unit: 'ms',
  });

  const queries = Array.from({ length: LATENCY_QUERIES }, () => generator.query());
  const latencies: Record<string, number[]> = {};
  for (const mode of MODES) {
    latencies[mode] = [];
    for (const q of queries.slice(0, 10)) await h.call(Search, { q, mode }); // warm caches
    for (const q of queries) latencies[mode].push(await timed(() => h.call(Search, { q, mode })));
  }
  const notmuch = maildir ? await notmuchSideBySide(maildir, queries) : undefined;
  for (const mode of MODES) {
    for (const p of [50, 95]) {
      results.push({
        suite: 'search',
        name: `search latency ${mode} p${p} at ${label} passages`,
        value: r3(percentile(latencies[mode]!, p)),
        unit: 'ms',
        ...(mode === 'keyword' && notmuch
          ? { reference: { name: `notmuch search p${p}, same mail`, value: r3(percentile(notmuch.latencies, p)) } }
          : {}),
        notes: `${LATENCY_QUERIES} queries of 1–3 words, limit 20, over NATS request/reply`,
      });
    }
  }
  if (notmuch) {
    const messages = fs.readdirSync(path.join(maildir!, 'cur')).length;
    results.push({
      suite: 'search',
      name: `notmuch new at ${label} passages (${messages} messages), for reference`,
      value: Math.round(messages / (notmuch.indexMs / 1000)),
      unit: 'messages/s',
      notes: 'keyword index only, no embeddings',
    });
  }
  results.push(...(await annRecall(db, generator, label)));
  return results;
}

/**
 * IVFFlat top 10 (as search runs it) against the exact top 10 by a full scan, over the passage
 * vectors: the share of the exact ten's ids found, and the share of found passages at most as
 * far as the exact tenth (ann-benchmarks' recall, with no epsilon): passages at the same distance
 * as the tenth (halfvec distances tie) are as near, whichever of them either scan returns.
 */
async function annRecall(
  db: ReturnType<typeof createDatabase<unknown>>,
  generator: TextGenerator,
  label: string,
): Promise<BenchResult[]> {
  const provider = await defaultProvider();
  const vectors = await provider.embed(Array.from({ length: 100 }, () => generator.query()));
  const shards = await db.connection().execute((conn) => shardsOf(conn, 'vec_0_parts'));
  // The nearest ten of one shard (of all, exact), as search reads them; a sharded index's ten nearest are its shards' best.
  const nearestIn = (literal: string, shard: number | undefined) =>
    db.transaction().execute(async (trx) => {
      if (shard === undefined) {
        await sql`set local enable_indexscan = off`.execute(trx);
      } else {
        await sql`set local ivfflat.probes = ${sql.lit(PROBES)}`.execute(trx);
        await sql`set local ivfflat.iterative_scan = relaxed_order`.execute(trx);
      }
      const only = shard !== undefined && shards > 1 ? sql`where ${shardOf(sql.ref('item_id'), shard, shards)}` : sql``;
      const { rows } = await sql<{ k: string; d: number }>`select item_id || ':' || ordinal as k,
          embedding <=> ${literal}::halfvec as d from vec_0_parts ${only}
        order by embedding <=> ${literal}::halfvec limit 10`.execute(trx);
      return rows;
    });
  const top = async (literal: string, exact: boolean) => {
    if (exact) return nearestIn(literal, undefined);
    const found = [];
    for (let shard = 0; shard < shards; shard++) found.push(...(await nearestIn(literal, shard)));
    return found.sort((a, b) => a.d - b.d).slice(0, 10);
  };
  const byId: number[] = [];
  const byDistance: number[] = [];
  let tied = 0;
  for (const vector of vectors) {
    const literal = `[${Array.from(vector).join(',')}]`;
    const [ann, exact] = [await top(literal, false), await top(literal, true)];
    const ids = new Set(exact.map((row) => row.k));
    const tenth = exact.at(-1)!.d;
    byId.push(ann.filter((row) => ids.has(row.k)).length / exact.length);
    byDistance.push(ann.filter((row) => row.d <= tenth).length / exact.length);
    tied += ann.filter((row) => row.d <= tenth && !ids.has(row.k)).length;
  }
  const notes = `halfvec, IVFFlat${shards > 1 ? ` in ${shards} shards` : ''} with √rows lists, ${PROBES} probes (as memex.search), 100 queries`;
  return [
    {
      suite: 'search',
      name: `ANN recall@10 at ${label} passages (IVFFlat vs exact)`,
      value: r3(mean(byId)),
      unit: 'recall',
      notes: `${notes}; the exact ten's ids found`,
    },
    {
      suite: 'search',
      name: `ANN recall@10 at ${label} passages, by distance (IVFFlat vs exact)`,
      value: r3(mean(byDistance)),
      unit: 'recall',
      notes: `${notes}; found passages no farther than the exact tenth (${tied} of them tied with one of the ten, not among its ids)`,
    },
  ];
}

/** The same keyword queries with `notmuch search` on a Maildir of the same messages, if notmuch is installed. */
async function notmuchSideBySide(
  maildir: string,
  queries: string[],
): Promise<{ latencies: number[]; indexMs: number } | undefined> {
  const notmuch = await Notmuch.open(maildir);
  if (!notmuch) return undefined;
  const indexMs = await notmuch.index();
  const latencies: number[] = [];
  for (const q of queries) latencies.push(await notmuch.search(q));
  return { latencies, indexMs };
}

/** Embedding rate of the built-in provider on passage-sized texts (what tier 1 spends its CPU on). */
async function embeddingRate(generator: TextGenerator): Promise<BenchResult> {
  const provider = await defaultProvider();
  const texts = Array.from({ length: 2000 }, () => generator.text(1));
  return {
    suite: 'search',
    name: `embedding rate, ${provider.space}, 200-word passages, one thread`,
    value: Math.round(await benchEmbed(provider, texts)),
    unit: 'passages/s',
  };
}

export async function run(): Promise<BenchResult[]> {
  // Words only (the table also holds punctuation and numbers), in frequency order, from the
  // 10,000 most frequent (the generated corpus stays what it was before the table grew).
  const table = await builtinGloveTablePath();
  const words = parseGloveTable(fs.readFileSync(table), table)
    .words.slice(0, 10_000)
    .filter((w) => /^[a-z]{2,}$/.test(w));
  const generator = new TextGenerator(words);
  const results = [...(await relevance()), await embeddingRate(generator)];
  console.log(`relevance and embedding rate done in ${Math.round(process.uptime())} s`);
  for (const size of SIZES) {
    results.push(...(await pipelineScale(size, generator)));
    console.log(`${size} passages through the pipeline done in ${Math.round(process.uptime())} s`);
  }
  for (const size of BULK_SIZES) {
    results.push(...(await bulkScale(size, generator)));
    console.log(`${size} passages bulk-loaded and measured in ${Math.round(process.uptime())} s`);
  }
  return results;
}
