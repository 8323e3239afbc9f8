import fs from 'node:fs';

/** An OAuth client of the user's own Google Cloud project (Desktop app type). */
export interface OAuthClient {
  clientId: string;
  clientSecret: string;
}

/**
 * Reads Google's downloaded `client_secret_….json` (`{"installed": {client_id, client_secret, …}}`;
 * a `web` client is accepted too) and says what is wrong when it is not one.
 */
export function readClientSecrets(file: string): OAuthClient {
  let parsed: unknown;
  try {
    parsed = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (error) {
    throw new Error(`${file}: not a readable JSON client secrets file (${(error as Error).message})`);
  }
  return parseClientSecrets(parsed, file);
}

export function parseClientSecrets(parsed: unknown, name = 'client secrets'): OAuthClient {
  const root = parsed as Record<string, Record<string, unknown> | undefined> | null;
  const section = root?.installed ?? root?.web;
  const clientId = section?.client_id;
  const clientSecret = section?.client_secret;
  if (typeof clientId !== 'string' || clientId === '' || typeof clientSecret !== 'string' || clientSecret === '') {
    throw new Error(
      `${name}: expected Google's client secrets format {"installed": {"client_id": …, "client_secret": …}} (Google Cloud console → APIs & Services → Credentials → OAuth client ID → Desktop app → Download JSON)`,
    );
  }
  return { clientId, clientSecret };
}
