import { Svcm } from '@nats-io/services';
import { context, SpanKind, trace } from '@opentelemetry/api';
import { Bus, callRpc, decodeJson, encodeJson, extractTrace, injectTrace, serveRpc, type RpcRequest } from '@memex/bus';
import { OWNER_SCOPE } from '@memex/contracts';
import { createTestEnv } from '@memex/testing';
import { percentile, type BenchResult } from '../result.js';

const CALLS = 5000;
const IN_FLIGHT = 64;
const request: RpcRequest = {
  method: 'memex.bench.echo',
  params: { query: 'a short query of about the size people type', limit: 20 },
  scope: OWNER_SCOPE,
  caller: { kind: 'user', id: 'owner' },
};

/** Sequential round trips (latency) and IN_FLIGHT concurrent ones (throughput) through `call`. */
async function measure(call: () => Promise<unknown>): Promise<{ p50: number; p99: number; perSecond: number }> {
  for (let i = 0; i < 200; i++) await call(); // warm up
  const times: number[] = [];
  for (let i = 0; i < CALLS; i++) {
    const started = performance.now();
    await call();
    times.push(performance.now() - started);
  }
  const started = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      while (next++ < CALLS) await call();
    }),
  );
  const perSecond = CALLS / ((performance.now() - started) / 1000);
  return { p50: percentile(times, 50), p99: percentile(times, 99), perSecond: Math.round(perSecond) };
}

/**
 * The request/reply layer: libs/bus/rpc.ts (core NATS request/reply, JSON, trace headers, one
 * queue group per service) against the same echo as a @nats-io/services endpoint (which adds
 * $SRV ping/info/stats), both answering the same JSON on the same server, side by side.
 */
export async function run(): Promise<BenchResult[]> {
  const env = await createTestEnv();
  const bus = await Bus.connect(env.config.natsUrl, 'bench-rpc');
  try {
    const served = serveRpc(bus, 'memex.rpc.bench.echo', 'svc.bench', async (req) => req.params);
    // The only published v3 of @nats-io/services is a prerelease built on its own older nats-core.
    const service = await new Svcm(bus.nc as never).add({ name: 'bench', version: '1.0.0', queue: 'svc_bench' });
    service.addEndpoint('echo', {
      subject: 'memex.svc.bench.echo',
      handler: (error, msg) => {
        if (error) return;
        msg.respond(encodeJson({ result: decodeJson<RpcRequest>(msg.data).params }));
      },
    });
    // The same endpoint carrying what rpc.ts carries on every call: the caller's trace in the
    // headers and a server span under it (the gateway → service → log trace needs both).
    const tracer = trace.getTracer('bench-rpc');
    service.addEndpoint('traced', {
      subject: 'memex.svc.bench.traced',
      handler: (error, msg) => {
        if (error) return;
        // (Its own older nats-core's headers type: the same headers.)
        void context.with(extractTrace(msg.headers as never), () =>
          tracer.startActiveSpan('rpc memex.svc.bench.traced', { kind: SpanKind.SERVER }, async (span) => {
            msg.respond(encodeJson({ result: decodeJson<RpcRequest>(msg.data).params }));
            span.end();
          }),
        );
      },
    });
    const variants = {
      ours: () => callRpc(bus, 'memex.rpc.bench.echo', request, 10_000),
      theirs: async () =>
        decodeJson((await bus.nc.request('memex.svc.bench.echo', encodeJson(request), { timeout: 10_000 })).data),
      theirsTraced: async () =>
        decodeJson(
          (
            await bus.nc.request('memex.svc.bench.traced', encodeJson(request), {
              timeout: 10_000,
              headers: injectTrace(),
            })
          ).data,
        ),
    };
    // Two rounds, the second reported: the first one measured pays the process's JIT warm-up
    // (it made whichever variant ran first look 30–60% slower).
    let measured: Record<keyof typeof variants, Awaited<ReturnType<typeof measure>>> | undefined;
    for (let i = 0; i < 2; i++) {
      measured = {
        theirs: await measure(variants.theirs),
        ours: await measure(variants.ours),
        theirsTraced: await measure(variants.theirsTraced),
      };
    }
    const { ours, theirs, theirsTraced } = measured!;
    served.unsubscribe();
    await service.stop();

    const round = (ms: number) => Math.round(ms * 1000) / 1000;
    return [
      {
        suite: 'rpc',
        name: `round trip p50, libs/bus/rpc.ts (${CALLS} sequential calls)`,
        value: round(ours.p50),
        unit: 'ms',
        reference: { name: '@nats-io/services endpoint, same JSON', value: round(theirs.p50) },
        notes: `p99 ${round(ours.p99)} ms vs ${round(theirs.p99)} ms`,
      },
      {
        suite: 'rpc',
        name: `round trip p50, libs/bus/rpc.ts (${CALLS} sequential calls), against an endpoint carrying the trace too`,
        value: round(ours.p50),
        unit: 'ms',
        reference: { name: '@nats-io/services endpoint with trace headers and a span', value: round(theirsTraced.p50) },
        notes: `p99 ${round(ours.p99)} ms vs ${round(theirsTraced.p99)} ms; ${ours.perSecond} vs ${theirsTraced.perSecond} calls/s with ${IN_FLIGHT} in flight`,
      },
      {
        suite: 'rpc',
        name: `calls per second, libs/bus/rpc.ts (${IN_FLIGHT} in flight)`,
        value: ours.perSecond,
        unit: 'calls/s',
        reference: { name: '@nats-io/services endpoint, same JSON', value: theirs.perSecond },
      },
    ];
  } finally {
    await bus.close();
    await env.stop();
  }
}
