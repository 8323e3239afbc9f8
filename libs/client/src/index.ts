import {
  MemexError,
  type ErrorCode,
  type EventEnvelope,
  type MethodDefinition,
  type ParamsOf,
  type ResultOf,
} from '@memex/contracts';
import { Agent, fetch } from 'undici';

/**
 * Calls wait as long as their method runs: `memex replay` of a large read model answers after
 * many minutes, and fetch's own dispatcher gives up on an answer's headers after 5 (it failed a
 * replay of search over a 5,000-message log as "fetch failed").
 */
const patient = new Agent({ headersTimeout: 0, bodyTimeout: 0 });

export interface ClientOptions {
  /** Gateway base URL, e.g. http://127.0.0.1:7777 */
  url: string;
  token: string;
}

export interface StreamedEvent {
  seq: number;
  event: EventEnvelope;
}

/** The gateway over HTTP: typed calls by method definition, and the SSE event stream. */
export class MemexClient {
  constructor(readonly options: ClientOptions) {}

  /** Calls a method by its definition, typed by its params and result schemas. */
  async call<M extends MethodDefinition>(method: M, params: ParamsOf<M>): Promise<ResultOf<M>> {
    return (await this.rpc(method.name, params)) as ResultOf<M>;
  }

  /** Calls any method by name; a failure throws MemexError with the gateway's code and message. */
  async rpc(method: string, params: unknown = {}): Promise<unknown> {
    const response = await fetch(`${this.options.url}/api/v1/memex/rpc`, {
      dispatcher: patient,
      method: 'POST',
      headers: { authorization: `Bearer ${this.options.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ method, params }),
    });
    const body = (await response.json().catch(() => null)) as
      { result: unknown } | { error: { code: ErrorCode; message: string } } | null;
    if (body && 'error' in body) throw new MemexError(body.error.code, body.error.message);
    if (!response.ok || !body) throw new MemexError('internal', `gateway answered HTTP ${response.status}`);
    return body.result;
  }

  /** Follows the event stream from a sequence until the signal aborts. */
  async *events(
    options: { fromSeq?: number; types?: string[]; signal?: AbortSignal } = {},
  ): AsyncGenerator<StreamedEvent> {
    const query = new URLSearchParams();
    if (options.fromSeq) query.set('from_seq', String(options.fromSeq));
    if (options.types?.length) query.set('types', options.types.join(','));
    const response = await fetch(`${this.options.url}/api/v1/memex/events?${query}`, {
      headers: { authorization: `Bearer ${this.options.token}`, accept: 'text/event-stream' },
      ...(options.signal ? { signal: options.signal } : {}),
    });
    if (!response.ok || !response.body) {
      const body = (await response.json().catch(() => null)) as { error?: { code: ErrorCode; message: string } } | null;
      throw new MemexError(body?.error?.code ?? 'internal', body?.error?.message ?? `HTTP ${response.status}`);
    }
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for await (const chunk of response.body) {
        buffer += decoder.decode(chunk as Uint8Array, { stream: true });
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const frame = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const fields = parseFrame(frame);
          if (fields.id && fields.data)
            yield { seq: Number(fields.id), event: JSON.parse(fields.data) as EventEnvelope };
        }
      }
    } catch (error) {
      if (!options.signal?.aborted) throw error;
    }
  }
}

function parseFrame(frame: string): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const line of frame.split('\n')) {
    if (!line || line.startsWith(':')) continue;
    const colon = line.indexOf(':');
    const key = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
    fields[key] = fields[key] !== undefined && key === 'data' ? `${fields[key]}\n${value}` : value;
  }
  return fields;
}
