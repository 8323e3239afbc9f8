import { PaperExtracted } from '@memex/contracts';
import { BlobStore } from '@memex/blobs';
import { Bus, draftOf, EventPublisher } from '@memex/bus';
import { GraphModule } from '@memex/graph';
import { generatedPapers, PAPER_RULES, pdfText, readPaper } from '@memex/pipelines';
import { ServiceHost, startService } from '@memex/runtime';
import { createTestEnv, itemMeta } from '@memex/testing';
import type { BenchResult } from '../result.js';
import { textItemDraft } from '@memex/pipelines';
import { BENCH_ITEM } from './understanding-tier2.js';

/** Papers read in process, and papers whose readings the graph resolves. */
const PAPERS = 300;
const IN_GRAPH = 60;

/**
 * Papers: tier 0's rules reading generated papers (header and reference list, four reference
 * styles) in one process, then the graph resolving their references (by arXiv id, DOI or a title
 * alike, else a stub) as it applies paper.extracted events.
 */
export async function runPapers(): Promise<BenchResult[]> {
  const papers = generatedPapers(PAPERS).map((paper) => ({ paper, ...pdfText(paper.pages) }));
  let references = 0;
  const started = performance.now();
  const readings = papers.map(({ text, pages }) => {
    const reading = readPaper(text, pages, {}, { title: 'untitled', year: null });
    references += reading.references.length;
    return reading;
  });
  const readMs = performance.now() - started;
  const results: BenchResult[] = [
    {
      suite: 'understanding',
      name: `papers read by rules in process, ${PAPERS} generated papers`,
      value: Math.round(PAPERS / (readMs / 1000)),
      unit: 'papers/s',
      notes: `${references} references (${Math.round(references / (readMs / 1000))} references/s); ~${Math.round(papers[0]!.text.length / 100) / 10} KB of text each`,
    },
  ];

  const env = await createTestEnv();
  const app = await startService((config) => GraphModule.register(config), env.config);
  const bus = await Bus.connect(env.config.natsUrl, 'bench-papers');
  try {
    const blobs = new BlobStore(env.config.blobsDir);
    const publisher = new EventPublisher(bus);
    const items = [];
    for (const { paper, text } of papers.slice(0, IN_GRAPH))
      items.push(
        await textItemDraft(blobs, { title: paper.title, text, typed: itemMeta('paper', {}, text.length) }, BENCH_ITEM),
      );
    const last = (await publisher.publishAll(items)).at(-1)!.seq;
    const projector = app.get(ServiceHost).projector!;
    await projector.waitFor(last, 120_000);
    const extracted = items.map((item, i) =>
      draftOf(PaperExtracted, {
        subject: item.draft.subject,
        actor: { kind: 'pipeline', id: PAPER_RULES },
        kind: 'paper',
        data: {
          item_id: item.draft.data.id,
          revision: 1,
          made_by: PAPER_RULES,
          paper: readings[i]!.paper,
          references: readings[i]!.references,
          truncated: false,
        },
      }),
    );
    const resolving = extracted.reduce((n, e) => n + e.draft.data.references.length, 0);
    const graphStarted = performance.now();
    const done = (await publisher.publishAll(extracted)).at(-1)!.seq;
    await projector.waitFor(done, 150_000);
    const graphMs = performance.now() - graphStarted;
    results.push({
      suite: 'understanding',
      name: `references resolved by the graph, ${IN_GRAPH} papers`,
      value: Math.round(resolving / (graphMs / 1000)),
      unit: 'references/s',
      notes: `${resolving} references (each by arXiv id, DOI, title trigram match or a stub) and ${IN_GRAPH} papers with their authors in ${Math.round(graphMs)} ms: ${Math.round(IN_GRAPH / (graphMs / 1000))} papers/s applied`,
    });
  } finally {
    await bus.close();
    await app.close();
    await env.stop();
  }
  return results;
}
