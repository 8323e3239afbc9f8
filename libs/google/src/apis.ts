// Each API from its own module: loading all of googleapis takes about a second, one API 0.15 s.
import { gmail_v1 } from 'googleapis/build/src/apis/gmail/index.js';
import { calendar_v3 } from 'googleapis/build/src/apis/calendar/index.js';
import { people_v1 } from 'googleapis/build/src/apis/people/index.js';
import type { OAuth2Client } from 'google-auth-library';
import type { GoogleEndpoints } from './endpoints.js';

export { gmail_v1, calendar_v3, people_v1 };

/**
 * The options every API client gets: the configured root (a proxy or a fake), and no retries of
 * the library's own: `withRetry` retries with jitter, Retry-After and the caller's budget.
 */
function options(auth: OAuth2Client, endpoints: GoogleEndpoints) {
  return { auth, rootUrl: endpoints.apiUrl, retry: false } as const;
}

export function gmailApi(auth: OAuth2Client, endpoints: GoogleEndpoints): gmail_v1.Gmail {
  return new gmail_v1.Gmail(options(auth, endpoints));
}

export function calendarApi(auth: OAuth2Client, endpoints: GoogleEndpoints): calendar_v3.Calendar {
  return new calendar_v3.Calendar(options(auth, endpoints));
}

export function peopleApi(auth: OAuth2Client, endpoints: GoogleEndpoints): people_v1.People {
  return new people_v1.People(options(auth, endpoints));
}
