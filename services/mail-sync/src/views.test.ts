import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AccountsSync, MailCompose, MailList, MailOutgoing } from '@memex/contracts';
import { waitUntil } from '@memex/testing';
import { fillMailbox, startMailSync, type MailSyncHarness } from './testing/harness.js';

const ACCOUNT = 'owner@example.com';

async function view(h: MailSyncHarness, params: Omit<Parameters<typeof h.call<typeof MailList>>[1], 'min_seq'>) {
  return (await h.call(MailList, { ...params, min_seq: await h.bus.lastSeq() })).messages.map(
    (m) => m.subject.split(' about')[0],
  );
}

test('views: Needs reply (the last message is to me, from someone else), Waiting (I wrote last), Sent, Scheduled and Drafts', async () => {
  const h = await startMailSync();
  try {
    fillMailbox(h.gmail, ACCOUNT, 3);
    await h.connect(ACCOUNT);
    await h.call(AccountsSync, { account: ACCOUNT });
    assert.deepEqual(await view(h, { view: 'needs_reply' }), ['Message 2', 'Message 1', 'Message 0']);
    assert.deepEqual(await view(h, { view: 'waiting', waiting_days: 0 }), []);

    const { messages } = await h.call(MailList, { view: 'all', min_seq: await h.bus.lastSeq() });
    const reply = await h.call(MailCompose, {
      account: ACCOUNT,
      mode: 'reply',
      message: messages.find((m) => m.subject.startsWith('Message 1 '))!.id,
      text: 'On it.',
      undo_seconds: 0,
    });
    const later = await h.call(MailCompose, {
      account: ACCOUNT,
      to: ['x@example.net'],
      subject: 'Later',
      text: 'x',
      send_at: new Date(Date.now() + 3_600_000).toISOString(),
    });
    await h.call(MailCompose, {
      account: ACCOUNT,
      to: ['x@example.net'],
      subject: 'Unfinished',
      text: 'x',
      draft: true,
    });
    await waitUntil(
      async () => (await h.call(MailOutgoing, { state: 'sent', min_seq: await h.bus.lastSeq() })).outgoing.length === 1,
      'the reply sent',
    );
    await h.call(AccountsSync, { account: ACCOUNT });

    assert.deepEqual(
      await view(h, { view: 'needs_reply' }),
      ['Message 2', 'Message 0'],
      'answered: no longer needs a reply',
    );
    assert.deepEqual(await view(h, { view: 'waiting', waiting_days: 0 }), ['Re: Message 1']);
    assert.deepEqual(await view(h, { view: 'waiting', waiting_days: 3 }), [], 'not waiting yet after 3 days');
    assert.deepEqual(await view(h, { view: 'label', label: 'SENT' }), ['Re: Message 1']);
    assert.deepEqual(
      (await h.call(MailOutgoing, { state: 'scheduled' })).outgoing.map((o) => o.id),
      [later.id],
    );
    assert.deepEqual(
      (await h.call(MailOutgoing, { state: 'draft' })).outgoing.map((o) => o.subject),
      ['Unfinished'],
    );
    assert.deepEqual(
      (await h.call(MailOutgoing, { state: 'sent' })).outgoing.map((o) => o.id),
      [reply.id],
    );
  } finally {
    await h.stop();
  }
});
