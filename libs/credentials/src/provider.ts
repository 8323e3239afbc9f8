import { callMethod, NoService, type Bus } from '@memex/bus';
import { HeadCredentialsGet, isMemexError, MemexError } from '@memex/contracts';

/**
 * A secret a service needs to reach something outside the memex: a model endpoint's API key, a
 * mail server's password. Names are `<kind>:<which>`, e.g. `model:openai`, `imap:fastmail`.
 */
export interface Credential {
  name: string;
  secret: string;
  /** When it stops working; null for a configured secret that does not expire. */
  expiresAt: Date | null;
  /** Where it came from: the environment, or the enrolled head (short-lived). */
  source: 'env' | 'head';
}

/** What services ask for credentials; they never read env variables or the head for one themselves. */
export interface CredentialsProvider {
  /** The credential, or a MemexError `not_found` naming where it was looked for. */
  get(name: string): Promise<Credential>;
}

const NAME = /^[a-z0-9][a-z0-9._-]*:[A-Za-z0-9][A-Za-z0-9._@-]*$/;

function checkName(name: string): void {
  if (!NAME.test(name)) {
    throw new MemexError('invalid_params', `credential name "${name}" is not <kind>:<which> (e.g. model:openai)`);
  }
}

/** `model:openai` → `MEMEX_CREDENTIAL_MODEL_OPENAI` (anything not a letter or digit becomes _). */
export function credentialEnvName(name: string): string {
  return `MEMEX_CREDENTIAL_${name.toUpperCase().replace(/[^A-Z0-9]/g, '_')}`;
}

/** Secrets the operator configured as MEMEX_CREDENTIAL_<KIND>_<WHICH> environment variables. */
export class EnvCredentials implements CredentialsProvider {
  constructor(private readonly env: NodeJS.ProcessEnv = process.env) {}

  async get(name: string): Promise<Credential> {
    checkName(name);
    const secret = this.env[credentialEnvName(name)];
    if (!secret) throw new MemexError('not_found', `${credentialEnvName(name)} is not set`);
    return { name, secret, expiresAt: null, source: 'env' };
  }
}

/** Asked again this long before a head credential expires, so a caller never holds a dead one. */
const RENEW_BEFORE_MS = 30_000;

/**
 * Short-lived secrets from the enrolled head (`credentials.get` over the link, through the head
 * service). Kept in this process's memory until shortly before they expire, never written down.
 */
export class HeadLinkCredentials implements CredentialsProvider {
  private readonly held = new Map<string, Credential>();

  constructor(
    private readonly bus: Bus,
    private readonly timeoutMs = 20_000,
  ) {}

  async get(name: string): Promise<Credential> {
    checkName(name);
    const held = this.held.get(name);
    if (held && held.expiresAt && held.expiresAt.getTime() - RENEW_BEFORE_MS > Date.now()) return held;
    this.held.delete(name);
    const answer = await callMethod(this.bus, HeadCredentialsGet, { name }, { timeoutMs: this.timeoutMs }).catch(
      (error: unknown) => {
        // No head service runs at all: no head is attached, so it has none (an enrolled head
        // that is away is the head service answering unavailable, which the caller sees).
        if (error instanceof NoService) throw new MemexError('not_found', 'no head is attached (no head service runs)');
        throw error;
      },
    );
    const credential: Credential = {
      name,
      secret: answer.secret,
      expiresAt: new Date(answer.expires_at_ms),
      source: 'head',
    };
    this.held.set(name, credential);
    return credential;
  }
}

/**
 * The operator's configuration first (an explicit MEMEX_CREDENTIAL_* wins), then the head when
 * one is enrolled. Only `not_found` moves on to the next: a head that is enrolled but away
 * answers `unavailable`, which the caller sees (and retries) rather than a silent fallback.
 */
export class CredentialChain implements CredentialsProvider {
  constructor(private readonly providers: CredentialsProvider[]) {}

  async get(name: string): Promise<Credential> {
    checkName(name);
    const misses: string[] = [];
    for (const provider of this.providers) {
      try {
        return await provider.get(name);
      } catch (error) {
        if (!isMemexError(error) || error.code !== 'not_found') throw error;
        misses.push(error.message);
      }
    }
    throw new MemexError('not_found', `no credential "${name}": ${misses.join('; ')}`);
  }
}

/** What a service uses: its environment, then the head over the bus. */
export function credentialsProvider(bus: Bus, env: NodeJS.ProcessEnv = process.env): CredentialsProvider {
  return new CredentialChain([new EnvCredentials(env), new HeadLinkCredentials(bus)]);
}
