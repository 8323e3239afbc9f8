/**
 * Credentials in a NATS URL — `nats://<token>@host:port` or `nats://<user>:<password>@host:port`,
 * as the Go client and the nats CLI take them — turned into connect options: nats.js reads
 * none from the URL, so a memex whose NATS has a token (libs/stack writes one at first start)
 * would otherwise be refused.
 */
export interface NatsConnectOptions {
  servers: string;
  token?: string;
  user?: string;
  pass?: string;
}

export function natsConnectOptions(url: string): NatsConnectOptions {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { servers: url }; // host:port without a scheme: nats.js reads it as is
  }
  if (!parsed.username) return { servers: url };
  const user = decodeURIComponent(parsed.username);
  const pass = decodeURIComponent(parsed.password);
  const servers = withoutCredentials(url);
  return parsed.password ? { servers, user, pass } : { servers, token: user };
}

/** The URL without its credentials (for logs and messages). */
export function withoutCredentials(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.username = '';
    parsed.password = '';
    return parsed.toString().replace(/\/$/, '');
  } catch {
    return url;
  }
}
