import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sql, type Kysely } from 'kysely';
import {
  AccountsList,
  AccountsRemove,
  AccountsSync,
  AccountsToken,
  Ingest,
  MailAccounts,
  MailFlags,
  MailList,
  type MailSummary,
} from '@memex/contracts';
import type { Static } from '@sinclair/typebox';
import { DATABASE } from '@memex/runtime';
import { TokenStore } from '@memex/google';
import {
  fillMailbox,
  generatedMessage,
  mailSyncHealth,
  startMailSync,
  type MailSyncHarness,
} from './testing/harness.js';
import type { MailSyncDatabase } from './projection/schema.js';

const ACCOUNT = 'owner@example.com';

async function allMail(h: MailSyncHarness, account = `gmail:${ACCOUNT}`): Promise<Static<typeof MailSummary>[]> {
  const messages: Static<typeof MailSummary>[] = [];
  let cursor: string | undefined;
  const seq = await h.bus.lastSeq();
  do {
    const page = await h.call(MailList, {
      view: 'all',
      account,
      limit: 500,
      ...(cursor ? { cursor } : {}),
      min_seq: seq,
    });
    messages.push(...page.messages);
    cursor = page.next_cursor ?? undefined;
  } while (cursor);
  return messages;
}

async function syncNow(h: MailSyncHarness): Promise<void> {
  await h.call(AccountsSync, { account: ACCOUNT });
}

function mailSyncDb(h: MailSyncHarness): Kysely<MailSyncDatabase> {
  return h.mailSync!.get(DATABASE) as Kysely<MailSyncDatabase>;
}

