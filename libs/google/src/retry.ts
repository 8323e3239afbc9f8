/** How to retry a call to Google (its documented advice: exponential backoff with jitter). */
export interface RetryOptions {
  /** Attempts in all, the first included. */
  attempts: number;
  baseMs: number;
  maxMs: number;
  random: () => number;
  sleep: (ms: number) => Promise<void>;
  /** Told before each wait (metrics, logs). */
  onRetry?: (info: { attempt: number; delayMs: number; status: number | undefined }) => void;
}

export const DEFAULT_RETRY: RetryOptions = {
  attempts: 8,
  baseMs: 500,
  maxMs: 64_000,
  random: Math.random,
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
};

interface HttpErrorLike {
  status?: number;
  code?: number | string;
  response?: { status?: number; headers?: unknown; data?: unknown };
}

/** The HTTP status of a gaxios/googleapis error, if it has one. */
export function httpStatus(error: unknown): number | undefined {
  const e = error as HttpErrorLike | null;
  const status = e?.response?.status ?? e?.status ?? (typeof e?.code === 'number' ? e.code : undefined);
  return typeof status === 'number' ? status : undefined;
}

function header(error: unknown, name: string): string | undefined {
  const headers = (error as HttpErrorLike | null)?.response?.headers;
  if (!headers) return undefined;
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined;
  const value = (headers as Record<string, unknown>)[name] ?? (headers as Record<string, unknown>)[name.toLowerCase()];
  return typeof value === 'string' ? value : undefined;
}

/** The reasons in Google's error body (`error.errors[].reason`, `error.status`). */
function reasons(error: unknown): string[] {
  const data = (error as HttpErrorLike | null)?.response?.data as
    { error?: { errors?: Array<{ reason?: string }>; status?: string } } | undefined;
  const body = data?.error;
  return [...(body?.errors ?? []).map((e) => e.reason ?? ''), body?.status ?? ''].filter(Boolean);
}

const RATE_REASONS = new Set(['rateLimitExceeded', 'userRateLimitExceeded', 'RESOURCE_EXHAUSTED', 'quotaExceeded']);

/** 429, a 403 that says rate limit, 5xx, and a dropped connection are worth another try. */
export function isRetryable(error: unknown): boolean {
  const status = httpStatus(error);
  if (status === undefined) {
    const code = (error as { code?: unknown } | null)?.code;
    return (
      typeof code === 'string' && ['ECONNRESET', 'ECONNREFUSED', 'ETIMEDOUT', 'EPIPE', 'UND_ERR_SOCKET'].includes(code)
    );
  }
  if (status === 429 || status >= 500) return true;
  return status === 403 && reasons(error).some((reason) => RATE_REASONS.has(reason));
}

/** Retry-After in milliseconds (seconds or an HTTP date), if the answer carried one. */
export function retryAfterMs(error: unknown, now = Date.now()): number | undefined {
  const value = header(error, 'retry-after');
  if (!value) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/** Full jitter under an exponential cap; never sooner than the server's Retry-After. */
export function retryDelayMs(
  error: unknown,
  attempt: number,
  options: Pick<RetryOptions, 'baseMs' | 'maxMs' | 'random'>,
): number {
  const cap = Math.min(options.maxMs, options.baseMs * 2 ** (attempt - 1));
  const jittered = Math.round(cap / 2 + (options.random() * cap) / 2);
  return Math.max(jittered, retryAfterMs(error) ?? 0);
}

/** Runs `call`, retrying what Google says to retry; other errors and the last failure are thrown. */
export async function withRetry<T>(call: () => Promise<T>, options: Partial<RetryOptions> = {}): Promise<T> {
  const o = { ...DEFAULT_RETRY, ...options };
  for (let attempt = 1; ; attempt++) {
    try {
      return await call();
    } catch (error) {
      if (attempt >= o.attempts || !isRetryable(error)) throw error;
      const delayMs = retryDelayMs(error, attempt, o);
      o.onRetry?.({ attempt, delayMs, status: httpStatus(error) });
      await o.sleep(delayMs);
    }
  }
}
