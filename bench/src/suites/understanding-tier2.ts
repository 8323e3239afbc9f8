import { JobsStatus, ModelsAdd, Rerun } from '@memex/contracts';
import { BlobStore } from '@memex/blobs';
import { Bus, callMethod, EventPublisher } from '@memex/bus';
import { FakeChatServer, PipelinesModule, textItemDraft, type FakeChatRequest } from '@memex/pipelines';
import { startService } from '@memex/runtime';
import { createTestEnv } from '@memex/testing';
import type { BenchResult } from '../result.js';

/** Who the bench's generated items are made by, as their events say. */
export const BENCH_ITEM = { by: 'bench', source: 'generated' };

/** The fake endpoint's answer time: about what a hosted model takes for a short answer. */
const LATENCY_MS = 200;
/** A document's tasks: summary, topics, entities (one request each, one after another in a job). */
const TASKS_PER_ITEM = 3;
const RUNS = [
  { concurrency: 1, items: 20 },
  { concurrency: 8, items: 120 },
];

function answer(request: FakeChatRequest) {
  switch (request.task) {
    case 'summary':
      return { json: { summary: 'A short summary.' } };
    case 'topics':
      return { json: { topics: [{ name: 'Budget', quote: 'budget' }] } };
    default:
      return { json: { entities: [{ kind: 'org', name: 'Acme', key: 'acme.example', quote: 'Acme' }] } };
  }
}

async function waitDone(bus: Bus, outputs: number, what: (s: Awaited<ReturnType<typeof status>>) => number) {
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline) {
    const s = await status(bus);
    if (what(s) >= outputs) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`tier 2 did not finish ${outputs} outputs in 120 s`);
}

const status = async (bus: Bus) => (await callMethod(bus, JobsStatus, {})).tier2!;

/**
 * Tier 2's throughput against a fake OpenAI-compatible endpoint with a fixed latency: how well a
 * lane's requests overlap (jobs/s against concurrency / (tasks × latency), the most waiting allows),
 * then a re-run of every item with a new model version (planning from the log, then the jobs).
 */
export async function runTier2(): Promise<BenchResult[]> {
  const results: BenchResult[] = [];
  for (const { concurrency, items } of RUNS) {
    const fake = new FakeChatServer(answer);
    fake.latencyMs = LATENCY_MS;
    await fake.start();
    const env = await createTestEnv();
    const app = await startService(
      (config) => PipelinesModule.register(config, { workers: 0, tier2Concurrency: concurrency }),
      env.config,
    );
    const bus = await Bus.connect(env.config.natsUrl, 'bench-tier2');
    try {
      const addVersion = (version: string) =>
        callMethod(bus, ModelsAdd, {
          path: fake.url,
          model: 'bench-llm',
          name: 'bench',
          version,
          tasks: ['summarize', 'extract'],
        });
      await addVersion('1');
      const blobs = new BlobStore(env.config.blobsDir);
      const drafts = [];
      for (let i = 0; i < items; i++) {
        const text = `Budget notes ${i}: Acme asked about the quarterly budget and the spring workshop.`;
        drafts.push(await textItemDraft(blobs, { title: `Notes ${i}`, text }, BENCH_ITEM));
      }
      const started = performance.now();
      await new EventPublisher(bus).publishAll(drafts);
      await waitDone(bus, items * TASKS_PER_ITEM, (s) => s.done);
      const seconds = (performance.now() - started) / 1000;
      const ideal = concurrency / ((TASKS_PER_ITEM * LATENCY_MS) / 1000);
      results.push({
        suite: 'understanding',
        name: `tier 2 against a fake endpoint (${LATENCY_MS} ms a request), concurrency ${concurrency}, ${items} documents`,
        value: Math.round((items / seconds) * 100) / 100,
        unit: 'jobs/s',
        notes: `${fake.count()} requests in ${seconds.toFixed(1)} s; ${Math.round((items / seconds / ideal) * 100)}% of the ${ideal.toFixed(2)} jobs/s the latency allows at this concurrency`,
      });
      if (concurrency === RUNS.at(-1)!.concurrency) {
        await addVersion('2');
        const planStarted = performance.now();
        const rerun = await callMethod(bus, Rerun, { tier: 2, model: 'bench@2' });
        const planMs = performance.now() - planStarted;
        await waitDone(bus, rerun.jobs, (s) => s.reruns.find((r) => r.rerun_id === rerun.rerun_id)?.done ?? 0);
        const rerunSeconds = (performance.now() - planStarted) / 1000;
        results.push({
          suite: 'understanding',
          name: `tier 2 re-run of ${items} documents with a new version, concurrency ${concurrency}`,
          value: Math.round((items / rerunSeconds) * 100) / 100,
          unit: 'jobs/s',
          notes: `${rerun.jobs} task runs; planning (reading the log, queueing) ${Math.round(planMs)} ms; ${rerunSeconds.toFixed(1)} s in all against ${seconds.toFixed(1)} s for the first pass (overhead ${Math.round((rerunSeconds / seconds - 1) * 100)}%)`,
        });
      }
    } finally {
      await bus.close();
      await app.close();
      await env.stop();
      await fake.stop();
    }
  }
  return results;
}
