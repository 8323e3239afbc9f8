import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { agentScope, DEFAULT_SCOPE_RULES, MailSpamMarked, Search } from '@memex/contracts';
import { SearchHarness } from './test-support.js';

describe('search: a message found to be spam after it was stored (mail.spam_marked)', () => {
  let h: SearchHarness;
  let pills: string;
  let letter: string;

  before(async () => {
    h = await SearchHarness.start();
    pills = await h.ingest({ title: 'Cheap pills', text: 'Our pharmacy ships cheap pills overnight.', kind: 'email' });
    letter = await h.ingest({
      title: 'Pharmacy hours',
      text: 'The pharmacy on Main Street closes at six.',
      kind: 'email',
    });
    await h.settle();
  });

  after(async () => h?.stop());

  test('an agent finds it before, not after; its other messages stay found', async () => {
    const agent = agentScope('tok', ['mail'], DEFAULT_SCOPE_RULES);
    const found = async () => (await h.call(Search, { q: 'pharmacy' }, agent)).hits.map((hit) => hit.id).sort();
    assert.deepEqual(await found(), [pills, letter].sort());
    await h.publisher.publish(MailSpamMarked, {
      subject: `item:${pills}`,
      actor: { kind: 'import', id: 'test' },
      kind: 'email',
      labels: [],
      spam: true,
      data: { id: pills, reason: 'a copy in folder "Junk"' },
    });
    await h.settle();
    assert.deepEqual(await found(), [letter]);
  });
});
