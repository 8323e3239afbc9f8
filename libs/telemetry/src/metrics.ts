import client from 'prom-client';

/** One registry per process; the gateway serves it at /metrics. */
export const metricsRegistry = new client.Registry();
// The default names already say what they are (process_cpu_seconds_total, nodejs_heap_…).
client.collectDefaultMetrics({ register: metricsRegistry, prefix: 'memex_' });

export const requestDuration = new client.Histogram({
  name: 'memex_request_duration_seconds',
  help: 'API request latency by method and outcome',
  labelNames: ['method', 'code'] as const,
  buckets: [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10],
  registers: [metricsRegistry],
});

export const eventsApplied = new client.Counter({
  name: 'memex_projector_events_applied_total',
  help: 'Events applied by each projector (in this process)',
  labelNames: ['projector'] as const,
  registers: [metricsRegistry],
});

export { client as prometheus };
