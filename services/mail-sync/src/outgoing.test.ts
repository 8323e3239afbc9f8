import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AccountsSync, Ingest, MailCancel, MailCompose, MailList, MailOutgoing } from '@memex/contracts';
import { startService } from '@memex/runtime';
import { spawnService, waitUntil } from '@memex/testing';
import { MailSyncModule } from './mail-sync.module.js';
import { fillMailbox, mailSyncHealth, mailSyncReady, startMailSync, type MailSyncHarness } from './testing/harness.js';

const ACCOUNT = 'owner@example.com';

async function stateOf(h: MailSyncHarness, id: string): Promise<string | undefined> {
  const { outgoing } = await h.call(MailOutgoing, { limit: 500, min_seq: await h.bus.lastSeq() });
  return outgoing.find((o) => o.id === id)?.state;
}

async function messageBySubject(h: MailSyncHarness, prefix: string) {
  const { messages } = await h.call(MailList, { view: 'all', limit: 50, min_seq: await h.bus.lastSeq() });
  return messages.find((m) => m.subject.startsWith(prefix))!;
}

test('writing mail: reply and forward built by MailComposer (threading, quoting, an item attached), undo inside the window sends nothing, a draft goes to Gmail drafts, send later survives a restart', async () => {
  const h = await startMailSync();
  try {
    fillMailbox(h.gmail, ACCOUNT, 5);
    const box = h.gmail.mailbox(ACCOUNT);
    await h.connect(ACCOUNT);
    await h.call(AccountsSync, { account: ACCOUNT });
    const original = await messageBySubject(h, 'Message 1 ');
    const gmailOriginal = [...box.messages.values()].find((m) => m.messageId === '<1.m@gen.example>')!;

    const reply = await h.call(MailCompose, {
      account: ACCOUNT,
      mode: 'reply',
      message: original.id,
      text: 'Thanks, agreed.',
      undo_seconds: 1,
    });
    assert.equal(reply.state, 'scheduled');
    await waitUntil(async () => (await stateOf(h, reply.id)) === 'sent', 'the reply to be sent');
    assert.equal(box.sent.length, 1);
    const sent = box.sent[0]!;
    const raw = sent.raw.toString('utf8');
    assert.equal(sent.threadId, gmailOriginal.threadId, 'sent in the original’s Gmail thread');
    assert.match(raw, /^In-Reply-To: <1\.m@gen\.example>/m);
    assert.match(raw, /^References: <1\.m@gen\.example>/m);
    assert.match(raw, /^Subject: Re: Message 1 about/m);
    assert.match(raw, /^To: "?Sender 1"? <sender1@example\.org>/m);
    assert.match(raw, /^Message-ID: <[0-9a-z]{26}\.memex@example\.com>/m);
    assert.match(raw, /^> Hello, message 1\./m);

    const doc = await h.call(Ingest, {
      items: [
        {
          type: 'text/markdown',
          text: '# Trip notes\n\nTrain at 9.',
          source: { kind: 'folder' },
          external_id: 'notes/trip.md',
        },
      ],
    });
    const forward = await h.call(MailCompose, {
      account: ACCOUNT,
      mode: 'forward',
      message: original.id,
      to: ['friend@example.net'],
      text: 'See below.',
      attachments: [doc.results[0]!.id!],
      undo_seconds: 0,
    });
    await waitUntil(async () => (await stateOf(h, forward.id)) === 'sent', 'the forward to be sent');
    const forwarded = box.sent[1]!.raw.toString('utf8');
    assert.match(forwarded, /^Subject: Fwd: Message 1 about/m);
    assert.match(forwarded, /---------- Forwarded message ---------/);
    assert.match(forwarded, /^Content-Disposition: attachment/m);
    assert.ok(
      forwarded.includes(Buffer.from('# Trip notes\n\nTrain at 9.').toString('base64')),
      'the attached item’s bytes are in the message',
    );

    // Undo inside the window: nothing goes.
    const undone = await h.call(MailCompose, {
      account: ACCOUNT,
      to: ['someone@example.net'],
      subject: 'Oops',
      text: 'not this',
      undo_seconds: 3,
    });
    await h.call(MailCancel, { id: undone.id });
    await new Promise((resolve) => setTimeout(resolve, 3500));
    assert.equal(await stateOf(h, undone.id), 'cancelled');
    assert.equal(box.sent.length, 2);
    await assert.rejects(h.call(MailCancel, { id: reply.id }), /too late to undo/);

    // A draft is saved to Gmail drafts.
    const draft = await h.call(MailCompose, {
      account: ACCOUNT,
      to: ['later@example.net'],
      subject: 'Draft',
      text: 'to finish',
      draft: true,
    });
    assert.equal(draft.state, 'draft');
    await waitUntil(async () => box.drafts.size === 1, 'the draft in Gmail');
    assert.match([...box.drafts.values()][0]!.message.raw.toString('utf8'), /^Subject: Draft/m);

    // Send later, across a restart of mail-sync.
    const later = await h.call(MailCompose, {
      account: ACCOUNT,
      to: ['later@example.net'],
      subject: 'Later',
      text: 'scheduled',
      send_at: new Date(Date.now() + 4000).toISOString(),
    });
    await h.mailSync!.close();
    assert.equal(box.sent.length, 2, 'not sent before its time');
    h.mailSync = await startService((config) => MailSyncModule.register(config), h.env.config);
    await waitUntil(
      async () => (await stateOf(h, later.id)) === 'sent',
      'the scheduled mail to be sent after the restart',
    );
    assert.ok(Date.now() >= Date.parse(later.send_at!));
    assert.equal(box.sent.filter((m) => m.messageId === later.message_id).length, 1);

    // Gmail is down for a while: the mail is tried again, and until it goes, health says which and why.
    h.google.fail({ path: /\/messages\/send$/, times: 2, status: 503 });
    const delayed = await h.call(MailCompose, {
      account: ACCOUNT,
      to: ['slow@example.net'],
      subject: 'Delayed',
      text: 'x',
      undo_seconds: 0,
    });
    const problems = async () => (await mailSyncHealth(h)).problems?.join('\n') ?? '';
    await waitUntil(async () => /mail \S+ "Delayed" to slow@example.net not sent/.test(await problems()), 'in health');
    assert.match(
      await problems(),
      new RegExp(`mail ${delayed.id} "Delayed" .* from ${ACCOUNT}: .*503.* \\(\\d tr(y|ies) since `),
    );
    await waitUntil(async () => (await stateOf(h, delayed.id)) === 'sent', 'sent once Gmail answers');
    assert.equal(await problems(), '', 'no problem once it went');
    assert.equal(box.sent.filter((m) => m.messageId === delayed.message_id).length, 1);

    // Gmail refuses a mail for good: it fails with the reason and is not tried again.
    h.google.fail({ path: /\/messages\/send$/, times: 1, status: 400, reason: 'invalidArgument' });
    const refused = await h.call(MailCompose, {
      account: ACCOUNT,
      to: ['x@example.net'],
      subject: 'Refused',
      text: 'x',
      undo_seconds: 0,
    });
    await waitUntil(async () => (await stateOf(h, refused.id)) === 'failed', 'the refused mail to fail');
    const { outgoing: failed } = await h.call(MailOutgoing, { state: 'failed' });
    assert.match(failed[0]!.error ?? '', /Gmail refused it \(400\)/);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    assert.equal(box.sent.filter((m) => m.messageId === refused.message_id).length, 0);
  } finally {
    await h.stop();
  }
});

