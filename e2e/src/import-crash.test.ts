import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { MailAccounts, MailList } from '@memex/contracts';
import { MemexClient } from '@memex/client';
import { REPO_ROOT } from '@memex/config';
import { ensureOwnerToken, startGateway } from '@memex/gateway';
import { generateMessages, writeMbox } from '@memex/ingest/testing';
import { Bus, readLog } from '@memex/bus';
import { createTestEnv, servicesReady, spawnService, waitUntil, type TestEnv } from '@memex/testing';

const MESSAGES = 10_000;
const cli = path.join(REPO_ROOT, 'cli', 'bin', 'memex.js');

let env: TestEnv;
let gateway: Awaited<ReturnType<typeof startGateway>>;
let url: string;
let token: string;
let mbox: string;
before(async () => {
  // A request caught by the kill fails within seconds instead of the default 30.
  env = await createTestEnv({ services: ['gateway', 'ingest'], rpcTimeoutMs: 15_000 });
  gateway = await startGateway(env.config);
  const address = gateway.getHttpServer().address();
  url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  token = ensureOwnerToken(env.config.home);
  mbox = path.join(env.home, 'archive.mbox');
  await writeMbox(mbox, generateMessages({ messages: MESSAGES, seed: 7 }));
});
after(async () => {
  await gateway.close();
  await env.stop();
});

function startIngest(): ChildProcess {
  return spawnService(env.config, 'ingest');
}

/** `memex import mbox` as a user runs it; resolves with its exit code and its JSON summary. */
function importMbox(retries: number): {
  child: ChildProcess;
  done: Promise<{ code: number | null; summary: Record<string, unknown> }>;
} {
  const child = spawn(
    process.execPath,
    [cli, 'import', 'mbox', mbox, '--source', 'archive', '--json', '--retries', String(retries)],
    {
      env: { ...process.env, MEMEX_URL: url, MEMEX_TOKEN: token, MEMEX_HOME: env.home },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let out = '';
  let err = '';
  child.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (err += chunk.toString()));
  const done = new Promise<{ code: number | null; summary: Record<string, unknown> }>((resolve, reject) =>
    child.once('exit', (code) => {
      try {
        resolve({ code, summary: JSON.parse(out) as Record<string, unknown> });
      } catch {
        reject(new Error(`memex import printed no summary (exit ${code}): ${out}\n${err}`));
      }
    }),
  );
  return { child, done };
}

async function query<T>(sql: string): Promise<T[]> {
  const client = new pg.Client({ connectionString: env.config.databaseUrl });
  await client.connect();
  try {
    return (await client.query(sql)).rows as T[];
  } catch {
    return []; // the schema is not there yet
  } finally {
    await client.end();
  }
}

/** Messages the server has answered for so far, from the import's own progress file. */
function importedSoFar(): number {
  try {
    const state = JSON.parse(readFileSync(path.join(env.home, 'imports', 'mbox-archive.json'), 'utf8')) as {
      totals: { created: number };
    };
    return state.totals.created;
  } catch {
    return 0; // not written yet
  }
}

test(`SIGKILL of the ingest service in the middle of importing ${MESSAGES} messages, then a rerun: each exactly once`, async () => {
  let service = startIngest();
  try {
    await servicesReady(url, ['ingest']);
    const first = importMbox(0);
    let exited = false;
    void first.done.finally(() => (exited = true)).catch(() => undefined);
    await waitUntil(
      async () => {
        if (exited) throw new Error(`the import ended before the kill: ${JSON.stringify((await first.done).summary)}`);
        return importedSoFar() >= MESSAGES / 4;
      },
      'a quarter of the import',
      { timeoutMs: 300_000 },
    );
    service.kill('SIGKILL');
    await new Promise((resolve) => service.once('exit', resolve));
    const interrupted = await first.done;
    assert.equal(interrupted.code, 1, 'the import reports that it stopped');
    assert.ok(typeof interrupted.summary['error'] === 'string');

    service = startIngest();
    await servicesReady(url, ['ingest']);
    const rerun = await importMbox(5).done;
    assert.equal(rerun.code, 0, JSON.stringify(rerun.summary));
    const all = rerun.summary['all_runs'] as Record<string, number>;
    assert.equal(all['rejected'], 0);

    // Exactly one item per message, each published once, and the mail views agree.
    const client = new MemexClient({ url, token });
    const bus = await Bus.connect(env.config.natsUrl, 'crash-check');
    const published = new Map<string, number>();
    let lastSeq: number;
    try {
      lastSeq = await bus.lastSeq();
      for await (const { event } of readLog(bus, { filter: 'memex.evt.item.ingested.>', untilCaughtUp: true })) {
        const data = event.data as { id: string; kind: string };
        if (data.kind === 'email') published.set(data.id, (published.get(data.id) ?? 0) + 1);
      }
    } finally {
      await bus.close();
    }
    assert.equal(published.size, MESSAGES);
    assert.deepEqual([...new Set(published.values())], [1]);
    const { accounts } = await client.call(MailAccounts, { min_seq: lastSeq });
    assert.deepEqual(
      accounts.map((a) => [a.account, a.messages]),
      [['import:mbox:archive', MESSAGES]],
    );
    const rows = await query<{ item_id: string; message_id: string }>(
      'select item_id, message_id from ingest.messages',
    );
    assert.equal(rows.length, MESSAGES);
    assert.equal(new Set(rows.map((r) => r.message_id)).size, MESSAGES, 'no Message-ID twice');
    const listed = new Set<string>();
    let cursor: string | undefined;
    do {
      const page = await client.call(MailList, { view: 'all', limit: 500, ...(cursor ? { cursor } : {}) });
      page.messages.forEach((m) => listed.add(m.id));
      cursor = page.next_cursor ?? undefined;
    } while (cursor);
    assert.deepEqual([...listed].sort(), [...published.keys()].sort());
  } finally {
    service.kill('SIGTERM');
    await new Promise((resolve) => service.once('exit', resolve));
  }
});
