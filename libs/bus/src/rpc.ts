import { context, SpanKind, trace } from '@opentelemetry/api';
import { createInbox, headers as natsHeaders, type Msg, type Subscription } from '@nats-io/transport-node';
import {
  MemexError,
  isMemexError,
  OWNER_SCOPE,
  rpcSubject,
  type Actor,
  type ErrorCode,
  type MethodDefinition,
  type ParamsOf,
  type ResultOf,
  type Scope,
} from '@memex/contracts';
import type { Bus } from './bus.js';
import { decodeJson, encodeJson } from './codec.js';
import { extractTrace, injectTrace } from './trace.js';

/** What the gateway sends a service: the params and who is asking, with the scope it computed. */
export interface RpcRequest<P = unknown> {
  method: string;
  params: P;
  scope: Scope;
  caller: Actor;
}

export type RpcReply<R = unknown> = { result: R } | { error: { code: ErrorCode; message: string } };

export type RpcHandler = (request: RpcRequest) => Promise<unknown>;

const tracer = trace.getTracer('memex-bus');

/** Header of the interim replies a handler served with `heartbeatMs` sends while it works. */
const WORKING_HEADER = 'Memex-Working';

/**
 * Answers requests on a subject, as one of a queue group so replicas share the load. With
 * `heartbeatMs`, a handler that works for long (a replay) says so every `heartbeatMs` to a caller
 * using `callLongRpc`, which can then tell a long job from a dead process.
 */
export function serveRpc(
  bus: Bus,
  subject: string,
  queue: string,
  handler: RpcHandler,
  { heartbeatMs }: { heartbeatMs?: number } = {},
): Subscription {
  return bus.nc.subscribe(subject, {
    queue,
    callback: (error, msg) => {
      if (error) return;
      void answer(msg, subject, handler, heartbeatMs);
    },
  });
}

async function answer(msg: Msg, subject: string, handler: RpcHandler, heartbeatMs?: number): Promise<void> {
  const working = natsHeaders();
  working.set(WORKING_HEADER, '1');
  const heartbeat = heartbeatMs
    ? setInterval(() => msg.respond(undefined, { headers: working }), heartbeatMs)
    : undefined;
  try {
    await answerOnce(msg, subject, handler);
  } finally {
    clearInterval(heartbeat);
  }
}

async function answerOnce(msg: Msg, subject: string, handler: RpcHandler): Promise<void> {
  const parent = extractTrace(msg.headers);
  await context.with(parent, () =>
    tracer.startActiveSpan(`rpc ${subject}`, { kind: SpanKind.SERVER }, async (span) => {
      let reply: RpcReply;
      try {
        const request = decodeJson<RpcRequest>(msg.data);
        reply = { result: (await handler(request)) ?? null };
      } catch (error) {
        reply = { error: toWireError(error) };
        if (!isMemexError(error)) span.recordException(error as Error);
      } finally {
        span.end();
      }
      msg.respond(encodeJson(reply));
    }),
  );
}

function toWireError(error: unknown): { code: ErrorCode; message: string } {
  if (isMemexError(error)) return error.toJSON();
  const message = error instanceof Error ? error.message : String(error);
  console.error('rpc handler failed:', error);
  return { code: 'internal', message: `internal error: ${message}` };
}

/** No process of the service that answers `subject` runs (NATS had no responders): unavailable. */
export class NoService extends MemexError {
  constructor(readonly subject: string) {
    super('unavailable', `no service answers ${subject}: is it running?`);
  }
}

/** What a call whose connection dropped while it waited fails with: it may or may not have been done. */
function droppedWhileWaiting(subject: string): MemexError {
  return new MemexError(
    'unavailable',
    `the connection to NATS dropped while waiting for ${subject} (NATS restarted?): it may or may not have been done; ask again`,
  );
}

/**
 * Calls a service. Errors come back as MemexError with the service's code and message; a call
 * whose connection drops meanwhile fails at once, `unavailable` (its reply would never come).
 */
