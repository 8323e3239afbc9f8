import { createHash, randomBytes } from 'node:crypto';
import http from 'node:http';
import type { GoogleEndpoints } from '../endpoints.js';

/** One request as a route sees it: JSON (or form) body parsed, the caller's account resolved. */
export interface FakeRequest {
  method: string;
  url: URL;
  /** Path parameters from the route's pattern, in order. */
  params: string[];
  body: unknown;
  /** The account whose access token authorised the call. */
  account: string;
  /** Request headers, lowercase (If-Match for etag preconditions). */
  headers: http.IncomingHttpHeaders;
}

export interface FakeResponse {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

type Route = { method: string; pattern: RegExp; handler: (req: FakeRequest) => FakeResponse | Promise<FakeResponse> };

/** A fault to inject: the next `times` matching API calls answer `status` instead. */
export interface Fault {
  method?: string;
  path?: RegExp;
  times: number;
  status: number;
  /** Seconds, sent as Retry-After. */
  retryAfter?: number;
  /** Google's error reason (`rateLimitExceeded`, `backendError`, …). */
  reason?: string;
}

interface Grant {
  account: string;
  clientId: string;
  scopes: string[];
  revoked: boolean;
}

/** Google's error body. */
export function googleError(status: number, message: string, reason = 'failedPrecondition'): FakeResponse {
  return {
    status,
    body: {
      error: { code: status, message, errors: [{ message, domain: 'global', reason }], status: statusName(status) },
    },
  };
}

function statusName(status: number): string {
  return (
    {
      400: 'INVALID_ARGUMENT',
      401: 'UNAUTHENTICATED',
      403: 'PERMISSION_DENIED',
      404: 'NOT_FOUND',
      409: 'ABORTED',
      410: 'GONE',
      412: 'FAILED_PRECONDITION',
      429: 'RESOURCE_EXHAUSTED',
    }[status] ?? (status >= 500 ? 'UNAVAILABLE' : 'UNKNOWN')
  );
}

/**
 * A real HTTP server speaking Google's OAuth 2.0 (consent redirect, token endpoint with PKCE,
 * refresh, revocation) for the tests; API fakes (Gmail, Calendar, People) add their REST routes
 * with `route`. Every API call needs a live access token, as at Google; faults make the next
 * calls fail the way Google's do (429 storms with Retry-After, 5xx, 401).
 */
export class FakeGoogleServer {
  readonly clientId = 'memex-test.apps.googleusercontent.com';
  readonly clientSecret = 'test-secret';
  /** Seconds an access token lives. */
  accessTokenLifetime = 3600;
  /** Every API call answered (after faults), for assertions: `METHOD /path`. */
  readonly calls: string[] = [];
  /** Token endpoint calls by grant type. */
  readonly tokenCalls = { authorization_code: 0, refresh_token: 0 };
  private readonly routes: Route[] = [];
  private readonly faults: Fault[] = [];
  private readonly grants = new Map<string, Grant>();
  private readonly accessTokens = new Map<string, { refreshToken: string; expiresAt: number }>();
  private readonly codes = new Map<string, { refreshToken: string; challenge: string; redirectUri: string }>();
  /** The account the next consent grants (the user who "signs in" in the fake browser). */
  consentingAccount = 'owner@example.com';
  private server: http.Server | undefined;
  private base = '';

