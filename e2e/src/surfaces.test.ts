import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { ItemsGet, NotesPut, PROTO_PATH, TokensCreate } from '@memex/contracts';
import { startTracing } from '@memex/telemetry';
import { startStack, type TestStack } from './stack.js';

const spans = new InMemorySpanExporter();
startTracing({ serviceName: 'memex-test', exporter: spans });

type Unary = (
  request: unknown,
  metadata: grpc.Metadata,
  callback: (error: grpc.ServiceError | null, value?: unknown) => void,
) => void;

describe('gateway surfaces: traces, metrics, gRPC, OpenAPI', () => {
  let stack: TestStack;
  before(async () => {
    stack = await startStack(['ingest']);
  });
  after(async () => stack.stop());

  test('one trace runs from the gateway through NATS into the service and its SQL', async () => {
    spans.reset();
    const put = await stack.owner.call(NotesPut, { body: 'traced note' });
    await stack.owner.call(ItemsGet, { id: put.id, min_seq: put.seq });
    const finished = spans.getFinishedSpans();
    const client = finished.find((s) => s.name === 'call memex.rpc.ingest.items.get');
    assert.ok(client, `spans: ${finished.map((s) => s.name).join(', ')}`);
    const traceId = client.spanContext().traceId;
    const inTrace = finished.filter((s) => s.spanContext().traceId === traceId);
    const server = inTrace.find((s) => s.name === 'rpc memex.rpc.ingest.items.get');
    assert.ok(server, 'the service span continues the gateway trace across NATS');
    assert.ok(
      inTrace.some((s) => s.name === 'pg.query' && String(s.attributes['db.statement']).includes('"items"')),
      'the SQL of the query is in the same trace',
    );
    // The projection of the note continues the trace of the publish (traceparent in NATS headers).
    const putClient = finished.find((s) => s.name === 'call memex.rpc.ingest.notes.put')!;
    assert.ok(
      finished.some((s) => s.name === 'project ingest' && s.spanContext().traceId === putClient.spanContext().traceId),
    );
  });

  test('/metrics answers the owner token only, and has request latency, the log sequence and lag per projector', async () => {
    assert.equal((await fetch(`${stack.url}/metrics`)).status, 401);
    const { token } = await stack.owner.call(TokensCreate, { name: 'metrics-probe', labels: [] });
    const agentReply = await fetch(`${stack.url}/metrics`, { headers: { authorization: `Bearer ${token}` } });
    assert.equal(agentReply.status, 403);
    const reply = await fetch(`${stack.url}/metrics`, { headers: { authorization: `Bearer ${stack.ownerToken}` } });
    const text = await reply.text();
    assert.match(text, /^memex_process_cpu_seconds_total \d/m);
    assert.doesNotMatch(text, /memex_process_process_|memex_process_nodejs_/);
    assert.match(text, /memex_request_duration_seconds_count\{method="memex.notes.put",code="ok"\} \d+/);
    assert.match(text, /memex_log_last_seq \d+/);
    assert.match(text, /memex_projector_lag\{projector="ingest"\} \d+/);
    assert.match(text, /memex_projector_lag\{projector="gateway"\} \d+/);
  });

  test('gRPC serves the same methods with the same auth', async () => {
    const definition = protoLoader.loadSync(PROTO_PATH, {
      keepCase: true,
      longs: Number,
      defaults: true,
      oneofs: true,
    });
    const Memex = (grpc.loadPackageDefinition(definition) as any).memex.v1.Memex;
    const grpcServer = (await import('@memex/gateway')).GrpcServer;
    const port = stack.gateway.get(grpcServer).port;
    const client = new Memex(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
    const call = (method: string, request: unknown, token?: string) =>
      new Promise<any>((resolve, reject) => {
        const metadata = new grpc.Metadata();
        if (token) metadata.set('authorization', `Bearer ${token}`);
        (client[method] as Unary).call(client, request, metadata, (error, value) =>
          error ? reject(error) : resolve(value),
        );
      });
    const put = await call('NotesPut', { fields: { body: { stringValue: 'from gRPC' } } }, stack.ownerToken);
    const id = put.fields.id.stringValue as string;
    const seq = put.fields.seq.numberValue as number;
    const item = await call(
      'ItemsGet',
      { fields: { id: { stringValue: id }, min_seq: { numberValue: seq } } },
      stack.ownerToken,
    );
    assert.equal(item.fields.text.stringValue, 'from gRPC');
    await assert.rejects(
      call('ItemsGet', { fields: { id: { stringValue: id } } }),
      (error: grpc.ServiceError) => error.code === grpc.status.UNAUTHENTICATED,
    );
    await assert.rejects(
      call('ItemsGet', { fields: { nope: { stringValue: 'x' } } }, stack.ownerToken),
      (error: grpc.ServiceError) => error.code === grpc.status.INVALID_ARGUMENT && /params\.id/.test(error.details),
    );
    // The event stream over gRPC, from the note's sequence.
    const stream = client.Subscribe(
      { from_seq: seq, types: ['note.put'] },
      (() => {
        const metadata = new grpc.Metadata();
        metadata.set('authorization', `Bearer ${stack.ownerToken}`);
        return metadata;
      })(),
    );
    const first = await new Promise<any>((resolve, reject) => stream.once('data', resolve).once('error', reject));
    stream.cancel();
    assert.equal(first.seq, seq);
    assert.equal(JSON.parse(first.json).data.body, 'from gRPC');
    client.close();
  });

  test('OpenAPI lists every method with its schemas', async () => {
    const doc = (await (await fetch(`${stack.url}/api/v1/openapi.json`)).json()) as { paths: Record<string, any> };
    const put = doc.paths['/api/v1/memex/notes.put'].post;
    assert.equal(put.operationId, 'memex.notes.put');
    assert.deepEqual(put.requestBody.content['application/json'].schema.required, ['body']);
    assert.ok(doc.paths['/api/v1/memex/rpc']);
    assert.ok(doc.paths['/api/v1/memex/events']);
  });
});
