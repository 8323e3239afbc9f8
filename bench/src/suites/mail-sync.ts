import { spawn } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { MemexClient } from '@memex/client';
import { REPO_ROOT } from '@memex/config';
import { AccountsAdd, MailAccounts, MailFlags, MailList, MailThread } from '@memex/contracts';
import { endpointsEnv, GOOGLE_SCOPES } from '@memex/google';
import { FakeGmail, FakeGoogleServer } from '@memex/google/testing';
import { generateMessages, writeMbox } from '@memex/ingest/testing';
import { freePort } from '@memex/stack';
import { createTestEnv, servicesReady, spawnService, type TestEnv } from '@memex/testing';
import { percentile, type BenchResult } from '../result.js';

const MESSAGES = Number(process.env.MEMEX_BENCH_MAILSYNC_MESSAGES ?? 3_000);
const CHANGES = Number(process.env.MEMEX_BENCH_MAILSYNC_CHANGES ?? 20);
/** How often mail-sync polls Gmail in this run (the default is 60 s): the Gmail → memex latency is bounded below by it. */
const POLL_MS = 250;
const SEED = 7;
const ACCOUNT = 'bench@example.com';

interface Stack {
  env: TestEnv;
  client: MemexClient;
  token: string;
  url: string;
  processes: ChildProcess[];
}

async function startStack(services: string[]): Promise<Stack> {
  const env = await createTestEnv({
    port: await freePort(),
    services: ['gateway', ...services],
    rpcTimeoutMs: 120_000,
  });
  const processes = ['gateway', ...services].map((service) => spawnService(env.config, service));
  const url = `http://127.0.0.1:${env.config.port}`;
  await servicesReady(url, services);
  const token = fs.readFileSync(path.join(env.home, 'owner-token'), 'utf8').trim();
  return { env, client: new MemexClient({ url, token }), token, url, processes };
}

async function stopStack(stack: Stack): Promise<void> {
  for (const child of stack.processes) child.kill('SIGTERM');
  await Promise.all(stack.processes.map((child) => (child.exitCode === null ? once(child, 'exit') : undefined)));
  await stack.env.stop();
}

