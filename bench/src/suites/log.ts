import { NotePut, noteMarkdownOf } from '@memex/contracts';
import { Bus, draftOf, encodeJson, EventPublisher, newId, type DraftOf } from '@memex/bus';
import { IngestModule } from '@memex/ingest';
import { ServiceHost, startService } from '@memex/runtime';
import { createTestEnv } from '@memex/testing';
import type { BenchResult } from '../result.js';

const EVENTS = 100_000;
const BATCH = 1000;

function noteDraft(i: number): DraftOf<typeof NotePut> {
  const id = newId();
  const body = `Benchmark note ${i}: a short remark of about the size people write.`;
  return {
    subject: `item:${id}`,
    actor: { kind: 'user', id: 'owner' },
    kind: 'note',
    labels: [],
    data: { id, title: `note ${i}`, body, markdown: noteMarkdownOf(body) },
  };
}

/** Publish rate through the envelope validator vs raw JetStream, and replay rate of the notes projector. */
export async function run(): Promise<BenchResult[]> {
  const env = await createTestEnv();
  const bus = await Bus.connect(env.config.natsUrl, 'bench-log');
  try {
    await bus.ensureStreams();
    const publisher = new EventPublisher(bus);

    // Raw JetStream: the same payload sizes on a side subject, no validation, same batching.
    await bus.jsm.streams.add({ name: 'BENCH_RAW', subjects: ['bench.raw.>'] });
    const sample = encodeJson(publisher.build(NotePut, noteDraft(0)));
    let started = performance.now();
    for (let i = 0; i < EVENTS; i += BATCH) {
      await Promise.all(Array.from({ length: BATCH }, (_, j) => bus.js.publish(`bench.raw.${i + j}`, sample)));
    }
    const rawRate = EVENTS / ((performance.now() - started) / 1000);

    started = performance.now();
    for (let i = 0; i < EVENTS; i += BATCH) {
      await publisher.publishAll(Array.from({ length: BATCH }, (_, j) => draftOf(NotePut, noteDraft(i + j))));
    }
    const publishRate = EVENTS / ((performance.now() - started) / 1000);

    // Live projection, then a full replay into a fresh schema.
    started = performance.now();
    const app = await startService((config) => IngestModule.register(config), env.config);
    const runner = app.get(ServiceHost).projector!;
    const last = await bus.lastSeq();
    await runner.waitFor(last, 30 * 60 * 1000);
    const liveRate = EVENTS / ((performance.now() - started) / 1000);
    const replay = await runner.rebuild(env.config.databaseUrl);
    await app.close();

    return [
      {
        suite: 'log',
        name: 'publish rate (validated note.put events)',
        value: Math.round(publishRate),
        unit: 'events/s',
        reference: { name: 'raw JetStream publish, same payloads', value: Math.round(rawRate) },
      },
      {
        suite: 'log',
        name: 'live projection rate (notes projector, catching up)',
        value: Math.round(liveRate),
        unit: 'events/s',
      },
      {
        suite: 'log',
        name: `replay rate (memex replay ingest, ${replay.events} events)`,
        value: replay.events_per_second,
        unit: 'events/s',
        reference: { name: 'raw JetStream publish, same payloads', value: Math.round(rawRate) },
      },
    ];
  } finally {
    await bus.close();
    await env.stop();
  }
}
