import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { CodeChallengeMethod, OAuth2Client, type Credentials } from 'google-auth-library';

export type { OAuth2Client };
import type { OAuthClient } from './client-secrets.js';
import type { GoogleEndpoints } from './endpoints.js';
import { httpStatus } from './retry.js';

/**
 * An OAuth client for the user's project at the configured endpoints. With a refresh token it
 * refreshes expired access tokens by itself, and retries a request once after a 401 with a
 * fresh token (forceRefreshOnFailure: an access token can be revoked before its expiry).
 */
export function oauthClient(
  client: OAuthClient,
  endpoints: GoogleEndpoints,
  refreshToken?: string,
  redirectUri?: string,
): OAuth2Client {
  const oauth = new OAuth2Client({
    clientId: client.clientId,
    clientSecret: client.clientSecret,
    ...(redirectUri ? { redirectUri } : {}),
    endpoints: { oauth2TokenUrl: endpoints.tokenUrl, oauth2AuthBaseUrl: endpoints.authUrl },
    forceRefreshOnFailure: true,
  });
  if (refreshToken) oauth.setCredentials({ refresh_token: refreshToken });
  return oauth;
}

/**
 * An OAuth client for a service that never sees refresh tokens: `fetchToken` asks the account
 * owner (mail-sync's accounts token RPC) for a short-lived access token whenever the one held
 * expires or a request answers 401.
 */
export function brokeredAuth(fetchToken: () => Promise<{ access_token: string; expiry_date: number }>): OAuth2Client {
  const oauth = new OAuth2Client({ forceRefreshOnFailure: true });
  oauth.refreshHandler = fetchToken;
  return oauth;
}

/** The user (or Google) withdrew the grant: only a new consent brings the account back. */
export class GrantRevokedError extends Error {
  constructor(
    readonly account: string,
    readonly reason: string,
  ) {
    super(`Google refused the grant of ${account} (${reason}): run \`memex accounts add google\` again`);
  }
}

/** A token endpoint answer that means the refresh token (or the client) no longer works. */
export function grantRefusal(error: unknown): string | undefined {
  const data = (error as { response?: { data?: unknown } } | null)?.response?.data as
    { error?: unknown; error_description?: unknown } | undefined;
  const code = typeof data?.error === 'string' ? data.error : undefined;
  if (code && ['invalid_grant', 'invalid_client', 'unauthorized_client'].includes(code)) {
    return typeof data?.error_description === 'string' ? `${code}: ${data.error_description}` : code;
  }
  return undefined;
}

/** A fresh access token for a refresh token; a refused grant comes back as GrantRevokedError. */
export async function refreshAccessToken(oauth: OAuth2Client, account: string): Promise<Credentials> {
  try {
    const { credentials } = await oauth.refreshAccessToken();
    return credentials;
  } catch (error) {
    const refusal = grantRefusal(error);
    if (refusal) throw new GrantRevokedError(account, refusal);
    throw error;
  }
}

export interface InstalledAppGrant {
  refreshToken: string;
  accessToken: string;
  expiryDate: number | null;
  scopes: string[];
}

export interface InstalledAppOptions {
  client: OAuthClient;
  endpoints: GoogleEndpoints;
  scopes: string[];
  /** Shows the consent URL to the user (printed by the CLI, opened by a test's fake browser). */
  onUrl: (url: string) => void;
  timeoutMs?: number;
}

/**
 * Google's OAuth 2.0 flow for installed apps: a loopback redirect on 127.0.0.1 (an ephemeral
 * port), PKCE (S256) and offline access, so the answer carries a refresh token. Resolves once the
 * browser comes back with a code and the code is exchanged.
 */
export async function authorizeInstalledApp(options: InstalledAppOptions): Promise<InstalledAppGrant> {
  const server = http.createServer();
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  const redirectUri = `http://127.0.0.1:${port}/oauth2callback`;
  const oauth = oauthClient(options.client, options.endpoints, undefined, redirectUri);
  const { codeVerifier, codeChallenge } = await oauth.generateCodeVerifierAsync();
  const state = randomBytes(16).toString('hex');
  try {
    const code = new Promise<string>((resolve, reject) => {
      server.on('request', (req, res) => {
        const url = new URL(req.url ?? '/', redirectUri);
        if (url.pathname !== '/oauth2callback') {
          res.writeHead(404).end();
          return;
        }
        const error = url.searchParams.get('error');
        const given = url.searchParams.get('code');
        const ok = !error && given && url.searchParams.get('state') === state;
        res.writeHead(ok ? 200 : 400, { 'content-type': 'text/plain; charset=utf-8' });
        res.end(
          ok
            ? 'Memex has access now; you can close this tab.'
            : `Memex did not get access: ${error ?? 'the answer did not match the request'}`,
        );
        if (ok) resolve(given);
        else
          reject(new Error(`Google did not grant access: ${error ?? 'state mismatch (an answer to another request)'}`));
      });
      const timeoutMs = options.timeoutMs ?? 5 * 60_000;
      setTimeout(() => reject(new Error(`no answer from the browser within ${timeoutMs / 1000} s`)), timeoutMs).unref();
    });
    options.onUrl(
      oauth.generateAuthUrl({
        access_type: 'offline',
        prompt: 'consent',
        scope: options.scopes,
        state,
        code_challenge_method: CodeChallengeMethod.S256,
        code_challenge: codeChallenge,
      }),
    );
    const { tokens } = await oauth.getToken({ code: await code, codeVerifier, redirect_uri: redirectUri });
    if (!tokens.refresh_token || !tokens.access_token) {
      throw new Error('Google answered without a refresh token (offline access was not granted)');
    }
    return {
      refreshToken: tokens.refresh_token,
      accessToken: tokens.access_token,
      expiryDate: tokens.expiry_date ?? null,
      scopes: (tokens.scope ?? options.scopes.join(' ')).split(' ').filter(Boolean),
    };
  } finally {
    server.close();
    server.closeAllConnections();
  }
}

/** True for an answer saying the access token is not (or no longer) valid. */
export function isUnauthorized(error: unknown): boolean {
  return httpStatus(error) === 401;
}