export async function callRpc<R = unknown>(
  bus: Bus,
  subject: string,
  request: RpcRequest,
  timeoutMs: number,
): Promise<R> {
  return tracer.startActiveSpan(`call ${subject}`, { kind: SpanKind.CLIENT }, async (span) => {
    let stopListening = () => {};
    try {
      const started = Date.now();
      await bus.connected(timeoutMs);
      // The time waited for the reconnection counts: the caller waits `timeoutMs` in all.
      const left = Math.max(1, timeoutMs - (Date.now() - started));
      const dropped = new Promise<never>((_, reject) => {
        stopListening = bus.onDrop(() => reject(droppedWhileWaiting(subject)));
      });
      const payload = encodeJson(request);
      // A request NATS would refuse: say how large, and what the limit is (a NATS of one's own at its 1 MB default).
      const most = bus.nc.info?.max_payload;
      if (most !== undefined && payload.length > most) {
        const mb = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;
        throw new MemexError(
          'invalid_params',
          `the request to ${subject} is ${mb(payload.length)}, more than NATS takes in one message (its max_payload, ${mb(most)}): send less in one request, or raise max_payload to 64MB`,
        );
      }
      const msg = await Promise.race([
        bus.nc.request(subject, payload, { timeout: left, headers: injectTrace(natsHeaders()) }),
        dropped,
      ]);
      const reply = decodeJson<RpcReply<R>>(msg.data);
      if ('error' in reply) throw new MemexError(reply.error.code, reply.error.message);
      return reply.result;
    } catch (error) {
      if (isMemexError(error)) throw error;
      const text = String((error as Error)?.message ?? error);
      if (/no responders/i.test(text)) {
        throw new NoService(subject);
      }
      if (/timeout/i.test(text)) {
        throw new MemexError('timeout', `${subject} did not answer within ${timeoutMs} ms`);
      }
      throw error;
    } finally {
      stopListening();
      span.end();
    }
  });
}

/**
 * Calls a handler that may work for long (served with `heartbeatMs`): waits as long as the
 * service keeps saying it works, and fails as `unavailable` once it is silent for `silenceMs`
 * (its process died: nothing will answer, so the caller need not wait out a long timeout).
 */
export async function callLongRpc<R = unknown>(
  bus: Bus,
  subject: string,
  request: RpcRequest,
  silenceMs: number,
): Promise<R> {
  await bus.connected(silenceMs);
  const inbox = createInbox();
  const replies = bus.nc.subscribe(inbox);
  const next = replies[Symbol.asyncIterator]();
  let timer: NodeJS.Timeout | undefined;
  let fail: (error: MemexError) => void = () => {};
  const silent = new Promise<never>((_, reject) => (fail = reject));
  const rearm = () => {
    clearTimeout(timer);
    timer = setTimeout(
      () =>
        fail(
          new MemexError(
            'unavailable',
            `${subject} fell silent for ${silenceMs / 1000} s while working: the service stopped (or restarted), so it did not finish; ask again`,
          ),
        ),
      silenceMs,
    );
  };
  rearm();
  const stopListening = bus.onDrop(() => fail(droppedWhileWaiting(subject)));
  try {
    bus.nc.publish(subject, encodeJson(request), { reply: inbox, headers: injectTrace(natsHeaders()) });
    for (;;) {
      const { value: msg, done } = await Promise.race([next.next(), silent]);
      if (done) throw new MemexError('unavailable', `the connection closed while waiting for ${subject}`);
      if (msg.headers?.code === 503) throw new NoService(subject);
      if (msg.headers?.get(WORKING_HEADER)) {
        rearm();
        continue;
      }
      const reply = decodeJson<RpcReply<R>>(msg.data);
      if ('error' in reply) throw new MemexError(reply.error.code, reply.error.message);
      return reply.result;
    }
  } finally {
    stopListening();
    clearTimeout(timer);
    replies.unsubscribe();
  }
}

/**
 * Calls a catalog method straight on the bus the way the gateway would: as the owner, or as the
 * agent session whose scope is given (tests, benchmarks and tools that run beside the services).
 */
export function callMethod<M extends MethodDefinition>(
  bus: Bus,
  method: M,
  params: ParamsOf<M>,
  { scope = OWNER_SCOPE, timeoutMs = 60_000 }: { scope?: Scope; timeoutMs?: number } = {},
): Promise<ResultOf<M>> {
  const caller: Actor =
    scope.kind === 'owner' ? { kind: 'user', id: 'owner' } : { kind: 'session', id: `token:${scope.tokenId}` };
  return callRpc<ResultOf<M>>(bus, rpcSubject(method), { method: method.name, params, scope, caller }, timeoutMs);
}
