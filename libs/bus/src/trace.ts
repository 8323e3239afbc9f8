import { context, propagation, type Context } from '@opentelemetry/api';
import { headers as natsHeaders, type MsgHdrs } from '@nats-io/transport-node';

/** W3C trace context (traceparent, tracestate) carried in NATS headers. */
export function injectTrace(into: MsgHdrs = natsHeaders(), ctx: Context = context.active()): MsgHdrs {
  propagation.inject(ctx, into, {
    set: (carrier, key, value) => carrier.set(key, value),
  });
  return into;
}

export function extractTrace(from: MsgHdrs | undefined): Context {
  if (!from) return context.active();
  return propagation.extract(context.active(), from, {
    get: (carrier, key) => carrier.get(key) || undefined,
    keys: (carrier) => carrier.keys(),
  });
}
