import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import {
  BatchSpanProcessor,
  SimpleSpanProcessor,
  type SpanExporter,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';

export interface TracingOptions {
  serviceName: string;
  /** OTLP/HTTP endpoint (OTEL_EXPORTER_OTLP_ENDPOINT); spans are exported there when set. */
  otlpEndpoint?: string | undefined;
  /** Extra exporter, e.g. an in-memory one in tests. */
  exporter?: SpanExporter;
}

let provider: NodeTracerProvider | undefined;

/**
 * Registers the process-wide tracer provider: W3C trace context propagation and async context,
 * so a trace flows from the gateway through NATS headers into a service and its SQL.
 * Spans are created even without an exporter; context still propagates.
 */
export function startTracing(options: TracingOptions): NodeTracerProvider {
  if (provider) return provider;
  const spanProcessors: SpanProcessor[] = [];
  if (options.otlpEndpoint) {
    spanProcessors.push(
      new BatchSpanProcessor(new OTLPTraceExporter({ url: `${options.otlpEndpoint.replace(/\/$/, '')}/v1/traces` })),
    );
  }
  if (options.exporter) spanProcessors.push(new SimpleSpanProcessor(options.exporter));
  provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ 'service.name': options.serviceName }),
    spanProcessors,
  });
  provider.register();
  return provider;
}

export async function stopTracing(): Promise<void> {
  await provider?.shutdown();
  provider = undefined;
}