test('Gmail two-way: first sync of 2,000 messages through a 429 storm, imported mail upgraded in place, incremental both ways without echo, expired history, 401, revoked grant, removal', async () => {
  const h = await startMailSync();
  try {
    fillMailbox(h.gmail, ACCOUNT, 2000);
    const box = h.gmail.mailbox(ACCOUNT);
    // 30 of the messages were imported from an mbox before the account was connected.
    const imported = await h.call(Ingest, {
      items: Array.from({ length: 30 }, (_, i) => ({
        type: 'message/rfc822',
        data: generatedMessage(i * 50, 'm', ACCOUNT).toString('base64'),
        source: { kind: 'mbox', id: 'old-archive' },
      })),
    });
    const importedIds = imported.results.map((r) => r.id!);
    assert.equal(new Set(importedIds).size, 30);

    h.google.fail({ path: /\/messages\/[0-9a-f]+$/, times: 25, status: 429, retryAfter: 0 });
    h.google.fail({ path: /\/messages$/, times: 3, status: 503 });
    assert.equal(await h.connect(ACCOUNT), ACCOUNT);
    await syncNow(h);

    let mail = await allMail(h);
    assert.equal(mail.length, 2000, 'every Gmail message is in the mail views once');
    assert.ok(mail.every((m) => m.account === `gmail:${ACCOUNT}`));
    const byId = new Map(mail.map((m) => [m.id, m]));
    for (const id of importedIds)
      assert.ok(byId.has(id), `imported message ${id} kept its id and is now the Gmail account's`);
    const accounts = await h.call(MailAccounts, { min_seq: await h.bus.lastSeq() });
    assert.deepEqual(
      accounts.accounts.map((a) => [a.account, a.origin, a.messages]),
      [[`gmail:${ACCOUNT}`, 'mirrored', 2000]],
    );
    const subjectOf = (n: number) => `Message ${n} about`;
    const find = (n: number) => mail.find((m) => m.subject.startsWith(subjectOf(n) + ' '))!;
    assert.equal(find(10).read, true, 'no UNREAD label: read');
    assert.equal(find(11).read, false);
    assert.equal(find(14).starred, true);
    const listed = await h.call(AccountsList, { min_seq: await h.bus.lastSeq() });
    assert.equal(listed.accounts[0]!.sync.phase, 'incremental');
    assert.equal(listed.accounts[0]!.sync.messages, 2000);

    // Gmail → memex: a new message, a deletion, a star, a label.
    const gmailIdOf = async (itemId: string) =>
      (
        await mailSyncDb(h)
          .selectFrom('gmail_messages')
          .select('gmail_id')
          .where('item_id', '=', itemId)
          .executeTakeFirstOrThrow()
      ).gmail_id;
    box.add(generatedMessage(5000, 'new', ACCOUNT), { labelIds: ['INBOX', 'UNREAD'] });
    box.delete(await gmailIdOf(find(20).id));
    box.modify(await gmailIdOf(find(21).id), ['STARRED', box.labelId('Receipts')], ['UNREAD', 'INBOX']);
    await syncNow(h);
    mail = await allMail(h);
    assert.equal(mail.length, 2000);
    assert.ok(
      mail.some((m) => m.subject.startsWith('Message 5000 ')),
      'the new message came in',
    );
    assert.equal(
      mail.some((m) => m.subject.startsWith(subjectOf(20) + ' ')),
      false,
      'the deleted message is gone',
    );
    const relabelled = find(21);
    assert.deepEqual(
      [relabelled.starred, relabelled.read, relabelled.inbox, relabelled.labels],
      [true, true, false, ['Receipts']],
    );

    // memex → Gmail: star, read, a new label, archive, trash; nothing echoes back.
    const target = find(30);
    const trashed = find(31);
    await h.call(MailFlags, { ids: [target.id], starred: true, read: true, add_labels: ['Projects'], archived: true });
    await h.call(MailFlags, { ids: [trashed.id], trashed: true });
    await syncNow(h);
    const inGmail = box.messages.get(await gmailIdOf(target.id))!;
    assert.deepEqual([...inGmail.labelIds].sort(), ['STARRED', box.labelId('Projects')].sort());
    assert.ok(box.messages.get(await gmailIdOf(trashed.id))!.labelIds.has('TRASH'));
    // The mirrors read directly below hold everything logged so far.
    await h.call(AccountsList, { min_seq: await h.bus.lastSeq() });
    const modifyCalls = h.google.calls.filter((c) => /modify|trash/.test(c)).length;
    const before = await mailSyncDb(h)
      .selectFrom('gmail_messages')
      .select(sql<number>`max(seq)::int`.as('seq'))
      .executeTakeFirstOrThrow();
    await syncNow(h);
    await syncNow(h);
    await h.call(AccountsList, { min_seq: await h.bus.lastSeq() });
    const after = await mailSyncDb(h)
      .selectFrom('gmail_messages')
      .select(sql<number>`max(seq)::int`.as('seq'))
      .executeTakeFirstOrThrow();
    assert.equal(after.seq, before.seq, 'Gmail’s record of our own change does not come back as a change');
    assert.equal(
      h.google.calls.filter((c) => /modify|trash/.test(c)).length,
      modifyCalls,
      'and nothing is written to Gmail twice',
    );
    mail = await allMail(h);
    assert.deepEqual(
      [find(30).starred, find(30).read, find(30).inbox, find(30).labels],
      [true, true, false, ['Projects']],
    );

    // Both sides change one starred message between two syncs: in Gmail it is unstarred, starred
    // again and labelled; in the memex unstarred. The memex's change to the star is written last
    // and wins; Gmail's label stays.
    const both = find(42);
    assert.equal(both.starred, true);
    box.modify(await gmailIdOf(both.id), [], ['STARRED']);
    box.modify(await gmailIdOf(both.id), ['STARRED', box.labelId('Family')], []);
    await h.call(MailFlags, { ids: [both.id], starred: false });
    await syncNow(h);
    await syncNow(h);
    mail = await allMail(h);
    assert.deepEqual([find(42).starred, find(42).labels], [false, ['Family']]);
    assert.equal(box.messages.get(await gmailIdOf(both.id))!.labelIds.has('STARRED'), false);

    // Expired history: a full resync that changes only what differs.
    box.modify(await gmailIdOf(find(50).id), ['STARRED'], []);
    box.expireHistory();
    await h.call(AccountsList, { min_seq: await h.bus.lastSeq() });
    const resyncFrom = (
      await mailSyncDb(h)
        .selectFrom('gmail_messages')
        .select(sql<number>`max(seq)::int`.as('seq'))
        .executeTakeFirstOrThrow()
    ).seq;
    const ingestsBefore = h.google.calls.filter((c) => c.startsWith('GET') && /\/messages\/[0-9a-f]+$/.test(c)).length;
    await syncNow(h);
    await h.call(AccountsList, { min_seq: await h.bus.lastSeq() });
    const changed = await mailSyncDb(h)
      .selectFrom('gmail_messages')
      .select('gmail_id')
      .where('seq', '>', resyncFrom)
      .execute();
    assert.deepEqual(
      changed.map((c) => c.gmail_id),
      [await gmailIdOf(find(50).id)],
      'only the message that differs was logged',
    );
    assert.ok(
      h.google.calls.filter((c) => c.startsWith('GET') && /\/messages\/[0-9a-f]+$/.test(c)).length > ingestsBefore,
    );
    mail = await allMail(h);
    assert.equal(mail.length, 1999, 'all but the one trashed (the trash view has it)');
    assert.equal(find(50).starred, true);

    // Gmail failing past the retries: the account's sync fails, in health and the accounts list (not
    // only in a log line) until a cycle succeeds.
    h.google.fail({ path: /\/history$/, times: 9, status: 500 });
    await syncNow(h);
    assert.match((await h.call(AccountsList, {})).accounts[0]!.sync.failing?.reason ?? '', /500/);
    assert.match(
      (await mailSyncHealth(h)).problems?.join('\n') ?? '',
      new RegExp(`^the mail sync of ${ACCOUNT} fails since \\S+: .*500.* \\(tried again every`),
    );
    await syncNow(h);
    assert.equal((await h.call(AccountsList, {})).accounts[0]!.sync.failing, null);
    assert.equal((await mailSyncHealth(h)).problems, undefined, 'healthy again once a cycle succeeds');

    // A 401 (access token revoked early) refreshes and carries on.
    const refreshes = h.google.tokenCalls.refresh_token;
    h.google.expireAccessTokens();
    box.add(generatedMessage(5001, 'new', ACCOUNT));
    await syncNow(h);
    assert.equal(h.google.tokenCalls.refresh_token, refreshes + 1);
    assert.equal((await allMail(h)).length, 2000);
    assert.ok((await h.call(AccountsToken, { account: ACCOUNT, scope: 'calendar' })).access_token.startsWith('ya29.'));

    // A revoked grant: the account needs a new consent and its sync stops cleanly.
    h.google.revoke(ACCOUNT);
    h.google.expireAccessTokens();
    box.add(generatedMessage(5002, 'new', ACCOUNT));
    await syncNow(h);
    const revoked = (await h.call(AccountsList, { min_seq: await h.bus.lastSeq() })).accounts[0]!;
    assert.equal(revoked.status, 'needs_reauth');
    assert.match(revoked.reason ?? '', /invalid_grant/);
    await assert.rejects(h.call(AccountsSync, { account: ACCOUNT }), /no active account/);
    await assert.rejects(h.call(AccountsToken, { account: ACCOUNT, scope: 'calendar' }), /needs_reauth/);
    assert.deepEqual(
      (await mailSyncHealth(h)).problems,
      [
        `Google account ${ACCOUNT} needs a new consent (invalid_grant: Token has been expired or revoked.): memex accounts add google`,
      ],
      'the revoked grant is in the service’s health (and so in /healthz and memex status)',
    );
    assert.equal((await allMail(h)).length, 2000, 'nothing synced after the grant was refused');

    // Removal erases the stored grant; the mail stays.
    const store = new TokenStore(h.env.config.home);
    assert.ok(store.get(ACCOUNT));
    const { seq } = await h.call(AccountsRemove, { account: ACCOUNT });
    assert.equal(store.get(ACCOUNT), undefined);
    assert.deepEqual((await h.call(AccountsList, { min_seq: seq })).accounts, []);
    assert.equal((await mailSyncHealth(h)).problems, undefined);
    assert.equal((await allMail(h)).length, 2000);
  } finally {
    await h.stop();
  }
});