test('exactly-once send: SIGKILL of mail-sync before Gmail took the mail, and after, then a restart: each mail sent once', async () => {
  const h = await startMailSync({ mailSync: false });
  let child = spawnService(h.env.config, 'mail-sync');
  try {
    const box = h.gmail.mailbox(ACCOUNT);
    await mailSyncReady(h);
    await h.connect(ACCOUNT);
    const crashAt = async (stage: 'before' | 'after', subject: string) => {
      h.gmail.holdSend = stage;
      const held = h.gmail.heldSends;
      const mail = await h.call(MailCompose, {
        account: ACCOUNT,
        to: ['friend@example.net'],
        subject,
        text: stage,
        undo_seconds: 0,
      });
      await waitUntil(async () => h.gmail.heldSends > held, `mail-sync to call messages.send (${stage})`);
      child.kill('SIGKILL');
      await new Promise((resolve) => child.once('exit', resolve));
      h.gmail.holdSend = undefined;
      child = spawnService(h.env.config, 'mail-sync');
      await waitUntil(
        async () => (await stateOf(h, mail.id).catch(() => undefined)) === 'sent',
        `the mail killed ${stage} the send to be sent`,
      );
      return mail;
    };
    const before = await crashAt('before', 'Killed before');
    const after = await crashAt('after', 'Killed after');
    assert.equal(
      box.sent.filter((m) => m.messageId === before.message_id).length,
      1,
      'killed before: sent by the retry, once',
    );
    assert.equal(
      box.sent.filter((m) => m.messageId === after.message_id).length,
      1,
      'killed after: found in Gmail by its Message-ID, not sent again',
    );
    assert.equal(box.sent.length, 2);
  } finally {
    child.kill('SIGKILL');
    await h.stop();
  }
});
