import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import pg from 'pg';
import { MailAccounts, MailList } from '@memex/contracts';
import { MemexClient } from '@memex/client';
import { ensureOwnerToken, startGateway } from '@memex/gateway';
import { generateMessages, writeMbox } from '@memex/ingest/testing';
import { createTestEnv, servicesReady, spawnService, waitUntil, type TestEnv } from '@memex/testing';
import { importedSoFar, importMbox, publishedEmails, type ImportTarget } from './mbox-import.js';

const MESSAGES = 10_000;

let env: TestEnv;
let gateway: Awaited<ReturnType<typeof startGateway>>;
let url: string;
let token: string;
let target: ImportTarget;
before(async () => {
  // A request caught by the kill fails within seconds instead of the default 30.
  env = await createTestEnv({ services: ['gateway', 'ingest'], rpcTimeoutMs: 15_000 });
  gateway = await startGateway(env.config);
  const address = gateway.getHttpServer().address();
  url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  token = ensureOwnerToken(env.config.home);
  target = { url, token, home: env.home, mbox: path.join(env.home, 'archive.mbox') };
  await writeMbox(target.mbox, generateMessages({ messages: MESSAGES, seed: 7 }));
});
after(async () => {
  await gateway.close();
  await env.stop();
});

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

test(`SIGKILL of the ingest service in the middle of importing ${MESSAGES} messages, then a rerun: each exactly once`, async () => {
  let service = spawnService(env.config, 'ingest');
  try {
    await servicesReady(url, ['ingest']);
    const first = importMbox(target, 0);
    let exited = false;
    void first.done.finally(() => (exited = true)).catch(() => undefined);
    await waitUntil(
      async () => {
        if (exited) throw new Error(`the import ended before the kill: ${JSON.stringify((await first.done).summary)}`);
        return importedSoFar(env.home) >= MESSAGES / 4;
      },
      'a quarter of the import',
      { timeoutMs: 300_000 },
    );
    service.kill('SIGKILL');
    await new Promise((resolve) => service.once('exit', resolve));
    const interrupted = await first.done;
    assert.equal(interrupted.code, 1, 'the import reports that it stopped');
    assert.ok(typeof interrupted.summary['error'] === 'string');

    service = spawnService(env.config, 'ingest');
    await servicesReady(url, ['ingest']);
    const rerun = await importMbox(target, 5).done;
    assert.equal(rerun.code, 0, JSON.stringify(rerun.summary));
    const all = rerun.summary['all_runs'] as Record<string, number>;
    assert.equal(all['rejected'], 0);

    // Exactly one item per message, each published once, and the mail views agree.
    const client = new MemexClient({ url, token });
    const { published, lastSeq } = await publishedEmails(env.config.natsUrl);
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
