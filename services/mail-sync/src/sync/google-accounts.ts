import { Inject, Injectable } from '@nestjs/common';
import { MemexError, type Actor } from '@memex/contracts';
import type { MemexConfig } from '@memex/config';
import {
  gmailApi,
  GOOGLE_SCOPES,
  googleEndpoints,
  grantRefusal,
  GrantRevokedError,
  oauthClient,
  refreshAccessToken,
  TokenStore,
  withRetry,
  type gmail_v1,
  type GoogleEndpoints,
  type GoogleScopeName,
  type OAuth2Client,
  type RetryOptions,
} from '@memex/google';
import { CONFIG } from '@memex/runtime';
import { RequestBudget } from './request-budget.js';

interface Session {
  oauth: OAuth2Client;
  gmail: gmail_v1.Gmail;
  budget: RequestBudget;
  scopes: string[];
}

export function connectorActor(account: string): Actor {
  return { kind: 'connector', id: `gmail:${account}` };
}

/**
 * The Google accounts' secrets and API clients. Only this class reads the token store; other
 * services get short-lived access tokens through memex.accounts.token.
 */
@Injectable()
export class GoogleAccounts {
  readonly endpoints: GoogleEndpoints = googleEndpoints();
  readonly store: TokenStore;
  private readonly sessions = new Map<string, Session>();
  /** Retry waits start at MEMEX_GOOGLE_RETRY_BASE_MS (default 500 ms) and double, with jitter, up to 64 s. */
  readonly retry: Partial<RetryOptions> = process.env.MEMEX_GOOGLE_RETRY_BASE_MS
    ? { baseMs: Number(process.env.MEMEX_GOOGLE_RETRY_BASE_MS) }
    : {};
  /** Quota units a second one account may spend (Gmail allows 250 per user; a read costs 5). */
  private readonly unitsPerSecond = Number(process.env.MEMEX_GMAIL_QUOTA_UNITS_PER_SECOND || 200);

  constructor(@Inject(CONFIG) config: MemexConfig) {
    this.store = new TokenStore(config.home);
  }

  /** The Gmail client of an account (refreshing its access token by itself). */
  gmail(account: string): gmail_v1.Gmail {
    return this.session(account).gmail;
  }

  /**
   * Calls Google for an account within its request budget, retrying rate limits and server
   * errors (unless `once`: a send is retried only after looking it up); a refused grant comes back
   * as GrantRevokedError.
   */
  async call<T>(
    account: string,
    request: (gmail: gmail_v1.Gmail) => Promise<{ data: T }>,
    { units = 5, once = false }: { units?: number; once?: boolean } = {},
  ): Promise<T> {
    const session = this.session(account);
    try {
      return await withRetry(
        async () => {
          await session.budget.take(units);
          return (await request(session.gmail)).data;
        },
        once ? { ...this.retry, attempts: 1 } : this.retry,
      );
    } catch (error) {
      const refusal = grantRefusal(error);
      if (refusal) throw new GrantRevokedError(account, refusal);
      throw error;
    }
  }

  /** A short-lived access token for another service; the scope must be one the account granted. */
  async accessToken(account: string, scope: GoogleScopeName): Promise<{ access_token: string; expiry_date: number }> {
    const session = this.session(account);
    if (!session.scopes.includes(GOOGLE_SCOPES[scope])) {
      throw new MemexError(
        'forbidden',
        `${account} did not grant ${scope} access: run \`memex accounts add google\` again`,
      );
    }
    const held = session.oauth.credentials;
    if (held.access_token && held.expiry_date && held.expiry_date > Date.now() + 60_000) {
      return { access_token: held.access_token, expiry_date: held.expiry_date };
    }
    const credentials = await refreshAccessToken(session.oauth, account);
    session.oauth.setCredentials({ ...credentials, refresh_token: session.oauth.credentials.refresh_token ?? null });
    return { access_token: credentials.access_token!, expiry_date: credentials.expiry_date ?? Date.now() + 3_000_000 };
  }

  /** Forgets the clients of an account (after removal, or a new grant). */
  forget(account: string): void {
    this.sessions.delete(account);
  }

  private session(account: string): Session {
    let session = this.sessions.get(account);
    if (session) return session;
    const grant = this.store.get(account);
    if (!grant)
      throw new MemexError('not_found', `no Google account ${account} (memex accounts list shows the connected ones)`);
    const oauth = oauthClient(grant.client, this.endpoints, grant.refreshToken);
    session = {
      oauth,
      gmail: gmailApi(oauth, this.endpoints),
      budget: new RequestBudget(this.unitsPerSecond),
      scopes: grant.scopes,
    };
    this.sessions.set(account, session);
    return session;
  }
}