  async start(): Promise<this> {
    this.server = http.createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.base = `http://127.0.0.1:${(this.server.address() as { port: number }).port}`;
    return this;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  get endpoints(): GoogleEndpoints {
    return { apiUrl: `${this.base}/`, tokenUrl: `${this.base}/token`, authUrl: `${this.base}/o/oauth2/v2/auth` };
  }

  /** Google's downloaded client secrets for this fake's client. */
  get clientSecrets(): object {
    return {
      installed: {
        client_id: this.clientId,
        client_secret: this.clientSecret,
        auth_uri: this.endpoints.authUrl,
        token_uri: this.endpoints.tokenUrl,
        redirect_uris: ['http://localhost'],
      },
    };
  }

  route(method: string, pattern: RegExp, handler: Route['handler']): void {
    this.routes.push({ method, pattern, handler });
  }

  fail(fault: Fault): void {
    this.faults.push({ ...fault });
  }

  /** A refresh token as a headless server would bring it (granted elsewhere). */
  issueRefreshToken(account: string, scopes: string[]): string {
    const token = `1//rt-${randomBytes(12).toString('hex')}`;
    this.grants.set(token, { account, clientId: this.clientId, scopes, revoked: false });
    return token;
  }

  /** The user withdraws access (myaccount.google.com → Security → Third-party access). */
  revoke(account: string): void {
    for (const grant of this.grants.values()) if (grant.account === account) grant.revoked = true;
  }

  /** Every access token stops working before its expiry (the next call answers 401). */
  expireAccessTokens(): void {
    this.accessTokens.clear();
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', this.base);
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    let answer: FakeResponse;
    try {
      if (url.pathname === '/token') answer = this.token(new URLSearchParams(raw));
      else if (url.pathname === '/o/oauth2/v2/auth') answer = this.consent(url);
      else answer = await this.api(req, url, raw);
    } catch (error) {
      answer = googleError(500, `fake failed: ${(error as Error).message}`, 'backendError');
    }
    const headers: Record<string, string> = { ...answer.headers };
    let body: string | undefined;
    if (answer.body !== undefined) {
      headers['content-type'] ??= 'application/json; charset=utf-8';
      body = JSON.stringify(answer.body);
    }
    res.writeHead(answer.status, headers).end(body);
  }

  /** The consenting user approves at once and the browser is sent back with a code. */
  private consent(url: URL): FakeResponse {
    const q = url.searchParams;
    const redirectUri = q.get('redirect_uri') ?? '';
    if (q.get('client_id') !== this.clientId) return { status: 400, body: { error: 'invalid_client' } };
    if (q.get('code_challenge_method') !== 'S256' || !q.get('code_challenge'))
      return { status: 400, body: { error: 'invalid_request', error_description: 'PKCE required' } };
    if (q.get('access_type') !== 'offline')
      return { status: 400, body: { error: 'invalid_request', error_description: 'offline access expected' } };
    if (!/^http:\/\/127\.0\.0\.1:\d+\//.test(redirectUri))
      return { status: 400, body: { error: 'redirect_uri_mismatch' } };
    const refreshToken = this.issueRefreshToken(this.consentingAccount, (q.get('scope') ?? '').split(' '));
    const code = `4/code-${randomBytes(8).toString('hex')}`;
    this.codes.set(code, { refreshToken, challenge: q.get('code_challenge')!, redirectUri });
    const back = new URL(redirectUri);
    back.searchParams.set('code', code);
    back.searchParams.set('state', q.get('state') ?? '');
    return { status: 302, headers: { location: back.toString() } };
  }

  private token(form: URLSearchParams): FakeResponse {
    if (form.get('client_id') !== this.clientId || form.get('client_secret') !== this.clientSecret) {
      return { status: 401, body: { error: 'invalid_client', error_description: 'The OAuth client was not found.' } };
    }
    const grantType = form.get('grant_type');
    let refreshToken: string;
    if (grantType === 'authorization_code') {
      this.tokenCalls.authorization_code++;
      const code = this.codes.get(form.get('code') ?? '');
      this.codes.delete(form.get('code') ?? '');
      const verifier = form.get('code_verifier') ?? '';
      if (!code || code.redirectUri !== form.get('redirect_uri'))
        return { status: 400, body: { error: 'invalid_grant', error_description: 'Malformed auth code.' } };
      if (createHash('sha256').update(verifier).digest('base64url') !== code.challenge)
        return { status: 400, body: { error: 'invalid_grant', error_description: 'Invalid code verifier.' } };
      refreshToken = code.refreshToken;
    } else if (grantType === 'refresh_token') {
      this.tokenCalls.refresh_token++;
      refreshToken = form.get('refresh_token') ?? '';
    } else {
      return { status: 400, body: { error: 'unsupported_grant_type' } };
    }
    const grant = this.grants.get(refreshToken);
    if (!grant || grant.revoked)
      return { status: 400, body: { error: 'invalid_grant', error_description: 'Token has been expired or revoked.' } };
    const accessToken = `ya29.${randomBytes(12).toString('hex')}`;
    this.accessTokens.set(accessToken, { refreshToken, expiresAt: Date.now() + this.accessTokenLifetime * 1000 });
    return {
      status: 200,
      body: {
        access_token: accessToken,
        expires_in: this.accessTokenLifetime,
        token_type: 'Bearer',
        scope: grant.scopes.join(' '),
        ...(grantType === 'authorization_code' ? { refresh_token: refreshToken } : {}),
      },
    };
  }

  private async api(req: http.IncomingMessage, url: URL, raw: string): Promise<FakeResponse> {
    const method = req.method ?? 'GET';
    const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1] ?? '';
    const access = this.accessTokens.get(bearer);
    const grant = access ? this.grants.get(access.refreshToken) : undefined;
    if (!access || !grant || grant.revoked || access.expiresAt < Date.now()) {
      return googleError(401, 'Request had invalid authentication credentials.', 'authError');
    }
    const fault = this.faults.find(
      (f) => f.times > 0 && (!f.method || f.method === method) && (!f.path || f.path.test(url.pathname)),
    );
    if (fault) {
      fault.times--;
      const answer = googleError(
        fault.status,
        `injected ${fault.status}`,
        fault.reason ?? (fault.status === 429 ? 'rateLimitExceeded' : 'backendError'),
      );
      return fault.retryAfter !== undefined
        ? { ...answer, headers: { 'retry-after': String(fault.retryAfter) } }
        : answer;
    }
    for (const route of this.routes) {
      if (route.method !== method) continue;
      const match = route.pattern.exec(url.pathname);
      if (!match) continue;
      this.calls.push(`${method} ${url.pathname}`);
      const body = raw === '' ? undefined : JSON.parse(raw);
      return route.handler({
        method,
        url,
        params: match.slice(1).map(decodeURIComponent),
        body,
        account: grant.account,
        headers: req.headers,
      });
    }
    return googleError(404, `no route ${method} ${url.pathname}`, 'notFound');
  }
}
