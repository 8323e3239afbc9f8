import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AccountsSync, MailList, MailOutgoing, RulesAdd, RulesList, RulesRemove, RulesTest } from '@memex/contracts';
import { ULID_PATTERN } from '@memex/contracts';
import { waitUntil } from '@memex/testing';
import { derivedId } from './domain/ids.js';
import { fillMailbox, generatedMessage, startMailSync, type MailSyncHarness } from './testing/harness.js';

const ACCOUNT = 'owner@example.com';

async function message(h: MailSyncHarness, n: number) {
  const { messages } = await h.call(MailList, { view: 'all', limit: 500, min_seq: await h.bus.lastSeq() });
  return messages.find((m) => m.subject.startsWith(`Message ${n} `))!;
}

test('rules: a dry run through search shows what a rule would do to existing mail; new mail gets each matching rule once, in order, in the memex and in Gmail', async () => {
  const h = await startMailSync({ search: true });
  try {
    fillMailbox(h.gmail, ACCOUNT, 20);
    const box = h.gmail.mailbox(ACCOUNT);
    await h.connect(ACCOUNT);
    await h.call(AccountsSync, { account: ACCOUNT });

    const vendors = { query: 'from:sender3@', actions: { add_labels: ['Vendors'], archive: true } };
    const dry = await h.call(RulesTest, vendors);
    assert.deepEqual(
      dry.matches.map((m) => [m.subject.split(' about')[0], m.would_change]),
      [['Message 3', ['label +Vendors', 'archive']]],
    );
    assert.equal(dry.scanned, 1, 'search found the candidates');
    assert.equal((await message(h, 3)).inbox, true, 'a dry run changes nothing');
    const invoices = await h.call(RulesTest, { query: '"about invoice" from:sender17@' });
    assert.deepEqual(
      invoices.matches.map((m) => m.subject),
      ['Message 17 about invoice'],
      'a phrase and a filter as search reads them',
    );

    await h.call(RulesAdd, { ...vendors, name: 'vendors' });
    await h.call(RulesAdd, {
      query: '"about invoice" -"about garden"',
      actions: { star: true, forward_to: 'books@example.net' },
      name: 'invoices',
    });
    const temporary = await h.call(RulesAdd, { query: 'label:never', actions: { star: true } });
    await h.call(RulesRemove, { id: temporary.id });

    // New mail: 40 is from sender3 (about garden), 41 from sender4 about invoice.
    box.add(generatedMessage(40, 'm', ACCOUNT));
    box.add(generatedMessage(41, 'm', ACCOUNT));
    await h.call(AccountsSync, { account: ACCOUNT });
    await h.call(AccountsSync, { account: ACCOUNT });
    const m40 = await message(h, 40);
    const m41 = await message(h, 41);
    assert.deepEqual([m40.labels, m40.inbox, m40.starred], [['Vendors'], false, false]);
    assert.deepEqual([m41.labels, m41.inbox, m41.starred], [[], true, true]);
    assert.equal((await message(h, 3)).inbox, true, 'rules act on new mail only');
    const inGmail = [...box.messages.values()].find((m) => m.messageId === '<40.m@gen.example>')!;
    assert.deepEqual(
      [...inGmail.labelIds].sort(),
      [box.labelId('Vendors'), 'UNREAD'].sort(),
      'the rule’s changes reached Gmail',
    );
    await waitUntil(async () => box.sent.length === 1, 'the forward');
    assert.match(box.sent[0]!.raw.toString('utf8'), /^Subject: Fwd: Message 41 about invoice/m);

    // More cycles act on nothing again.
    box.add(generatedMessage(42, 'm', ACCOUNT));
    await h.call(AccountsSync, { account: ACCOUNT });
    await h.call(AccountsSync, { account: ACCOUNT });
    const { rules } = await h.call(RulesList, { min_seq: await h.bus.lastSeq() });
    assert.deepEqual(
      rules.map((r) => [r.name, r.applied]),
      [
        ['vendors', 1],
        ['invoices', 1],
      ],
    );
    assert.equal((await h.call(MailOutgoing, {})).outgoing.length, 1);
    assert.equal(box.sent.length, 1);
  } finally {
    await h.stop();
  }
});

test('a derived id is a valid ULID, the same for the same parts and different for others', () => {
  const id = derivedId('rule-forward', 'R1', 'I1');
  assert.match(id, new RegExp(ULID_PATTERN));
  assert.equal(derivedId('rule-forward', 'R1', 'I1'), id);
  assert.notEqual(derivedId('rule-forward', 'R1', 'I2'), id);
});
