import { StructureExtracted } from '@memex/contracts';
import { BlobStore } from '@memex/blobs';
import { Bus, EventPublisher, readEventsOf } from '@memex/bus';
import { mentionsIn, PipelinesModule, signatureIn } from '@memex/pipelines';
import { startService } from '@memex/runtime';
import { createTestEnv, itemMeta } from '@memex/testing';
import type { BenchResult } from '../result.js';
import { runPapers } from './understanding-papers.js';
import { textItemDraft } from '@memex/pipelines';
import { BENCH_ITEM, runTier2 } from './understanding-tier2.js';

/** Messages read in process (rules only) and through the service (jobs, log, workers). */
const IN_PROCESS = 2000;
const THROUGH_SERVICE = 300;
const WORKERS = 2;

const FIRST = ['Jane', 'Peter', 'María', 'Kenji', 'Lena', 'Oliver', 'Sofia', 'Ravi'];
const LAST = ['Doe', 'Gibbons', 'García', 'Watanabe', 'Fischer', 'Grant', 'Rossi', 'Kumar'];
const ORGS = ['Acme Robotics Inc.', 'Initech LLC', 'Globex Corporation', 'Umbrella Corp.', 'Stark GmbH'];
const TITLES = ['Senior Research Engineer', 'Procurement Manager', 'Head of Data Engineering', 'CTO'];

/** A generated business message of about 1.5 KB: prose, dates, amounts, links, identifiers, a signature. */
function message(i: number): string {
  const name = `${FIRST[i % FIRST.length]} ${LAST[(i * 7) % LAST.length]}`;
  const prose = [
    `Hi team,`,
    ``,
    `Following up on our call on March ${(i % 27) + 1}, 2025: the revised quote is $${(1000 + i * 37).toLocaleString('en-US')}.00 and we need the signed copy by Friday.`,
    `The spec is at https://docs.example.com/specs/${i}?rev=${i % 9} and the paper we discussed is doi:10.1145/${3400000 + i}.${i % 1000} (see also arXiv:2101.${String(10000 + i).slice(-5)}).`,
    `Shipping goes to ${100 + (i % 800)} Market Street, San Francisco, CA 94105 as usual; the book is ISBN 978-0-306-40615-7.`,
    `Let me know if next Tuesday at 3pm works for a review. Otherwise the week of 12 May 2025 is open.`,
    `We also have budget left over (about € 2.400,50) for the workshop in Berlin on 3. Juni 2025.`,
    ...Array.from(
      { length: 6 },
      (_, k) =>
        `Point ${k + 1}: nothing here but ordinary words about the project, its goals, its risks and the people doing it.`,
    ),
    ``,
    i % 2 === 0 ? 'Best regards,' : '-- ',
    name,
    `${TITLES[i % TITLES.length]}, ${ORGS[i % ORGS.length]}`,
    `Mobile: +1 415-555-${String(100 + (i % 900)).padStart(4, '0')}`,
  ];
  return prose.join('\n');
}

/**
 * Tier 0's cost: the rules on generated 1.5 KB messages in one process (no I/O), then the same
 * messages through the pipelines service (a structure job per ingested item, read from blobs,
 * published to the log), which also runs each item's tier-1 text job.
 */
export async function run(): Promise<BenchResult[]> {
  const texts = Array.from({ length: IN_PROCESS }, (_, i) => message(i));
  const reference = new Date('2025-03-04T09:00:00Z');
  let mentions = 0;
  const cpu = process.cpuUsage();
  const started = performance.now();
  for (const text of texts) {
    mentions += mentionsIn(text, reference).length;
    if (signatureIn(text, 'sender@example.org')) mentions++;
  }
  const inProcessMs = performance.now() - started;
  const cpuMs = (process.cpuUsage(cpu).user + process.cpuUsage(cpu).system) / 1000;
  const datesStarted = performance.now();
  for (const text of texts.slice(0, 500)) mentionsIn(text.replace(/\d/g, 'x'), reference);
  const withoutDigitsMs = performance.now() - datesStarted;

  const results: BenchResult[] = [
    {
      suite: 'understanding',
      name: `tier 0 in process, ${IN_PROCESS} messages of ~${Math.round(texts[0]!.length / 100) / 10} KB`,
      value: Math.round(IN_PROCESS / (inProcessMs / 1000)),
      unit: 'items/s',
      notes: `${mentions} mentions and signatures; CPU ${Math.round(cpuMs)} ms; 500 of them with digits masked (date parsers still run over every word): ${Math.round(500 / (withoutDigitsMs / 1000))} items/s`,
    },
  ];

  const env = await createTestEnv();
  const app = await startService((config) => PipelinesModule.register(config, { workers: WORKERS }), env.config);
  const bus = await Bus.connect(env.config.natsUrl, 'bench-understanding');
  try {
    const blobs = new BlobStore(env.config.blobsDir);
    const publisher = new EventPublisher(bus);
    const drafts = [];
    for (let i = 0; i < THROUGH_SERVICE; i++) {
      drafts.push(
        await textItemDraft(
          blobs,
          {
            title: `Quote ${i}`,
            text: message(i),
            occurred_at: '2025-03-04T09:00:00.000Z',
            typed: itemMeta('email', {
              from: [{ name: 'Sender', address: `sender${i}@example.org` }],
              threadKey: `thread-${i}`,
              flags: { read: false, starred: false },
            }),
          },
          BENCH_ITEM,
        ),
      );
    }
    const serviceStarted = performance.now();
    await publisher.publishAll(drafts);
    let done = 0;
    const deadline = Date.now() + 150_000;
    while (done < THROUGH_SERVICE && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      done = 0;
      for await (const _ of readEventsOf(bus, StructureExtracted, { untilCaughtUp: true })) done++;
    }
    const serviceMs = performance.now() - serviceStarted;
    results.push({
      suite: 'understanding',
      name: `tier 0 through the service, ${THROUGH_SERVICE} ingested messages, ${WORKERS} workers`,
      value: Math.round(done / (serviceMs / 1000)),
      unit: 'items/s',
      notes: `${done} of ${THROUGH_SERVICE} structure.extracted in ${Math.round(serviceMs)} ms (polled every 250 ms), tier-1 text jobs (passages, vectors) sharing the workers`,
    });
  } finally {
    await bus.close();
    await app.close();
    await env.stop();
  }
  results.push(...(await runPapers()));
  results.push(...(await runTier2()));
  return results;
}
