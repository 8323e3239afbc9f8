import { HeadEnroll, HeadStatus, ItemIngested } from '@memex/contracts';
import { Bus, callMethod, EventPublisher, newId } from '@memex/bus';
import { MemexClient } from '@memex/client';
import { startService } from '@memex/runtime';
import { createTestEnv, itemMeta } from '@memex/testing';
import { ensureOwnerToken, startGateway } from '@memex/gateway';
import { HeadModule } from '@memex/head';
import { FakeHead } from '@memex/head/testing';
import { percentile, type BenchResult } from '../result.js';

const CALLS = Number(process.env.MEMEX_BENCH_HEAD_CALLS ?? 2000);
const TRIGGER_EVENTS = Number(process.env.MEMEX_BENCH_HEAD_TRIGGERS ?? 200);

async function timed(calls: number, call: () => Promise<unknown>): Promise<number[]> {
  for (let i = 0; i < 100; i++) await call(); // warm up
  const times: number[] = [];
  for (let i = 0; i < calls; i++) {
    const started = performance.now();
    await call();
    times.push(performance.now() - started);
  }
  return times;
}

const ms = (value: number) => Math.round(value * 100) / 100;

/**
 * The head link (docs/head.md): a memex.* call relayed over the mTLS stream beside the same call
 * on the gateway's HTTP API, one at a time (both routed to the head service's own query); and
 * how long an event takes to start the workflow of a trigger it matches. The head is the tests'
 * fake head, on this machine.
 */
export async function run(): Promise<BenchResult[]> {
  const env = await createTestEnv({ services: ['gateway', 'head'] });
  const head = await startService((c) => HeadModule.register(c), env.config);
  const gateway = await startGateway(env.config);
  const address = gateway.getHttpServer().address();
  const url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  const client = new MemexClient({ url, token: ensureOwnerToken(env.config.home) });
  const bus = await Bus.connect(env.config.natsUrl, 'bench-head');
  const fake = new FakeHead();
  await fake.start();
  try {
    await callMethod(bus, HeadEnroll, { url: fake.enrollUrl, token: fake.newToken() });
    await fake.linked();
    const overStream = await timed(CALLS, () => fake.call(HeadStatus.name, {}, { owner: true }));
    const overHttp = await timed(CALLS, () => client.call(HeadStatus, {}));

    await fake.call(
      'memex.triggers.add',
      { name: 'bench', on: 'item.added', filter: { kind: 'email' }, action: { workflow: 'bench' } },
      { owner: true },
    );
    const publisher = new EventPublisher(bus);
    const latencies: number[] = [];
    for (let i = 0; i < TRIGGER_EVENTS; i++) {
      const id = newId();
      const before = fake.asked.length;
      const started = performance.now();
      await publisher.publish(ItemIngested, {
        subject: `item:${id}`,
        actor: { kind: 'connector', id: 'bench' },
        kind: 'email',
        data: {
          id,
          ...itemMeta('email'),
          revision: 1,
          title: `bench ${i}`,
          source: { kind: 'gmail', id: 'bench' },
          external_id: null,
          identity: `message-id:bench-${i}@example.com`,
          origin: 'mirrored',
          content_type: 'message/rfc822',
          content_sha256: '0'.repeat(64),
          size: 1,
          text_sha256: '0'.repeat(64),
          text_length: 1,
        },
      });
      while (fake.asked.length === before) await new Promise((resolve) => setImmediate(resolve));
      latencies.push(performance.now() - started);
    }
    const load = (await import('node:os')).loadavg()[0]!.toFixed(1);
    const notes = `load average ${load}, ${CALLS} calls of memex.head.status one at a time`;
    return [
      {
        suite: 'head',
        name: 'stream round trip p50',
        value: ms(percentile(overStream, 50)),
        unit: 'ms',
        reference: { name: 'gateway HTTP p50', value: ms(percentile(overHttp, 50)) },
        notes,
      },
      {
        suite: 'head',
        name: 'stream round trip p95',
        value: ms(percentile(overStream, 95)),
        unit: 'ms',
        reference: { name: 'gateway HTTP p95', value: ms(percentile(overHttp, 95)) },
        notes,
      },
      {
        suite: 'head',
        name: 'trigger: event to workflows.start p50',
        value: ms(percentile(latencies, 50)),
        unit: 'ms',
        notes: `${TRIGGER_EVENTS} events, one at a time`,
      },
      {
        suite: 'head',
        name: 'trigger: event to workflows.start p95',
        value: ms(percentile(latencies, 95)),
        unit: 'ms',
      },
    ];
  } finally {
    await bus.close();
    await gateway.close();
    await head.close();
    await fake.stop();
    await env.stop();
  }
}
