import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, beforeEach, describe, it } from 'node:test';
import { HttpEmbeddingError, HttpEmbeddingProvider, type HttpEmbeddingOptions } from './http.js';
import { dot, isZeroVector } from './provider.js';

/** The fake model: a deterministic, unnormalized 4-d vector per text. */
function fakeVector(text: string): number[] {
  let h = 0;
  for (const c of text) h = (h * 31 + c.charCodeAt(0)) % 1000;
  return [text.length, h, 3, -1];
}

interface Seen {
  path: string;
  headers: IncomingMessage['headers'];
  body: { model: string; input: string[] };
}

/** A real HTTP server speaking both protocols; `script` can override the next responses. */
class FakeServer {
  seen: Seen[] = [];
  script: Array<(res: ServerResponse, body: Seen['body']) => void> = [];
  private server!: Server;
  baseUrl = '';

  async start() {
    this.server = createServer((req, res) => {
      let raw = '';
      req.on('data', (c: Buffer) => (raw += c.toString()));
      req.on('end', () => {
        const body = JSON.parse(raw) as Seen['body'];
        this.seen.push({ path: req.url ?? '', headers: req.headers, body });
        const scripted = this.script.shift();
        if (scripted) return scripted(res, body);
        res.setHeader('content-type', 'application/json');
        if (req.url === '/v1/embeddings') {
          // Items deliberately in reverse order: clients must use `index`.
          const data = body.input
            .map((t, index) => ({
              object: 'embedding',
              index,
              embedding: fakeVector(t),
            }))
            .reverse();
          res.end(JSON.stringify({ object: 'list', data, model: body.model }));
        } else if (req.url === '/api/embed') {
          res.end(
            JSON.stringify({
              model: body.model,
              embeddings: body.input.map(fakeVector),
            }),
          );
        } else {
          res.statusCode = 404;
          res.end('not found');
        }
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.baseUrl = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop() {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

const status =
  (code: number, text = 'nope', headers: Record<string, string> = {}) =>
  (res: ServerResponse) => {
    res.writeHead(code, headers);
    res.end(text);
  };

function assertIsFake(v: Float32Array | undefined, text: string) {
  assert.ok(v);
  const want = fakeVector(text);
  const norm = Math.hypot(...want);
  want.forEach((x, d) => assert.ok(Math.abs(v[d]! - x / norm) < 1e-6, `${text} dim ${d}`));
}

describe('HttpEmbeddingProvider', () => {
  const server = new FakeServer();
  before(() => server.start());
  after(() => server.stop());
  beforeEach(() => {
    server.seen = [];
    server.script = [];
  });
  /** A provider for model "m" on the fake server, dims given so no probe request is made. */
  const fakeModel = (options: Partial<HttpEmbeddingOptions> = {}) =>
    HttpEmbeddingProvider.connect({
      baseUrl: server.baseUrl,
      model: 'm',
      dims: 4,
      ...options,
    });

  it('speaks the OpenAI protocol: batches, honours index order, sends the key, normalizes', async () => {
    const p = await HttpEmbeddingProvider.connect({
      baseUrl: server.baseUrl,
      model: 'fake-embed',
      apiKey: 'sk-test',
      batchSize: 2,
    });
    assert.equal(p.dims, 4); // learned from the probe
    assert.equal(p.space, `http:fake-embed@${new URL(server.baseUrl).host}`);
    server.seen = [];
    const texts = ['alpha', 'beta', 'gamma', 'delta', 'epsilon'];
    const vectors = await p.embed(texts);
    texts.forEach((t, i) => assertIsFake(vectors[i], t));
    assert.deepEqual(
      server.seen.map((s) => s.body.input),
      [['alpha', 'beta'], ['gamma', 'delta'], ['epsilon']],
    );
    assert.ok(server.seen.every((s) => s.path === '/v1/embeddings' && s.body.model === 'fake-embed'));
    assert.equal(server.seen[0]?.headers.authorization, 'Bearer sk-test');
  });

  it('accepts a base URL that already ends in /v1, and sends no key when none is set', async () => {
    const p = await HttpEmbeddingProvider.connect({
      baseUrl: `${server.baseUrl}/v1/`,
      model: 'm',
      dims: 4,
    });
    assertIsFake((await p.embed(['x']))[0], 'x');
    assert.equal(server.seen[0]?.path, '/v1/embeddings');
    assert.equal(server.seen[0]?.headers.authorization, undefined);
  });

  it("speaks Ollama's /api/embed", async () => {
    const p = await HttpEmbeddingProvider.connect({
      baseUrl: server.baseUrl,
      model: 'nomic-embed-text',
      protocol: 'ollama',
    });
    const [a, b] = await p.embed(['hello', 'world']);
    assertIsFake(a, 'hello');
    assertIsFake(b, 'world');
    assert.ok(server.seen.every((s) => s.path === '/api/embed'));
    assert.equal(p.describe().details.protocol, 'ollama');
  });

  it('returns the zero vector for empty text without asking the server', async () => {
    const p = await fakeModel();
    const [empty, word] = await p.embed(['  ', 'word']);
    assert.ok(empty && isZeroVector(empty));
    assert.ok(word && Math.abs(dot(word, word) - 1) < 1e-6);
    assert.deepEqual(
      server.seen.map((s) => s.body.input),
      [['word']],
    );
  });

  it('retries 429 and 5xx with backoff, honouring Retry-After', async () => {
    const p = await fakeModel({ retryBaseMs: 5 });
    server.script = [status(503, 'overloaded'), status(429, 'slow down', { 'retry-after': '0' }), status(500, 'oops')];
    assertIsFake((await p.embed(['persist']))[0], 'persist');
    assert.equal(server.seen.length, 4);
  });

  it('gives up after maxRetries, naming the URL, the status and the attempts', async () => {
    const p = await fakeModel({ retryBaseMs: 1, maxRetries: 2 });
    server.script = [status(503), status(503), status(503, 'still down')];
    await assert.rejects(p.embed(['x']), (err: HttpEmbeddingError) => {
      assert.ok(err instanceof HttpEmbeddingError);
      assert.equal(err.status, 503);
      assert.equal(err.url, `${server.baseUrl}/v1/embeddings`);
      assert.match(
        err.message,
        /POST http:\/\/127\.0\.0\.1:\d+\/v1\/embeddings failed after 3 attempts: 503 Service Unavailable: still down/,
      );
      return true;
    });
    assert.equal(server.seen.length, 3);
  });

  it('does not retry other client errors', async () => {
    const p = await fakeModel({ retryBaseMs: 1 });
    server.script = [status(401, '{"error":"invalid api key"}')];
    await assert.rejects(p.embed(['x']), /failed: 401 Unauthorized: \{"error":"invalid api key"\}/);
    assert.equal(server.seen.length, 1);
  });

  it('times out a silent server and retries', async () => {
    const p = await fakeModel({
      timeoutMs: 100,
      retryBaseMs: 1,
      maxRetries: 1,
    });
    server.script = [() => {}]; // never answers
    assertIsFake((await p.embed(['late']))[0], 'late');
    server.script = [() => {}, () => {}];
    await assert.rejects(p.embed(['late']), /failed after 2 attempts: no response within 100 ms/);
  });

  it('rejects malformed responses and a change of dimensions', async () => {
    const p = await fakeModel();
    server.script = [status(200, '<html>')];
    await assert.rejects(p.embed(['x']), /bad response \(.*JSON.*\): <html>/);
    server.script = [status(200, JSON.stringify({ data: [{ index: 0, embedding: [1, 2] }] }))];
    await assert.rejects(p.embed(['x']), /embedding 0 has 2 dims, expected 4/);
    server.script = [status(200, JSON.stringify({ data: [] }))];
    await assert.rejects(p.embed(['x']), /expected 1 embeddings, got 0/);
  });

  it('names an unreachable server', async () => {
    const down = new FakeServer();
    await down.start();
    await down.stop();
    await assert.rejects(
      HttpEmbeddingProvider.connect({
        baseUrl: down.baseUrl,
        model: 'm',
        retryBaseMs: 1,
        maxRetries: 1,
      }),
      (err: Error) =>
        err.message.includes(`${down.baseUrl}/v1/embeddings failed after 2 attempts`) &&
        /ECONNREFUSED/.test(err.message),
    );
    await assert.rejects(HttpEmbeddingProvider.connect({ baseUrl: 'not a url', model: 'm' }), /not a URL: not a url/);
    await assert.rejects(HttpEmbeddingProvider.connect({ baseUrl: down.baseUrl, model: '' }), /no model name given/);
  });
});
