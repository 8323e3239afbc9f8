import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { MemexClient } from '@memex/client';
import { AdminReplay, MailAccounts, MemexError, Search, type ServiceName } from '@memex/contracts';
import { generateMessages, writeMaildir, writeMbox } from '@memex/ingest/testing';
import { seededRandom } from '@memex/testing';
import { Mu } from '../mu.js';
import { Notmuch } from '../notmuch.js';
import { percentile, type BenchResult } from '../result.js';
import { samplePeakRss } from '../rss.js';
import { vectorsIndexed, settled } from '../settled.js';
import { cpuBetween, processCpu, quiet, sampleTimeline } from '../timeline.js';
import { importMbox, startWholeStack } from '../whole-stack.js';

const MESSAGES = Number(process.env.MEMEX_BENCH_INGEST_MESSAGES ?? 50_000);
const SEED = 42;

/** Resolves once the mail views list `count` messages in the account. */
async function mailViewsHold(client: MemexClient, count: number): Promise<void> {
  for (;;) {
    const { accounts } = await client.call(MailAccounts, {});
    if ((accounts.find((a) => a.account === 'import:mbox:bench')?.messages ?? 0) >= count) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** The Subject of a generated message (they are ASCII, one line). */
function subjectOf(bytes: Buffer): string {
  return /^Subject: (.*)$/m.exec(bytes.subarray(0, 4096).toString('latin1'))?.[1]?.trim() ?? '';
}

/** Of a sample of messages, how many search finds by their subject: by keyword, and by meaning in the top 10. */
async function findable(client: MemexClient, subjects: string[]): Promise<{ keyword: number; meaning: number }> {
  let keyword = 0;
  let meaning = 0;
  for (const subject of subjects) {
    const hit = async (mode: 'keyword' | 'meaning') =>
      (await client.call(Search, { q: subject, mode, limit: 10 })).hits.some((h) => h.title === subject);
    if (await hit('keyword')) keyword++;
    if (await hit('meaning')) meaning++;
  }
  return { keyword, meaning };
}

/** How often the user searching during an import (`searchWhileImporting`) asks. */
const SEARCH_EVERY_MS = 3000;

/**
 * The user of the first hour: searches while the import runs (hybrid, the default mode, for one of
 * the sampled subjects every `SEARCH_EVERY_MS`), through the gateway; `stop` gives the latencies
 * of the answers and the errors of the queries that failed.
 */
function searchWhileImporting(
  client: MemexClient,
  queries: string[],
): { stop(): Promise<{ latencies: number[]; errors: string[] }> } {
  const latencies: number[] = [];
  const errors: string[] = [];
  let stopped = false;
  const asking = (async () => {
    for (let i = 0; !stopped; i++) {
      const started = performance.now();
      await client
        .call(Search, { q: queries[i % queries.length] ?? 'meeting', limit: 20 })
        .then(() => latencies.push(performance.now() - started))
        .catch((error: Error) => errors.push(error.message));
      await new Promise((resolve) => setTimeout(resolve, SEARCH_EVERY_MS));
    }
  })();
  return {
    async stop() {
      stopped = true;
      await asking;
      return { latencies, errors };
    },
  };
}

/**
 * End-to-end import of a generated mbox (realistic sizes, attachments, threads) with every service
 * running as `npm start` runs them, each its own process: from `memex import mbox` starting to
 * the mail views listing every message, and on to searchable (every projector at the log's end,
 * the pipelines idle, search answering at the last sequence). Beside it, in the same run,
 * `notmuch new` and `mu index` over the same messages in a Maildir.
 */
export function run(): Promise<BenchResult[]> {
  return importArchive(MESSAGES, 'import');
}

/**
 * `memex replay <service>` for every service with a read model (or those named in
 * MEMEX_BENCH_REPLAY_SERVICES, comma-separated), over the log an import of
 * MEMEX_BENCH_REPLAY_MESSAGES messages (default 10,000) wrote with the whole stack running;
 * MEMEX_BENCH_REPLAY_ROUNDS times each (default 1), reporting the median round.
 */
export function runReplay(): Promise<BenchResult[]> {
  return importArchive(Number(process.env.MEMEX_BENCH_REPLAY_MESSAGES ?? 10_000), 'replay');
}

/** Replays each service's read model; a service with none is skipped. */
async function replayEach(client: MemexClient, pids: Record<string, number>): Promise<BenchResult[]> {
  const only = process.env.MEMEX_BENCH_REPLAY_SERVICES?.split(',').map((s) => s.trim());
  const rounds = Math.max(1, Number(process.env.MEMEX_BENCH_REPLAY_ROUNDS ?? 1));
  const results: BenchResult[] = [];
  for (const service of Object.keys(pids).filter((s) => !only || only.includes(s))) {
    const runs: Array<{ events: number; seconds: number; rate: number; cpu: string }> = [];
    for (let round = 0; round < rounds; round++) {
      await quiet(pids);
      const before = processCpu(pids);
      const replayed = await client
        .call(AdminReplay, { projector: service as ServiceName })
        .catch((error: unknown) =>
          error instanceof MemexError && error.code === 'not_found' ? null : Promise.reject(error),
        );
      // (A read model of none of these events, the gateway's tokens or the head's link, says nothing.)
      if (!replayed || replayed.events === 0) break;
      // Whose CPU the replay took: the service's own work against Postgres' (and NATS' reading).
      const spent = [...cpuBetween(before, processCpu(pids))]
        .filter(([, seconds]) => seconds >= 0.05)
        .sort((a, b) => b[1] - a[1])
        .map(([name, seconds]) => `${name} ${seconds.toFixed(1)}`)
        .join(', ');
      const { bulk_load, indexes } = replayed.phases;
      console.log(
        `replayed ${service}: ${replayed.events} events in ${replayed.seconds} s (bulk load ${bulk_load} s, indexes ${indexes} s; load ${os.loadavg()[0]!.toFixed(1)}); CPU s ${spent}`,
      );
      runs.push({ events: replayed.events, seconds: replayed.seconds, rate: replayed.events_per_second, cpu: spent });
    }
    if (runs.length === 0) continue;
    const median = [...runs].sort((a, b) => a.seconds - b.seconds)[Math.floor((runs.length - 1) / 2)]!;
    results.push({
      suite: 'replay',
      name: `memex replay ${service}`,
      value: median.rate,
      unit: 'events/s',
      notes: `${median.events} events of its subjects in ${median.seconds} s${runs.length > 1 ? ` (median of ${runs.length}: ${runs.map((r) => r.seconds).join(', ')} s)` : ''}; CPU s ${median.cpu}`,
    });
  }
  return results;
}

async function importArchive(messages: number, measure: 'import' | 'replay'): Promise<BenchResult[]> {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'memex-bench-ingest-'));
  const stack = await startWholeStack();
  const { services, client } = stack;
  try {
    const mbox = path.join(work, 'archive.mbox');
    const bytes = await writeMbox(mbox, generateMessages({ messages: messages, seed: SEED }));
    const maildir = path.join(work, 'maildir');
    writeMaildir(maildir, generateMessages({ messages: messages, seed: SEED }));
    const random = seededRandom(SEED);
    const subjects = [...generateMessages({ messages: messages, seed: SEED })]
      .filter(() => random() < 40 / messages)
      .map((message) => subjectOf(message.bytes))
      .filter((subject) => subject !== '');
    const megabytes = Math.round(bytes / 1e5) / 10;
    console.log(`${messages} messages, ${megabytes} MB of mbox written; ${services.length} services`);

    // The whole stack's memory while a client sends as fast as it can (backpressure keeps it bounded).
    const pids = Object.fromEntries(services.map((service, i) => [service, stack.processes[i]!.pid!]));
    const memory = samplePeakRss(pids);
    // Where the time goes: each process's CPU, each projector's lag and the pipelines' backlog over time.
    const timeline = sampleTimeline(client, stack.url, pids);
    const searching = searchWhileImporting(client, subjects);
    const started = performance.now();
    await importMbox(stack, mbox, 'bench');
    const answered = (performance.now() - started) / 1000;
    await mailViewsHold(client, messages);
    const viewed = (performance.now() - started) / 1000;
    await settled(client, stack.url, subjects[0] ?? 'meeting', 4 * 60 * 60_000);
    const searchable = (performance.now() - started) / 1000;
    const asked = await searching.stop();
    // Every search failing is a finding, not a figure: say so rather than print no latency.
    if (asked.latencies.length === 0 && asked.errors.length > 0)
      console.log(`every search while importing failed (${asked.errors.length}): ${asked.errors[0]}`);
    await timeline.mark('searchable');
    // Searchable includes vectors not in an ANN index yet (found by exact scan): the indexes' rest.
    await vectorsIndexed(stack.env.config.databaseUrl, 4 * 60 * 60_000);
    const indexed = (performance.now() - started) / 1000;
    const peak = memory.stop();
    await timeline.stop();
    if (measure === 'replay') return await replayEach(client, pids);
    const found = await findable(client, subjects);
    const mb = (bytes: number) => Math.round(bytes / 1e6);
    const heaviest = Object.entries(peak.each)
      .sort((a, b) => b[1] - a[1])
      .slice(0, 4)
      .map(([name, rss]) => `${name} ${mb(rss)}`)
      .join(', ');
    console.log(
      `import answered in ${answered.toFixed(1)} s, mail views complete at ${viewed.toFixed(1)} s, ` +
        `searchable at ${searchable.toFixed(1)} s, every vector in an ANN index at ${indexed.toFixed(1)} s; peak RSS of the services ${mb(peak.total)} MB (${heaviest} MB)`,
    );

    // The peers on a quiet machine: the stack stopped first (search merging its vector segments
    // once idle would take a core from them).
    await stack.stop();
    const notmuch = await Notmuch.open(maildir);
    const notmuchRate = notmuch ? Math.round(messages / ((await notmuch.index()) / 1000)) : undefined;
    const mu = await Mu.open(maildir);
    const muRate = mu ? Math.round(messages / ((await mu.index()) / 1000)) : undefined;
    const searchableRate = Math.round(messages / searchable);
    const peers = [
      notmuchRate ? `notmuch new ${notmuchRate} messages/s` : 'notmuch not installed (apt install notmuch)',
      muRate ? `mu index ${muRate} messages/s` : 'mu not installed (apt install maildir-utils)',
    ].join('; ');
    return [
      {
        suite: 'ingest',
        name: `import: mbox to searchable, whole stack (${messages} messages, ${megabytes} MB)`,
        value: searchableRate,
        unit: 'messages/s',
        ...(notmuchRate ? { reference: { name: 'notmuch new, same messages', value: notmuchRate } } : {}),
        notes: `${peers}; of ${subjects.length} sampled messages search found ${found.keyword} by keyword and ${found.meaning} by meaning (top 10)`,
      },
      {
        suite: 'ingest',
        name: `import: mbox to queryable mail views (${messages} messages)`,
        value: Math.round(messages / viewed),
        unit: 'messages/s',
        ...(muRate ? { reference: { name: 'mu index, same messages', value: muRate } } : {}),
      },
      {
        suite: 'ingest',
        name: 'import: mbox to every message stored (memex import mbox answered)',
        value: Math.round(messages / answered),
        unit: 'messages/s',
        notes: `${(bytes / 1e6 / answered).toFixed(1)} MB/s`,
      },
      {
        suite: 'ingest',
        name: `peak resident memory of the ${services.length} service processes during the import`,
        value: mb(peak.total),
        unit: 'MB',
        notes: `heaviest at their own peaks: ${heaviest} MB; NATS and Postgres not counted (notmuch ~80 MB, mu ~360 MB)`,
      },
      ...(asked.latencies.length > 0
        ? [
            {
              suite: 'ingest',
              name: 'hybrid search p95 while the import ran, until searchable',
              value: Math.round(percentile(asked.latencies, 95)),
              unit: 'ms',
              notes: `${asked.latencies.length + asked.errors.length} queries (a sampled subject every ${SEARCH_EVERY_MS / 1000} s, limit 20, through the gateway): p50 ${Math.round(percentile(asked.latencies, 50))} ms, max ${Math.round(Math.max(...asked.latencies))} ms; ${asked.errors.length} failed${asked.errors[0] ? ` (${asked.errors[0]})` : ''}`,
            },
          ]
        : []),
      {
        suite: 'ingest',
        name: 'searchable behind the import when it ended',
        value: Math.round((searchable - answered) * 10) / 10,
        unit: 's',
      },
      {
        suite: 'ingest',
        name: 'every vector in an ANN index behind searchable',
        value: Math.round((indexed - searchable) * 10) / 10,
        unit: 's',
        notes: 'until then meaning search reads the newest vectors by exact scan',
      },
    ];
  } finally {
    await stack.stop();
    fs.rmSync(work, { recursive: true, force: true });
  }
}
