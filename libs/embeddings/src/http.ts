/**
 * Embeddings from a server: an OpenAI-compatible `POST /v1/embeddings` (OpenAI, llama.cpp,
 * vLLM, LM Studio, Ollama's compatibility layer, ...) or Ollama's native `POST /api/embed`.
 * Requests are batched, time-limited and retried with exponential backoff on 429/5xx and
 * network failures; errors name the URL and the HTTP status.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { chunks, l2normalize, type EmbeddingProvider, type ProviderDescription } from './provider.js';

export type HttpProtocol = 'openai' | 'ollama';

export interface HttpEmbeddingOptions {
  /** Server root, e.g. `http://localhost:11434` or `https://api.openai.com/v1`. */
  baseUrl: string;
  model: string;
  /** Default "openai". */
  protocol?: HttpProtocol;
  /** Sent as `Authorization: Bearer …` when set. */
  apiKey?: string;
  /** Expected dimensions; when absent `connect` asks the server with one probe request. */
  dims?: number;
  /** Texts per request (default 64). */
  batchSize?: number;
  /** Per request attempt (default 60 s). */
  timeoutMs?: number;
  /** Retries after the first attempt (default 4). */
  maxRetries?: number;
  /** First backoff delay, doubled each retry (default 500 ms); a Retry-After header wins. */
  retryBaseMs?: number;
}

export class HttpEmbeddingError extends Error {
  override name = 'HttpEmbeddingError';
  constructor(
    message: string,
    readonly url: string,
    readonly status?: number,
  ) {
    super(message);
  }
}

/** Longest wait honoured from a Retry-After header. */
const MAX_RETRY_AFTER_MS = 30_000;

export class HttpEmbeddingProvider implements EmbeddingProvider {
  readonly space: string;
  readonly url: string;
  private readonly protocol: HttpProtocol;
  private dimsValue: number;

  private constructor(private readonly options: HttpEmbeddingOptions) {
    let base: URL;
    try {
      base = new URL(options.baseUrl);
    } catch {
      throw new HttpEmbeddingError(`not a URL: ${options.baseUrl}`, options.baseUrl);
    }
    if (!options.model) throw new HttpEmbeddingError(`no model name given for ${options.baseUrl}`, options.baseUrl);
    this.protocol = options.protocol ?? 'openai';
    const root = base.href.replace(/\/+$/, '');
    // Accept both "https://host" and the common "https://host/v1" as the OpenAI base URL.
    this.url =
      this.protocol === 'ollama'
        ? `${root}/api/embed`
        : root.endsWith('/v1')
          ? `${root}/embeddings`
          : `${root}/v1/embeddings`;
    this.space = `http:${options.model}@${base.host}`;
    this.dimsValue = options.dims ?? 0;
  }

  get dims(): number {
    return this.dimsValue;
  }

  /** Creates the provider; learns `dims` from the server with one request unless given. */
  static async connect(options: HttpEmbeddingOptions): Promise<HttpEmbeddingProvider> {
    const provider = new HttpEmbeddingProvider(options);
    if (!provider.dimsValue) {
      const [probe] = await provider.request(['dimension probe']);
      provider.dimsValue = probe!.length;
    }
    return provider;
  }

  async embed(texts: string[]): Promise<Float32Array[]> {
    const out = new Array<Float32Array>(texts.length);
    // Servers reject empty input; such text has no content, so it gets the zero vector locally.
    const indices: number[] = [];
    texts.forEach((t, i) => (t.trim() === '' ? (out[i] = new Float32Array(this.dims)) : indices.push(i)));
    for (const batch of chunks(indices, this.options.batchSize ?? 64)) {
      const vectors = await this.request(batch.map((i) => texts[i]!));
      batch.forEach((textIndex, j) => (out[textIndex] = vectors[j]!));
    }
    return out;
  }

