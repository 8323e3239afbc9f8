import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { EntityGet, MemexError, MentionComplete } from '@memex/contracts';
import { ServiceHost } from '@memex/runtime';
import { agent, mailEvent, message, snapshot, startGraph, type GraphHarness } from './testing/harness.js';

/** What a later event says of mail the graph already has. */
describe('graph: mail re-read later', () => {
  let h: GraphHarness;
  before(async () => {
    h = await startGraph();
  });
  after(async () => h?.stop());

  test('a message marked spam after it was stored is not reached by an agent through the graph', async () => {
    const raw = (n: number) =>
      message({
        From: `Quentin Spammer <quentin${n}@offers.example>`,
        To: 'Owner <owner@home.example>',
        Subject: `Quarterly offer ${n}`,
        'Message-ID': `<offer-${n}@offers.example>`,
        Date: 'Mon, 2 Mar 2026 10:00:00 +0000',
      });
    const marked = await mailEvent(h.blobs, raw(1));
    const kept = await mailEvent(h.blobs, raw(2));
    await h.publish([marked, kept]);
    const mailAgent = agent(['mail']);
    const offers = async () =>
      (await h.call(MentionComplete, { prefix: 'quarterly', kinds: ['thread'] }, mailAgent)).items.map((i) => i.name);
    assert.deepEqual((await offers()).sort(), ['Quarterly offer 1', 'Quarterly offer 2']);
    assert.equal(
      (await h.call(EntityGet, { key: 'person:quentin1@offers.example' }, mailAgent)).entity.name,
      'Quentin Spammer',
    );

    const id = (marked.data as { id: string }).id;
    const before = await snapshot(h.env.config.databaseUrl);
    await h.publish([
      {
        type: 'mail.spam_marked',
        subject: `item:${id}`,
        actor: { kind: 'import', id: 'test' },
        labels: [],
        kind: 'email',
        spam: true,
        data: { id, reason: 'a copy in folder "Junk"' },
      },
    ]);
    assert.deepEqual(await offers(), ['Quarterly offer 2']);
    await assert.rejects(
      h.call(EntityGet, { key: 'person:quentin1@offers.example' }, mailAgent),
      (e: MemexError) => e.code === 'not_found',
    );
    assert.equal(
      (await h.call(EntityGet, { key: 'person:quentin2@offers.example' }, mailAgent)).entity.name,
      'Quentin Spammer',
    );
    const after = await snapshot(h.env.config.databaseUrl);
    assert.notDeepEqual(after.items, before.items);

    // A replay builds the same rows.
    await h.app.get(ServiceHost).projector!.rebuild(h.env.config.databaseUrl);
    assert.deepEqual(await snapshot(h.env.config.databaseUrl), after);
  });
});
