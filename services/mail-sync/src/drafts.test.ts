import { test } from 'node:test';
import assert from 'node:assert/strict';
import MailComposer from 'nodemailer/lib/mail-composer/index.js';
import { simpleParser } from 'mailparser';
import {
  AccountsSync,
  Ingest,
  MailCompose,
  MailDraftDelete,
  MailDraftUpdate,
  MailList,
  MailOutgoing,
} from '@memex/contracts';
import { waitUntil } from '@memex/testing';
import { startMailSync, type MailSyncHarness } from './testing/harness.js';

const ACCOUNT = 'owner@example.com';

async function outgoing(h: MailSyncHarness, id: string) {
  const { outgoing } = await h.call(MailOutgoing, { limit: 500, min_seq: await h.bus.lastSeq() });
  return outgoing.find((o) => o.id === id);
}

test('drafts: edited and deleted in the memex, the Gmail draft follows; a forward carries the original’s attachments and memex items; a reply quotes the text only', async () => {
  const h = await startMailSync();
  try {
    const box = h.gmail.mailbox(ACCOUNT);
    const original = await new MailComposer({
      from: 'Ann Lee <ann@example.org>',
      to: ACCOUNT,
      subject: 'Contract',
      messageId: '<contract@example.org>',
      date: new Date('2024-05-01T09:00:00Z'),
      text: 'The signed contract is attached.\n> as you asked',
      attachments: [
        { filename: 'contract.pdf', content: Buffer.from('%PDF-1.4 signed'), contentType: 'application/pdf' },
      ],
    })
      .compile()
      .build();
    box.add(original, { labelIds: ['INBOX'], internalDate: Date.parse('2024-05-01T09:00:00Z') });
    await h.connect(ACCOUNT);
    await h.call(AccountsSync, { account: ACCOUNT });
    const { messages } = await h.call(MailList, { view: 'all', min_seq: await h.bus.lastSeq() });
    const contract = messages.find((m) => m.subject === 'Contract')!;
    const notes = await h.call(Ingest, {
      items: [
        { type: 'text/plain', text: 'Notes for the lawyer.', source: { kind: 'folder' }, external_id: 'notes.txt' },
      ],
    });

    const notesId = notes.results[0]!.id!;
    const forward = await h.call(MailCompose, {
      account: ACCOUNT,
      mode: 'forward',
      message: contract.id,
      to: ['lawyer@example.net'],
      text: 'For your review.',
      attachments: [notesId],
      undo_seconds: 0,
    });
    await waitUntil(async () => (await outgoing(h, forward.id))?.state === 'sent', 'the forward to be sent');
    const forwarded = await simpleParser(box.sent[0]!.raw);
    assert.equal(forwarded.subject, 'Fwd: Contract');
    assert.deepEqual(
      forwarded.attachments.map((a) => [a.filename, a.content.toString('utf8')]),
      [
        ['contract.pdf', '%PDF-1.4 signed'],
        [notesId, 'Notes for the lawyer.'],
      ],
      'the original’s attachment, then the memex item (named by its id: it has no file name)',
    );
    assert.match(
      forwarded.text!,
      /For your review\.\n\n---------- Forwarded message ---------\nFrom: "Ann Lee" <ann@example\.org>/,
    );

    // A draft reply: quoted text, no attachment; then edited, then deleted.
    const draft = await h.call(MailCompose, {
      account: ACCOUNT,
      mode: 'reply',
      message: contract.id,
      text: 'Thanks',
      draft: true,
    });
    await waitUntil(async () => box.drafts.size === 1, 'the draft in Gmail');
    const gmailDraftId = [...box.drafts.keys()][0]!;
    const first = await simpleParser([...box.drafts.values()][0]!.message.raw);
    assert.match(
      first.text!,
      /^Thanks\n\nOn Wed, 01 May 2024 09:00:00 GMT, "Ann Lee" <ann@example\.org> wrote:\n> The signed contract is attached\.\n> > as you asked/,
    );
    assert.equal(first.attachments.length, 0, 'a reply does not carry the attachments');

    await h.call(MailDraftUpdate, {
      id: draft.id,
      text: 'Thanks, signed copy back tomorrow.',
      cc: ['boss@example.net'],
      attachments: [notesId],
    });
    await waitUntil(
      async () => box.drafts.get(gmailDraftId)?.message.raw.toString('utf8').includes('boss@example.net') === true,
      'the Gmail draft updated',
    );
    assert.equal(box.drafts.size, 1, 'the same Gmail draft, updated');
    const edited = await simpleParser(box.drafts.get(gmailDraftId)!.message.raw);
    assert.equal(edited.text!.trim(), 'Thanks, signed copy back tomorrow.');
    assert.equal(edited.subject, 'Re: Contract');
    assert.equal(edited.inReplyTo, '<contract@example.org>', 'threading kept');
    assert.equal(edited.messageId, first.messageId, 'its Message-ID kept');
    assert.deepEqual(
      edited.attachments.map((a) => a.filename),
      [notesId],
    );
    const row = await outgoing(h, draft.id);
    assert.deepEqual([row?.state, row?.to], ['draft', ['"Ann Lee" <ann@example.org>', 'boss@example.net']]);

    await h.call(MailDraftDelete, { id: draft.id });
    await waitUntil(async () => box.drafts.size === 0, 'the Gmail draft deleted');
    assert.equal((await outgoing(h, draft.id))?.state, 'deleted');
    await assert.rejects(h.call(MailDraftUpdate, { id: draft.id, text: 'x' }), /is deleted, not a draft/);
    await assert.rejects(h.call(MailDraftDelete, { id: forward.id }), /is sent, not a draft/);
    assert.equal(box.sent.length, 1, 'nothing else was sent');
  } finally {
    await h.stop();
  }
});
