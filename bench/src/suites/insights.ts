import type { INestApplicationContext } from '@nestjs/common';
import {
  EmbeddingComputed,
  encodeVector,
  NotePut,
  noteMarkdownOf,
  SignalsList,
  type MethodDefinition,
  type ParamsOf,
  type ResultOf,
} from '@memex/contracts';
import { Bus, callMethod, draftOf, EventPublisher, newId } from '@memex/bus';
import { ServiceHost, startService } from '@memex/runtime';
import { createTestEnv } from '@memex/testing';
import { benchCorpus, benchDetection, InsightsModule, toMarkdown, type EngineNote } from '@memex/insights';
import type { BenchResult } from '../result.js';

const SIZES = [10_000, 100_000];
/** Notes fed through the service (note.put and embedding.computed events, as ingest and pipelines publish them). */
const SERVICE_NOTES = 10_000;
const DIM = 384;
const BATCH = 1000;

/** The events ingest and pipelines would publish for these notes: each note.put, then its item vector. */
async function feed(publisher: EventPublisher, notes: EngineNote[]): Promise<number> {
  const ids = new Map(notes.map((note) => [note.id, newId()]));
  const titles = new Map(notes.map((note) => [note.id, note.title]));
  let last = 0;
  for (let i = 0; i < notes.length; i += BATCH) {
    const batch = notes.slice(i, i + BATCH);
    const puts = await publisher.publishAll(
      batch.map((note) => {
        const body = toMarkdown(note, (l) => titles.get(l) ?? l);
        return draftOf(NotePut, {
          subject: `item:${ids.get(note.id)}`,
          actor: { kind: 'user', id: 'owner' },
          kind: 'note',
          occurred_at: note.createdAt.toISOString(),
          data: { id: ids.get(note.id)!, title: note.title, body, markdown: noteMarkdownOf(body) },
        });
      }),
    );
    const vectors = await publisher.publishAll(
      batch.map((note, j) =>
        draftOf(EmbeddingComputed, {
          subject: `item:${ids.get(note.id)}`,
          actor: { kind: 'pipeline', id: 'text@1' },
          data: {
            item_id: ids.get(note.id)!,
            revision: puts[j]!.seq,
            pipeline: 'text@1',
            space: 'bench@1',
            dims: DIM,
            total: 0,
            piece: 0,
            pieces: 1,
            item: encodeVector(note.embedding),
            vectors: [],
          },
        }),
      ),
    );
    last = vectors.at(-1)!.seq;
  }
  return last;
}

async function timed<T>(work: () => Promise<T>): Promise<[T, number]> {
  const started = performance.now();
  const value = await work();
  return [value, Math.round((performance.now() - started) * 100) / 100];
}

/**
 * The inference engine's cost: full detection (kNN + four detectors) at 10⁴ and 10⁵ notes, which
 * should grow about as N·k, and the second run on an unchanged corpus (only the fingerprint);
 * then the same through the service at 10⁴ notes: the first `memex.signals.list` (load, detect,
 * publish, merge) and the next one (the dirty flag says nothing changed).
 */
export async function run(): Promise<BenchResult[]> {
  const results: BenchResult[] = [];
  const engine = SIZES.map((n) => benchDetection(n, { dim: DIM }));
  for (const r of engine) {
    const signals = Object.entries(r.signals)
      .map(([kind, count]) => `${count} ${kind}`)
      .join(', ');
    results.push(
      {
        suite: 'insights',
        name: `detection, ${r.n} notes (first run)`,
        value: r.firstRunMs,
        unit: 'ms',
        notes: `${r.knn} kNN, k = ${r.k}, ${r.dim}-d; CPU ${r.firstRunCpuMs} ms; ${signals}`,
      },
      {
        // CPU time, steadier than wall time on a shared machine: about constant if detection grows as N·k.
        suite: 'insights',
        name: `detection CPU per note·k, ${r.n} notes`,
        value: r.firstRunCpuMicrosPerNoteK,
        unit: 'µs',
        ...(r !== engine[0]
          ? { reference: { name: `${engine[0]!.n} notes`, value: engine[0]!.firstRunCpuMicrosPerNoteK } }
          : {}),
      },
      {
        suite: 'insights',
        name: `detection, ${r.n} notes (second run, unchanged)`,
        value: r.secondRunMs,
        unit: 'ms',
        reference: { name: 'first run', value: r.firstRunMs },
        notes: r.secondRunSkipped ? 'skipped: fingerprint unchanged' : 'NOT skipped',
      },
    );
  }

  const env = await createTestEnv();
  const bus = await Bus.connect(env.config.natsUrl, 'bench-insights');
  let app: INestApplicationContext | undefined;
  try {
    await bus.ensureStreams();
    const last = await feed(new EventPublisher(bus), benchCorpus(SERVICE_NOTES, DIM));
    const [, projectMs] = await timed(async () => {
      app = await startService((config) => InsightsModule.register(config), env.config);
      await app.get(ServiceHost).projector!.waitFor(last, 60 * 60 * 1000);
    });
    const call = <M extends MethodDefinition>(method: M, params: ParamsOf<M>): Promise<ResultOf<M>> =>
      callMethod(bus, method, params, { timeoutMs: 30 * 60 * 1000 });
    const [first, firstMs] = await timed(() => call(SignalsList, {}));
    const [second, secondMs] = await timed(() => call(SignalsList, {}));
    results.push(
      {
        suite: 'insights',
        name: `projection of ${SERVICE_NOTES} notes and their vectors`,
        value: Math.round((SERVICE_NOTES * 2) / (projectMs / 1000)),
        unit: 'events/s',
      },
      {
        suite: 'insights',
        name: `memex.signals.list, ${SERVICE_NOTES} notes, notes changed`,
        value: firstMs,
        unit: 'ms',
        notes: `detection ran: ${first.detection.ran}; load notes, detect, publish signals.detected, merge`,
      },
      {
        suite: 'insights',
        name: `memex.signals.list, ${SERVICE_NOTES} notes, nothing changed`,
        value: secondMs,
        unit: 'ms',
        reference: { name: 'with detection', value: firstMs },
        notes: `detection ran: ${second.detection.ran}`,
      },
    );
  } finally {
    await app?.close();
    await bus.close();
    await env.stop();
  }
  return results;
}
