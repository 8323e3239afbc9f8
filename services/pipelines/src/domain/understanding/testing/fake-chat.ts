import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request the fake received: which task (the schema's name), the user message, the protocol. */
export interface FakeChatRequest {
  task: string;
  /** The model name the request asked for. */
  model: string;
  user: string;
  protocol: 'openai' | 'ollama';
  authorization: string | undefined;
}

/** What the fake answers: a JSON value, raw text (to be malformed), or a 429. */
export type FakeChatAnswer = { json: unknown } | { raw: string } | { status: 429; retryAfter: string };

/**
 * A chat model endpoint for tests and benches, a real HTTP server speaking OpenAI's
 * `/v1/chat/completions` (with `response_format: json_schema`) and Ollama's `/api/chat` (with
 * `format`). Answers come from a script; each answer counts `tokens` tokens; every request is
 * counted, so a test can show a replay asked nothing.
 */
export class FakeChatServer {
  readonly requests: FakeChatRequest[] = [];
  private server: http.Server | undefined;
  /** Milliseconds before each answer. */
  latencyMs = 0;
  tokens = 100;

  constructor(public script: (request: FakeChatRequest) => FakeChatAnswer) {}

  get url(): string {
    return `http://127.0.0.1:${(this.server!.address() as AddressInfo).port}`;
  }

  /** Requests for a task (all when omitted). */
  count(task?: string): number {
    return this.requests.filter((r) => task === undefined || r.task === task).length;
  }

  async start(): Promise<void> {
    this.server = http.createServer((req, res) => {
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (chunk: string) => (body += chunk));
      req.on('end', () => {
        setTimeout(() => this.answer(req, res, body), this.latencyMs);
      });
    });
    // Requests overlap: the default keep-alive and header limits are plenty.
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
  }

  private answer(req: http.IncomingMessage, res: http.ServerResponse, body: string): void {
    const protocol = req.url === '/api/chat' ? 'ollama' : req.url === '/v1/chat/completions' ? 'openai' : undefined;
    if (req.method !== 'POST' || !protocol) {
      res.writeHead(404).end(JSON.stringify({ error: `no ${req.method} ${req.url}` }));
      return;
    }
    const parsed = JSON.parse(body) as {
      model: string;
      messages: Array<{ role: string; content: string }>;
      response_format?: { type: string; json_schema: { name: string } };
      format?: { properties?: Record<string, unknown> };
    };
    const task =
      protocol === 'openai'
        ? (parsed.response_format?.json_schema.name ?? '')
        : Object.keys(parsed.format?.properties ?? {}).join(',');
    const request: FakeChatRequest = {
      task,
      model: parsed.model,
      user: parsed.messages.find((m) => m.role === 'user')?.content ?? '',
      protocol,
      authorization: req.headers.authorization,
    };
    this.requests.push(request);
    const answer = this.script(request);
    if ('status' in answer) {
      res.writeHead(429, { 'retry-after': answer.retryAfter, 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: 'rate limited', type: 'rate_limit_exceeded' } }));
      return;
    }
    const content = 'json' in answer ? JSON.stringify(answer.json) : answer.raw;
    const reply =
      protocol === 'openai'
        ? {
            id: `chatcmpl-${this.requests.length}`,
            object: 'chat.completion',
            choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
            usage: { prompt_tokens: this.tokens - 10, completion_tokens: 10, total_tokens: this.tokens },
          }
        : {
            message: { role: 'assistant', content },
            done: true,
            prompt_eval_count: this.tokens - 10,
            eval_count: 10,
          };
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(reply));
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
