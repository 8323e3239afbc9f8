import type { INestApplicationContext } from '@nestjs/common';
import {
  AccountsAdd,
  OWNER_SCOPE,
  type MethodDefinition,
  type ParamsOf,
  type ResultOf,
  type Scope,
} from '@memex/contracts';
import { Bus, callMethod, callRpc } from '@memex/bus';
import { endpointsEnv, GOOGLE_SCOPES } from '@memex/google';
import { FakeGmail, FakeGoogleServer } from '@memex/google/testing';
import { IngestModule } from '@memex/ingest';
import { SearchModule } from '@memex/search';
import { startService, type ServiceHealth } from '@memex/runtime';
import { createTestEnv, seededRandom, waitUntil, type TestEnv } from '@memex/testing';
import { MailSyncModule } from '../mail-sync.module.js';

/** A fake Google, ingest, (with `search: true`) search, and (unless `mailSync: false`) mail-sync in this process on a fresh TestEnv. */
export interface MailSyncHarness {
  env: TestEnv;
  bus: Bus;
  google: FakeGoogleServer;
  gmail: FakeGmail;
  ingest: INestApplicationContext;
  search: INestApplicationContext | undefined;
  /** Replaceable: a test restarts mail-sync by closing it and starting another. */
  mailSync: INestApplicationContext | undefined;
  call<M extends MethodDefinition>(method: M, params: ParamsOf<M>, scope?: Scope): Promise<ResultOf<M>>;
  /** Connects `account` with a refresh token the fake issued (the headless way in). */
  connect(account: string): Promise<string>;
  stop(): Promise<void>;
}

/**
 * Environment for mail-sync processes: the fake's endpoints, a quick poll, no quota wait (the
 * fake has none) and short retry waits.
 */
export function mailSyncEnv(google: FakeGoogleServer, pollMs: number): Record<string, string> {
  return {
    ...endpointsEnv(google.endpoints),
    MEMEX_GMAIL_POLL_MS: String(pollMs),
    MEMEX_GMAIL_QUOTA_UNITS_PER_SECOND: '1000000',
    MEMEX_GOOGLE_RETRY_BASE_MS: '5',
  };
}

export async function startMailSync(
  options: { pollMs?: number; mailSync?: boolean; search?: boolean } = {},
): Promise<MailSyncHarness> {
  const google = await new FakeGoogleServer().start();
  const gmail = new FakeGmail(google);
  Object.assign(process.env, mailSyncEnv(google, options.pollMs ?? 3_600_000));
  // A busy machine (2 cores shared by everyone) can keep a read model more than 10 s behind.
  const env = await createTestEnv({ minSeqTimeoutMs: 120_000 });
  const ingest = await startService((config) => IngestModule.register(config), env.config);
  const search = options.search ? await startService((config) => SearchModule.register(config), env.config) : undefined;
  const mailSync =
    options.mailSync === false
      ? undefined
      : await startService((config) => MailSyncModule.register(config), env.config);
  const bus = await Bus.connect(env.config.natsUrl, 'mail-sync-test');
  const call: MailSyncHarness['call'] = (method, params, scope = OWNER_SCOPE) =>
    callMethod(bus, method, params, { scope, timeoutMs: 300_000 });
  const harness: MailSyncHarness = {
    env,
    bus,
    google,
    gmail,
    ingest,
    search,
    mailSync,
    call,
    async connect(account) {
      const refreshToken = google.issueRefreshToken(account, Object.values(GOOGLE_SCOPES));
      const { account: connected } = await call(AccountsAdd, {
        provider: 'google',
        client_id: google.clientId,
        client_secret: google.clientSecret,
        refresh_token: refreshToken,
      });
      return connected;
    },
    async stop() {
      await bus.close();
      await harness.mailSync?.close();
      await search?.close();
      await ingest.close();
      await env.stop();
      await google.stop();
    },
  };
  return harness;
}

const WORDS = [
  'budget',
  'meeting',
  'draft',
  'review',
  'garden',
  'invoice',
  'travel',
  'paper',
  'release',
  'lunch',
  'report',
  'schedule',
];

/** A generated message (RFC 822, CRLF): Message-ID `<n.tag@gen.example>`, dated `n` minutes after 2020-01-01. */
export function generatedMessage(n: number, tag = 'm', to = 'owner@example.com'): Buffer {
  const random = seededRandom(n + 1);
  const words = Array.from({ length: 40 }, () => WORDS[Math.floor(random() * WORDS.length)]).join(' ');
  const date = new Date(Date.UTC(2020, 0, 1) + n * 60_000);
  return Buffer.from(
    [
      `Message-ID: <${n}.${tag}@gen.example>`,
      `Date: ${date.toUTCString().replace('GMT', '+0000')}`,
      `From: Sender ${n % 37} <sender${n % 37}@example.org>`,
      `To: ${to}`,
      `Subject: Message ${n} about ${WORDS[n % WORDS.length]}`,
      'MIME-Version: 1.0',
      'Content-Type: text/plain; charset=utf-8',
      '',
      `Hello, message ${n}. ${words}`,
      '',
    ].join('\r\n'),
  );
}

/** Fills a fake mailbox with `count` generated messages (internalDate = their Date; every 5th read, every 7th starred). */
export function fillMailbox(gmail: FakeGmail, account: string, count: number, tag = 'm'): void {
  const box = gmail.mailbox(account);
  for (let n = 0; n < count; n++) {
    const labelIds = ['INBOX', ...(n % 5 === 0 ? [] : ['UNREAD']), ...(n % 7 === 0 ? ['STARRED'] : [])];
    box.add(generatedMessage(n, tag, account), { labelIds, internalDate: Date.UTC(2020, 0, 1) + n * 60_000 });
  }
}

/** The health of mail-sync (its problems: a revoked grant). */
export function mailSyncHealth(h: MailSyncHarness): Promise<ServiceHealth> {
  return callRpc<ServiceHealth>(
    h.bus,
    'memex.rpc.mail-sync.health',
    { method: 'health', params: {}, scope: OWNER_SCOPE, caller: { kind: 'user', id: 'owner' } },
    10_000,
  );
}

/** Resolves once a mail-sync (a process just spawned) says it is ready: migrated and projecting. */
export async function mailSyncReady(h: MailSyncHarness): Promise<void> {
  await waitUntil(
    async () => (await mailSyncHealth(h).catch(() => undefined))?.ready === true,
    'mail-sync to be ready',
  );
}
