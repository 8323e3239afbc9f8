import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { MemexClient } from '@memex/client';
import { MemexError } from '@memex/contracts';
import { ReadModelWatch } from './read-model-watch.js';
import { Uploader, type Result } from './uploader.js';

/**
 * A gateway as an import meets it under backpressure: memex.ingest answers 503 `unavailable`
 * (waiting for a read model) `refusals` times, then takes the batch; /healthz reports the search
 * projector's lag, one reading after the other.
 */
class BusyGateway {
  refusals = 0;
  lags: number[] = [];
  /** The batch id of every memex.ingest request, in order. */
  batches: string[] = [];
  private server = http.createServer((request, response) => {
    const reply = (status: number, body: unknown) =>
      response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    if (request.url === '/healthz') {
      const lag = this.lags.length > 1 ? this.lags.shift()! : (this.lags[0] ?? 0);
      return reply(200, { services: [{ service: 'search', ready: true, projector: { checkpoint: 1, lag } }] });
    }
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString()));
    request.on('end', () => {
      const { params } = JSON.parse(body) as { params: { items: unknown[]; batch: string } };
      this.batches.push(params.batch);
      if (this.refusals > 0) {
        this.refusals--;
        return reply(503, { error: { code: 'unavailable', message: 'memex.ingest waits for the search read model' } });
      }
      reply(200, { result: { results: params.items.map((_, i) => ({ status: 'created', id: `item-${i}` })) } });
    });
  });

  async start(): Promise<string> {
    this.server.listen(0, '127.0.0.1');
    await new Promise((resolve) => this.server.once('listening', resolve));
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  stop(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

describe('an import under backpressure', () => {
  const gateway = new BusyGateway();
  let url: string;
  before(async () => (url = await gateway.start()));
  after(() => gateway.stop());

  /** One batch of one item through an uploader with no retries of its own. */
  const upload = async (patienceMs?: number) => {
    const answered: Result[][] = [];
    const watch = new ReadModelWatch(url, patienceMs);
    const uploader = new Uploader({
      client: new MemexClient({ url, token: 'test' }),
      batchItems: 10,
      batchBytes: 1 << 20,
      inFlight: 1,
      retries: 0,
      onBatch: (_, results) => answered.push(results),
      catchingUp: async () => (await watch.catchingUp()).busy,
    });
    await uploader.add({ key: 'a', item: { type: 'text/plain', data: 'YQ==' } as never, bytes: 1 });
    await uploader.finish();
    return answered;
  };

  test('waits past its retries while the read models catch up, and sends the batch then', async () => {
    gateway.refusals = 2;
    gateway.lags = [90_000, 60_000, 30_000];
    gateway.batches = [];
    assert.deepEqual(await upload(), [[{ status: 'created', id: 'item-0' }]]);
    assert.equal(gateway.refusals, 0);
    // Sent three times under one batch id (what an earlier send stored is answered as stored);
    // the next batch has its own.
    const [id, ...again] = gateway.batches;
    assert.ok(id && again.length === 2 && again.every((other) => other === id), JSON.stringify(gateway.batches));
    await upload();
    assert.notEqual(gateway.batches.at(-1), id);
  });

  test('keeps waiting while the lag first grows, then falls again (the pipelines still adding to it)', async () => {
    gateway.refusals = 3;
    gateway.lags = [40_000, 50_000, 45_000];
    assert.deepEqual(await upload(1_500), [[{ status: 'created', id: 'item-0' }]]);
  });

  test('gives up as before when no read model is behind (the memex is away or refusing for another reason)', async () => {
    gateway.refusals = 2;
    gateway.lags = [0];
    await assert.rejects(upload(), (error) => error instanceof MemexError && error.code === 'unavailable');
  });

  test('gives up when the lag stops shrinking for longer than its patience (a read model stuck)', async () => {
    gateway.refusals = 3;
    gateway.lags = [70_000];
    await assert.rejects(upload(500), (error) => error instanceof MemexError && error.code === 'unavailable');
    gateway.refusals = 0;
  });
});
