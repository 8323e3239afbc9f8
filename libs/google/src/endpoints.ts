/**
 * Where Google is. Each is configuration so an operator's proxy or a test's fake stands in
 * without code changes (issue 14).
 */
export interface GoogleEndpoints {
  /** Root of the REST APIs (googleapis' `rootUrl`), with a trailing slash. */
  apiUrl: string;
  /** The OAuth 2.0 token endpoint (code exchange and refresh). */
  tokenUrl: string;
  /** Where the user's browser is sent to grant access. */
  authUrl: string;
}

export const GOOGLE_API_URL = 'https://www.googleapis.com/';
export const GOOGLE_TOKEN_URL = 'https://oauth2.googleapis.com/token';
export const GOOGLE_AUTH_URL = 'https://accounts.google.com/o/oauth2/v2/auth';

/** MEMEX_GOOGLE_API_URL, MEMEX_GOOGLE_OAUTH_URL (token endpoint), MEMEX_GOOGLE_AUTH_URL; Google's by default. */
export function googleEndpoints(env: NodeJS.ProcessEnv = process.env): GoogleEndpoints {
  const apiUrl = env.MEMEX_GOOGLE_API_URL || GOOGLE_API_URL;
  return {
    apiUrl: apiUrl.endsWith('/') ? apiUrl : `${apiUrl}/`,
    tokenUrl: env.MEMEX_GOOGLE_OAUTH_URL || GOOGLE_TOKEN_URL,
    authUrl: env.MEMEX_GOOGLE_AUTH_URL || GOOGLE_AUTH_URL,
  };
}

/** The environment under which `googleEndpoints` gives back `endpoints` (to start a process with them). */
export function endpointsEnv(endpoints: GoogleEndpoints): Record<string, string> {
  return {
    MEMEX_GOOGLE_API_URL: endpoints.apiUrl,
    MEMEX_GOOGLE_OAUTH_URL: endpoints.tokenUrl,
    MEMEX_GOOGLE_AUTH_URL: endpoints.authUrl,
  };
}

/**
 * What one `memex accounts add google` grants: mail (read, label, send, drafts), calendar and
 * contacts, so calendar-sync needs no second consent.
 */
export const GOOGLE_SCOPES = {
  mail: 'https://www.googleapis.com/auth/gmail.modify',
  calendar: 'https://www.googleapis.com/auth/calendar',
  contacts: 'https://www.googleapis.com/auth/contacts',
} as const;
export type GoogleScopeName = keyof typeof GOOGLE_SCOPES;
export const ALL_GOOGLE_SCOPES = Object.values(GOOGLE_SCOPES);
