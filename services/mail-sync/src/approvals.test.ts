import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  agentScope,
  AccountsSync,
  DEFAULT_SCOPE_RULES,
  MailApprovalsDecide,
  MailApprovalsList,
  MailCompose,
  MailList,
  MailOutgoing,
  MailPropose,
} from '@memex/contracts';
import { waitUntil } from '@memex/testing';
import { fillMailbox, startMailSync } from './testing/harness.js';

const ACCOUNT = 'owner@example.com';

test('an agent with mail.draft proposes mail and never sends it: the proposal waits for the owner, who approves one and rejects another', async () => {
  process.env.MEMEX_MAIL_UNDO_SECONDS = '1';
  const h = await startMailSync();
  try {
    fillMailbox(h.gmail, ACCOUNT, 3);
    const box = h.gmail.mailbox(ACCOUNT);
    await h.connect(ACCOUNT);
    await h.call(AccountsSync, { account: ACCOUNT });
    const { messages } = await h.call(MailList, { view: 'all', min_seq: await h.bus.lastSeq() });
    const original = messages.find((m) => m.subject.startsWith('Message 1 '))!;

    const reader = agentScope('reader', ['mail'], DEFAULT_SCOPE_RULES);
    const drafter = agentScope('drafter', ['mail', 'mail.draft'], DEFAULT_SCOPE_RULES);
    await assert.rejects(
      h.call(MailPropose, { account: ACCOUNT, to: ['x@example.net'], text: 'hi' }, reader),
      /needs a token labelled mail\.draft/,
    );
    await assert.rejects(
      h.call(MailCompose, { account: ACCOUNT, to: ['x@example.net'], text: 'hi', undo_seconds: 0 }, drafter),
      /owner token/,
    );
    await assert.rejects(h.call(MailApprovalsList, {}, drafter), /owner token/);

    const reply = await h.call(
      MailPropose,
      { account: ACCOUNT, mode: 'reply', message: original.id, text: 'Proposed answer.' },
      drafter,
    );
    const spam = await h.call(
      MailPropose,
      { account: ACCOUNT, to: ['everyone@example.net'], subject: 'Buy now', text: 'no' },
      drafter,
    );
    const pending = await h.call(MailApprovalsList, { min_seq: await h.bus.lastSeq() });
    assert.deepEqual(
      pending.proposals.map((p) => [p.id, p.text, p.proposer]),
      [
        [reply.id, 'Proposed answer.', 'token:drafter'],
        [spam.id, 'no', 'token:drafter'],
      ],
    );
    await new Promise((resolve) => setTimeout(resolve, 1500));
    assert.equal(box.sent.length, 0, 'nothing is sent while it waits');

    const approved = await h.call(MailApprovalsDecide, { id: reply.id, approve: true });
    await h.call(MailApprovalsDecide, { id: spam.id, approve: false });
    await assert.rejects(h.call(MailApprovalsDecide, { id: reply.id, approve: true }), /already approved/);
    await waitUntil(
      async () =>
        (await h.call(MailOutgoing, { state: 'sent', min_seq: await h.bus.lastSeq() })).outgoing.some(
          (o) => o.id === approved.outgoing_id,
        ),
      'the approved mail to be sent',
    );
    assert.equal(box.sent.length, 1);
    assert.match(box.sent[0]!.raw.toString('utf8'), /^Subject: Re: Message 1 about/m);
    const decided = await h.call(MailApprovalsList, { state: 'rejected', min_seq: await h.bus.lastSeq() });
    assert.deepEqual(
      decided.proposals.map((p) => p.id),
      [spam.id],
    );
    assert.deepEqual((await h.call(MailApprovalsList, {})).proposals, []);
  } finally {
    delete process.env.MEMEX_MAIL_UNDO_SECONDS;
    await h.stop();
  }
});
