import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { AccountsList, MailAccounts } from '@memex/contracts';
import { createDatabase } from '@memex/db';
import { spawnService, waitUntil } from '@memex/testing';
import { fillMailbox, mailSyncReady, startMailSync } from './testing/harness.js';

const ACCOUNT = 'owner@example.com';
const MESSAGES = 1000;

test('SIGKILL of mail-sync in the middle of a first sync of 1,000 messages, then a restart: every Gmail message is in the memex exactly once', async () => {
  const h = await startMailSync({ mailSync: false, pollMs: 100 });
  const db = createDatabase<Record<string, never>>(h.env.config.databaseUrl, { schema: 'public' });
  let child = spawnService(h.env.config, 'mail-sync');
  try {
    fillMailbox(h.gmail, ACCOUNT, MESSAGES);
    await mailSyncReady(h);
    await h.connect(ACCOUNT);
    const synced = async () => (await h.call(AccountsList, { min_seq: await h.bus.lastSeq() })).accounts[0]?.sync;
    await waitUntil(async () => ((await synced())?.messages ?? 0) >= 200, 'a few pages synced', { everyMs: 20 });
    child.kill('SIGKILL');
    await new Promise((resolve) => child.once('exit', resolve));
    const atKill = await sql<{ n: number }>`select count(*)::int as n from mail_sync.gmail_messages`.execute(db);
    assert.ok(atKill.rows[0]!.n < MESSAGES, `killed in the middle (${atKill.rows[0]!.n} of ${MESSAGES} mirrored)`);

    child = spawnService(h.env.config, 'mail-sync');
    await waitUntil(
      async () => (await synced().catch(() => undefined))?.phase === 'incremental',
      'the first sync to finish after the restart',
    );
    // The mail views have applied everything logged (the rows below are read directly).
    const accounts = await h.call(MailAccounts, { min_seq: await h.bus.lastSeq() });
    assert.deepEqual(
      accounts.accounts.map((a) => [a.account, a.messages]),
      [[`gmail:${ACCOUNT}`, MESSAGES]],
    );
    const items = await sql<{ n: number; distinct_ids: number }>`
      select count(*)::int as n, count(distinct external_id)::int as distinct_ids
      from ingest.items where source_kind = 'gmail' and parent_id is null`.execute(db);
    assert.deepEqual(items.rows[0], { n: MESSAGES, distinct_ids: MESSAGES }, 'one item per Gmail message');
    const mirrors = await sql<{ n: number; distinct_items: number }>`
      select count(*)::int as n, count(distinct item_id)::int as distinct_items from mail_sync.gmail_messages`.execute(
      db,
    );
    assert.deepEqual(mirrors.rows[0], { n: MESSAGES, distinct_items: MESSAGES });
  } finally {
    child.kill('SIGKILL');
    await db.destroy();
    await h.stop();
  }
});