async function until(what: string, condition: () => Promise<boolean>, timeoutMs = 600_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function accountMessages(client: MemexClient, account: string): Promise<number> {
  const { accounts } = await client.call(MailAccounts, {});
  return accounts.find((a) => a.account === account)?.messages ?? 0;
}

/** The same messages through `memex import mbox`, in a stack of their own, to the mail views. */
async function importRate(mbox: string): Promise<number> {
  const stack = await startStack(['ingest']);
  try {
    const started = performance.now();
    const cli = spawn(
      process.execPath,
      [path.join(REPO_ROOT, 'cli', 'bin', 'memex.js'), 'import', 'mbox', mbox, '--source', 'bench', '--json'],
      {
        env: { ...process.env, MEMEX_URL: stack.url, MEMEX_TOKEN: stack.token, MEMEX_HOME: stack.env.home },
        stdio: ['ignore', 'ignore', 'inherit'],
      },
    );
    const [code] = (await once(cli, 'exit')) as [number];
    if (code !== 0) throw new Error(`memex import mbox exited with ${code}`);
    await until(
      'the imported mail in the views',
      async () => (await accountMessages(stack.client, 'import:mbox:bench')) >= MESSAGES,
    );
    return MESSAGES / ((performance.now() - started) / 1000);
  } finally {
    await stopStack(stack);
  }
}

/**
 * Gmail's first sync from the HTTP fake (every message fetched raw over HTTP, ingested as the
 * connector) to the mail views, beside `memex import mbox` of the same messages; then how long a
 * star takes from the fake Gmail to the memex's read model and from the memex to the fake.
 */
export async function run(): Promise<BenchResult[]> {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'memex-bench-mailsync-'));
  const google = await new FakeGoogleServer().start();
  const gmail = new FakeGmail(google);
  Object.assign(process.env, endpointsEnv(google.endpoints), {
    MEMEX_GMAIL_POLL_MS: String(POLL_MS),
    MEMEX_GMAIL_QUOTA_UNITS_PER_SECOND: '1000000',
  });
  let stack: Stack | undefined;
  try {
    const box = gmail.mailbox(ACCOUNT);
    for (const message of generateMessages({ messages: MESSAGES, seed: SEED })) {
      box.add(message.bytes, { internalDate: message.date.getTime(), labelIds: ['INBOX'] });
    }
    const mbox = path.join(work, 'same.mbox');
    const bytes = await writeMbox(mbox, generateMessages({ messages: MESSAGES, seed: SEED }));
    console.log(`${MESSAGES} messages (${(bytes / 1e6).toFixed(1)} MB) in the fake Gmail and in an mbox`);
    const imported = await importRate(mbox);

    stack = await startStack(['ingest', 'mail-sync']);
    const refreshToken = google.issueRefreshToken(ACCOUNT, Object.values(GOOGLE_SCOPES));
    const started = performance.now();
    await stack.client.call(AccountsAdd, {
      provider: 'google',
      client_id: google.clientId,
      client_secret: google.clientSecret,
      refresh_token: refreshToken,
    });
    await until(
      'the first sync in the views',
      async () => (await accountMessages(stack!.client, `gmail:${ACCOUNT}`)) >= MESSAGES,
    );
    const synced = MESSAGES / ((performance.now() - started) / 1000);
    console.log(`first sync ${synced.toFixed(0)} messages/s; import ${imported.toFixed(0)} messages/s`);

    const { messages } = await stack.client.call(MailList, { view: 'all', limit: CHANGES * 2 });
    const bare = (id: string | null | undefined) => (id ?? '').replace(/^<|>$/g, '');
    const inGmail = new Map([...box.messages.values()].map((m) => [bare(m.messageId), m]));
    const gmailMessageOf = async (id: string) => {
      const { messages: thread } = await stack!.client.call(MailThread, { id });
      return inGmail.get(bare(thread.find((m) => m.id === id)?.message_id))!;
    };
    const gmailToMemex: number[] = [];
    const memexToGmail: number[] = [];
    for (let i = 0; i < CHANGES; i++) {
      // Gmail → memex: a star in the fake, until the memex's mail views list the message starred.
      const starred = messages[i]!;
      const starredInGmail = await gmailMessageOf(starred.id);
      let t0 = performance.now();
      box.modify(starredInGmail.id, ['STARRED'], []);
      await until('a Gmail star in the memex', async () =>
        (await stack!.client.call(MailList, { view: 'starred', limit: 500 })).messages.some((m) => m.id === starred.id),
      );
      gmailToMemex.push(performance.now() - t0);
      // memex → Gmail: a star in the memex, until the fake has the label.
      const other = messages[CHANGES + i]!;
      const otherInGmail = await gmailMessageOf(other.id);
      t0 = performance.now();
      await stack.client.call(MailFlags, { ids: [other.id], starred: true });
      await until('a memex star in Gmail', async () => otherInGmail.labelIds.has('STARRED'));
      memexToGmail.push(performance.now() - t0);
    }
    const ms = (values: number[], p: number) => Math.round(percentile(values, p));
    return [
      {
        suite: 'mail-sync',
        name: `first sync from the Gmail fake to the mail views (${MESSAGES} messages)`,
        value: Math.round(synced),
        unit: 'messages/s',
        reference: { name: 'memex import mbox of the same messages', value: Math.round(imported) },
      },
      {
        suite: 'mail-sync',
        name: `a change in Gmail to the memex read model, p50 (poll every ${POLL_MS} ms)`,
        value: ms(gmailToMemex, 50),
        unit: 'ms',
      },
      {
        suite: 'mail-sync',
        name: `a change in Gmail to the memex read model, p95 (poll every ${POLL_MS} ms)`,
        value: ms(gmailToMemex, 95),
        unit: 'ms',
      },
      {
        suite: 'mail-sync',
        name: `a change in the memex to Gmail, p50 (poll every ${POLL_MS} ms)`,
        value: ms(memexToGmail, 50),
        unit: 'ms',
      },
      {
        suite: 'mail-sync',
        name: `a change in the memex to Gmail, p95 (poll every ${POLL_MS} ms)`,
        value: ms(memexToGmail, 95),
        unit: 'ms',
      },
    ];
  } finally {
    if (stack) await stopStack(stack);
    await google.stop();
    fs.rmSync(work, { recursive: true, force: true });
  }
}
