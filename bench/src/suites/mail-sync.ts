import { spawn } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { MemexClient } from '@memex/client';
import { REPO_ROOT } from '@memex/config';
import { AccountsAdd, MailAccounts, MailFlags, MailList, MailThread, OWNER_SCOPE } from '@memex/contracts';
import { Bus, callMethod } from '@memex/bus';
import { createDatabase } from '@memex/db';
import { IngestModule } from '@memex/ingest';
import { startService } from '@memex/runtime';
import { sql } from 'kysely';
import { endpointsEnv, GOOGLE_SCOPES } from '@memex/google';
import { FakeGmail, FakeGoogleServer } from '@memex/google/testing';
import { generateMessages, writeMbox } from '@memex/ingest/testing';
import { freePort } from '@memex/stack';
import { createTestEnv, servicesReady, spawnService, type TestEnv } from '@memex/testing';
import { percentile, type BenchResult } from '../result.js';

const MESSAGES = Number(process.env.MEMEX_BENCH_MAILSYNC_MESSAGES ?? 3_000);
/** How many messages the Needs-reply and Waiting views are measured over. */
const VIEW_MESSAGES = Number(process.env.MEMEX_BENCH_MAILSYNC_VIEW_MESSAGES ?? 50_000);
/** Which parts run: `sync` (first sync and latencies), `views` (the views at scale), or both (the default). */
const PARTS = (process.env.MEMEX_BENCH_MAILSYNC_PARTS ?? 'sync,views').split(',');
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
 * The Needs-reply, Waiting and Inbox views over VIEW_MESSAGES messages in conversations of four
 * (the last one mine in every fourth conversation, theirs in the others), answered by the ingest service as memex.mail.list answers
 * them: the first page's p50/p95 and a page deep into the view. The fixture is written straight
 * into ingest's `messages` read model with one INSERT … generate_series (ingesting 50,000
 * messages would take this machine many minutes; what is measured is reading them).
 */
async function viewsAtScale(): Promise<BenchResult[]> {
  const env = await createTestEnv({ rpcTimeoutMs: 120_000 });
  const ingest = await startService((config) => IngestModule.register(config), env.config);
  const bus = await Bus.connect(env.config.natsUrl, 'bench-mail-views');
  const db = createDatabase<unknown>(env.config.databaseUrl, { schema: 'ingest' });
  try {
    const me = 'me@example.com';
    const t0 = performance.now();
    await sql`insert into messages (item_id, account, origin, thread_key, message_id, subject, "from", "to", cc, date,
        snippet, mail_labels, read, starred, inbox, trashed, attachments, kind, labels, spam, seq)
      select lpad(i::text, 26, '0'), ${`gmail:${me}`}::text, 'mirrored', 'thread-' || (i / 4), '<' || i || '@bench>',
        'Subject ' || (i / 4),
        case when i % 4 = 3 and (i / 4) % 4 = 0 then jsonb_build_array(jsonb_build_object('name', 'Me', 'address', ${me}::text))
             else jsonb_build_array(jsonb_build_object('name', 'Sender', 'address', 'sender' || (i % 97) || '@example.org')) end,
        case when i % 4 = 3 and (i / 4) % 4 = 0 then jsonb_build_array(jsonb_build_object('name', 'Sender', 'address', 'sender' || (i % 97) || '@example.org'))
             else jsonb_build_array(jsonb_build_object('name', 'Me', 'address', ${me}::text)) end,
        '[]'::jsonb, now() - make_interval(mins => ${VIEW_MESSAGES}::int - i), 'snippet', '{}', i % 3 = 0, false, true, false, 0,
        'email', '{}', false, i
      -- a quarter of the conversations end with my message (Waiting), the rest with theirs (Needs reply)
      from generate_series(1, ${VIEW_MESSAGES}::int) i`.execute(db);
    await sql`analyze messages`.execute(db);
    const { rows } = await sql<{ n: number }>`select count(*)::int as n from messages`.execute(db);
    console.log(
      `${rows[0]!.n} messages written into ingest.messages in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
    );
    const results: BenchResult[] = [];
    for (const view of ['needs_reply', 'waiting', 'inbox'] as const) {
      const times: number[] = [];
      let deep = 0;
      for (let i = 0; i < 30; i++) {
        const started = performance.now();
        const page = await callMethod(
          bus,
          MailList,
          { view, limit: 50, waiting_days: 0 },
          { scope: OWNER_SCOPE, timeoutMs: 120_000 },
        );
        times.push(performance.now() - started);
        if (i === 0 && page.messages.length < 50)
          throw new Error(`the ${view} view has only ${page.messages.length} messages`);
      }
      // The tenth page: what a reader scrolling far down waits for.
      let cursor: string | null = null;
      for (let p = 0; p < 10 && (p === 0 || cursor); p++) {
        const started = performance.now();
        const page: { next_cursor: string | null } = await callMethod(
          bus,
          MailList,
          { view, limit: 50, waiting_days: 0, ...(cursor ? { cursor } : {}) },
          { scope: OWNER_SCOPE, timeoutMs: 120_000 },
        );
        deep = performance.now() - started;
        cursor = page.next_cursor;
      }
      const ms = (p: number) => Math.round(percentile(times, p) * 10) / 10;
      console.log(`${view}: first page p50 ${ms(50)} ms, p95 ${ms(95)} ms; tenth page ${deep.toFixed(1)} ms`);
      results.push(
        {
          suite: 'mail-sync',
          name: `the ${view} view over ${VIEW_MESSAGES} messages, first page, p50`,
          value: ms(50),
          unit: 'ms',
        },
        {
          suite: 'mail-sync',
          name: `the ${view} view over ${VIEW_MESSAGES} messages, first page, p95`,
          value: ms(95),
          unit: 'ms',
        },
        {
          suite: 'mail-sync',
          name: `the ${view} view over ${VIEW_MESSAGES} messages, tenth page`,
          value: Math.round(deep * 10) / 10,
          unit: 'ms',
        },
      );
    }
    return results;
  } finally {
    await db.destroy();
    await bus.close();
    await ingest.close();
    await env.stop();
  }
}

export async function run(): Promise<BenchResult[]> {
  return [
    ...(PARTS.includes('views') ? await viewsAtScale() : []),
    ...(PARTS.includes('sync') ? await syncAndLatencies() : []),
  ];
}

/**
 * Gmail's first sync from the HTTP fake (every message fetched raw over HTTP, ingested as the
 * connector) to the mail views, beside `memex import mbox` of the same messages; then how long a
 * star takes from the fake Gmail to the memex's read model and from the memex to the fake.
 */
async function syncAndLatencies(): Promise<BenchResult[]> {
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
