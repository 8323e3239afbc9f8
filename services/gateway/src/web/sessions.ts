import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { MemexError } from '@memex/contracts';
import { AuthService, type Principal } from '../auth/auth.service.js';

export const SESSION_COOKIE = 'memex_session';
export const CSRF_HEADER = 'x-memex-csrf';
/** A browser session ends after this long without a request. */
const IDLE_MS = 12 * 60 * 60 * 1000;

interface Session {
  /** The bearer token signed in with: checked again on every request, so a revoked token ends it. */
  token: string;
  csrf: string;
  lastSeen: number;
}

/**
 * Browser sessions: the web UI signs in with a token once and then holds only an opaque,
 * HttpOnly, SameSite=Strict cookie. Sessions live in this gateway process (a restart signs
 * browsers out); the table is keyed by the cookie's SHA-256, so a heap dump holds no cookie.
 * A cookie-borne POST must also carry the session's CSRF token in a header, which a page on
 * another site can neither read nor set.
 */
@Injectable()
export class Sessions {
  private readonly byCookieHash = new Map<string, Session>();

  constructor(@Inject(AuthService) private readonly auth: AuthService) {}

  /** Checks the token and opens a session: the cookie value and the CSRF token. */
  async open(token: string): Promise<{ cookie: string; csrf: string; principal: Principal }> {
    const principal = await this.auth.authenticate(`Bearer ${token}`);
    const cookie = randomBytes(32).toString('base64url');
    const csrf = randomBytes(24).toString('base64url');
    this.sweep();
    this.byCookieHash.set(hash(cookie), { token, csrf, lastSeen: Date.now() });
    return { cookie, csrf, principal };
  }

  close(request: FastifyRequest): void {
    const cookie = sessionCookie(request);
    if (cookie) this.byCookieHash.delete(hash(cookie));
  }

  /** The session behind the request's cookie, if it is live. */
  find(request: FastifyRequest): Session | undefined {
    const cookie = sessionCookie(request);
    const session = cookie ? this.byCookieHash.get(hash(cookie)) : undefined;
    if (!session) return undefined;
    if (Date.now() - session.lastSeen > IDLE_MS) {
      this.byCookieHash.delete(hash(cookie!));
      return undefined;
    }
    session.lastSeen = Date.now();
    return session;
  }

  /**
   * The caller of an API request: a bearer token when the request has one (CLI, agents),
   * else the browser session; a session's state-changing request must carry its CSRF token.
   */
  async authenticate(request: FastifyRequest): Promise<Principal> {
    if (request.headers.authorization !== undefined || !sessionCookie(request)) {
      return this.auth.authenticate(request.headers.authorization);
    }
    const session = this.find(request);
    if (!session) throw new MemexError('unauthorized', 'the browser session has ended: sign in again');
    if (request.method !== 'GET' && !sameSecret(request.headers[CSRF_HEADER], session.csrf)) {
      throw new MemexError('forbidden', `a browser session's ${request.method} needs the ${CSRF_HEADER} header`);
    }
    return this.auth.authenticate(`Bearer ${session.token}`);
  }

  private sweep(): void {
    const now = Date.now();
    for (const [key, session] of this.byCookieHash) if (now - session.lastSeen > IDLE_MS) this.byCookieHash.delete(key);
  }
}

function hash(cookie: string): string {
  return createHash('sha256').update(cookie).digest('hex');
}

function sameSecret(given: string | string[] | undefined, expected: string): boolean {
  if (typeof given !== 'string' || given.length !== expected.length) return false;
  return timingSafeEqual(Buffer.from(given), Buffer.from(expected));
}

/** The session cookie's value from the Cookie header (no cookie library needed for one name). */
export function sessionCookie(request: FastifyRequest): string | undefined {
  for (const pair of (request.headers.cookie ?? '').split(';')) {
    const [name, ...value] = pair.trim().split('=');
    if (name === SESSION_COOKIE) return value.join('=') || undefined;
  }
  return undefined;
}

/** Set-Cookie for a session (no Max-Age: it ends with the browser), or to clear it. */
export function sessionSetCookie(value: string | null, secure: boolean): string {
  const attributes = ['Path=/api', 'HttpOnly', 'SameSite=Strict', ...(secure ? ['Secure'] : [])];
  if (value === null) return [`${SESSION_COOKIE}=`, 'Max-Age=0', ...attributes].join('; ');
  return [`${SESSION_COOKIE}=${value}`, ...attributes].join('; ');
}
