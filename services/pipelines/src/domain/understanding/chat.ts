import { isMemexError } from '@memex/contracts';
import type { CredentialsProvider } from '@memex/credentials';
import type { ChatModelInfo } from '../models/registry.js';

/** One question with a structured answer: the answer must be JSON matching `schema`. */
export interface ChatRequest {
  system: string;
  user: string;
  /** A name for the schema (OpenAI's `json_schema.name`). */
  schemaName: string;
  schema: object;
}

/** The answer's text as the endpoint gave it, and the tokens it counted (prompt and answer). */
export interface ChatReply {
  content: string;
  tokens: number;
}

/** The endpoint said 429: wait this long before asking again. */
export class RateLimited extends Error {
  constructor(
    readonly retryAfterMs: number,
    model: string,
  ) {
    super(`${model} answered 429 (rate limited); retry after ${Math.round(retryAfterMs / 1000)} s`);
  }
}

/** Retry-After in seconds or as an HTTP date; without one, a minute. */
export function retryAfterMs(header: string | null, now = Date.now()): number {
  if (header) {
    const seconds = Number(header);
    if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
    const at = Date.parse(header);
    if (Number.isFinite(at)) return Math.max(0, at - now);
  }
  return 60_000;
}

/** How long one request may take: a local model on a CPU can be slow. */
const REQUEST_TIMEOUT_MS = 120_000;

/**
 * A chat model endpoint asked for JSON-schema-constrained answers: OpenAI-compatible
 * `/v1/chat/completions` with `response_format: json_schema` (vLLM, llama.cpp server, LM Studio,
 * OpenAI) or Ollama's `/api/chat` with `format`. The answer is returned as text: checking it
 * against the schema is the caller's (a malformed answer is retried there, and still costs tokens).
 */
export class ChatEndpoint {
  constructor(
    readonly info: ChatModelInfo,
    private readonly apiKey: string | undefined,
  ) {}

  async ask(request: ChatRequest): Promise<ChatReply> {
    const { info } = this;
    const messages = [
      { role: 'system', content: request.system },
      { role: 'user', content: request.user },
    ];
    const body =
      info.protocol === 'ollama'
        ? { model: info.model, messages, format: request.schema, stream: false, options: { temperature: 0 } }
        : {
            model: info.model,
            messages,
            temperature: 0,
            response_format: {
              type: 'json_schema',
              json_schema: { name: request.schemaName, schema: request.schema, strict: true },
            },
          };
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (this.apiKey) headers.authorization = `Bearer ${this.apiKey}`;
    const response = await fetch(endpointUrl(info), {
      method: 'POST',
      headers,
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
    const label = `${info.name}@${info.version}`;
    if (response.status === 429) {
      await response.body?.cancel();
      throw new RateLimited(retryAfterMs(response.headers.get('retry-after')), label);
    }
    const text = await response.text();
    if (!response.ok) throw new Error(`${label} answered ${response.status}: ${text.slice(0, 300)}`);
    let parsed: OpenAiReply & OllamaReply;
    try {
      parsed = JSON.parse(text) as OpenAiReply & OllamaReply;
    } catch {
      throw new Error(`${label} answered with a body that is not JSON: ${text.slice(0, 200)}`);
    }
    if (info.protocol === 'ollama') {
      return {
        content: parsed.message?.content ?? '',
        tokens: (parsed.prompt_eval_count ?? 0) + (parsed.eval_count ?? 0),
      };
    }
    return {
      content: parsed.choices?.[0]?.message?.content ?? '',
      tokens: parsed.usage?.total_tokens ?? (parsed.usage?.prompt_tokens ?? 0) + (parsed.usage?.completion_tokens ?? 0),
    };
  }
}

interface OpenAiReply {
  choices?: Array<{ message?: { content?: string } }>;
  usage?: { total_tokens?: number; prompt_tokens?: number; completion_tokens?: number };
}
interface OllamaReply {
  message?: { content?: string };
  prompt_eval_count?: number;
  eval_count?: number;
}

/** A base URL (with or without `/v1`) to the protocol's chat path. */
function endpointUrl(info: ChatModelInfo): string {
  const base = info.url.replace(/\/+$/, '');
  if (info.protocol === 'ollama') return base.endsWith('/api/chat') ? base : `${base}/api/chat`;
  if (base.endsWith('/chat/completions')) return base;
  return base.endsWith('/v1') ? `${base}/chat/completions` : `${base}/v1/chat/completions`;
}

/**
 * The API key of a chat model: the credential `model:<name>` (the operator's
 * MEMEX_CREDENTIAL_MODEL_<NAME>, else the enrolled head's, short-lived and never stored). None
 * is no key: a local endpoint needs none, and a hosted one answers 401, a visible failure.
 */
export async function modelApiKey(credentials: CredentialsProvider, name: string): Promise<string | undefined> {
  try {
    return (await credentials.get(`model:${name}`)).secret;
  } catch (error) {
    if (isMemexError(error) && error.code === 'not_found') return undefined;
    throw error;
  }
}