  /** One batch, with retries. */
  private async request(input: string[]): Promise<Float32Array[]> {
    const maxRetries = this.options.maxRetries ?? 4;
    const baseDelay = this.options.retryBaseMs ?? 500;
    for (let attempt = 0; ; attempt++) {
      const outcome = await this.attempt(input);
      if ('vectors' in outcome) return outcome.vectors;
      if (!outcome.retryable || attempt >= maxRetries) {
        const tries = attempt > 0 ? ` after ${attempt + 1} attempts` : '';
        throw new HttpEmbeddingError(
          `embedding request POST ${this.url} failed${tries}: ${outcome.reason}`,
          this.url,
          outcome.status,
        );
      }
      await sleep(outcome.retryAfterMs ?? baseDelay * 2 ** attempt);
    }
  }

  private async attempt(input: string[]): Promise<
    | { vectors: Float32Array[] }
    | {
        reason: string;
        retryable: boolean;
        status?: number;
        retryAfterMs?: number;
      }
  > {
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      accept: 'application/json',
    };
    if (this.options.apiKey) headers.authorization = `Bearer ${this.options.apiKey}`;
    const timeoutMs = this.options.timeoutMs ?? 60_000;
    let res: Response;
    let body: string;
    try {
      res = await fetch(this.url, {
        method: 'POST',
        headers,
        body: JSON.stringify({ model: this.options.model, input }),
        signal: AbortSignal.timeout(timeoutMs),
      });
      body = await res.text();
    } catch (err) {
      const e = err as Error & { cause?: { code?: string } };
      const reason =
        e.name === 'TimeoutError'
          ? `no response within ${timeoutMs} ms`
          : `${e.message}${e.cause?.code ? ` (${e.cause.code})` : ''}`;
      return { reason, retryable: true };
    }
    if (!res.ok) {
      const reason = `${res.status} ${res.statusText}: ${body.slice(0, 300)}`;
      const retryable = res.status === 429 || res.status === 408 || res.status >= 500;
      return {
        reason,
        retryable,
        status: res.status,
        retryAfterMs: retryAfterMs(res.headers.get('retry-after')),
      };
    }
    try {
      return { vectors: this.parse(JSON.parse(body) as unknown, input.length) };
    } catch (err) {
      return {
        reason: `bad response (${(err as Error).message}): ${body.slice(0, 300)}`,
        retryable: false,
        status: res.status,
      };
    }
  }

  /** Pulls the vectors out of either protocol's response, in input order, checked and normalized. */
  private parse(json: unknown, count: number): Float32Array[] {
    let rows: unknown[];
    if (this.protocol === 'ollama') {
      rows = (json as { embeddings?: unknown[] }).embeddings ?? [];
    } else {
      const data = (json as { data?: Array<{ index?: number; embedding?: unknown }> }).data ?? [];
      // The spec gives each item an index; do not rely on the array order.
      rows = new Array<unknown>(data.length);
      data.forEach((item, i) => (rows[typeof item.index === 'number' ? item.index : i] = item.embedding));
    }
    if (!Array.isArray(rows) || rows.length !== count)
      throw new Error(`expected ${count} embeddings, got ${rows?.length ?? 0}`);
    return rows.map((row, i) => {
      if (!Array.isArray(row) || !row.every((x) => typeof x === 'number' && Number.isFinite(x)))
        throw new Error(`embedding ${i} is not an array of numbers`);
      if (this.dimsValue && row.length !== this.dimsValue)
        throw new Error(
          `embedding ${i} has ${row.length} dims, expected ${this.dimsValue} (did the server's model change?)`,
        );
      return l2normalize(Float32Array.from(row as number[]));
    });
  }

  describe(): ProviderDescription {
    return {
      kind: 'http',
      space: this.space,
      dims: this.dims,
      source: this.url,
      details: {
        protocol: this.protocol,
        model: this.options.model,
        apiKey: Boolean(this.options.apiKey),
      },
    };
  }

  async close(): Promise<void> {}
}

/** Retry-After as milliseconds: delay-seconds or an HTTP date; capped. */
function retryAfterMs(header: string | null): number | undefined {
  if (!header) return undefined;
  const seconds = Number(header);
  const ms = Number.isFinite(seconds) ? seconds * 1000 : Date.parse(header) - Date.now();
  return Number.isFinite(ms) ? Math.min(Math.max(ms, 0), MAX_RETRY_AFTER_MS) : undefined;
}
