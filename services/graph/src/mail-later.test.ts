import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { EntityGet, MemexError, MentionComplete } from '@memex/contracts';
import { ServiceHost } from '@memex/runtime';
import type { NamedDraft } from '@memex/bus';
import { agent, mailEvent, message, snapshot, startGraph, type GraphHarness } from './testing/harness.js';

/** What a later event says of mail the graph already has. */
describe('graph: mail re-read later', () => {
  let h: GraphHarness;
  before(async () => {
    h = await startGraph();
  });
  after(async () => h?.stop());

  test('a reply chain whose middle message arrives last is one conversation, live and after a replay', async () => {
    // a ← b ← c ← d, c's and d's References trimmed by their mailer (c names b, d names b and c):
    // alone, each says its thread is its first reference (services/ingest's threadKey), b.
    const mail = async (name: string, refs: string[]): Promise<NamedDraft> => {
      const draft = await mailEvent(
        h.blobs,
        message({
          From: 'Ann <ann@lists.example>',
          To: 'Owner <owner@home.example>',
          Subject: refs.length === 0 ? 'Patch series' : 'Re: Patch series',
          'Message-ID': `<${name}@lists.example>`,
          ...(refs.length > 0 ? { References: refs.map((r) => `<${r}@lists.example>`).join(' ') } : {}),
          Date: `Tue, 3 Mar 2026 1${'abcd'.indexOf(name)}:00:00 +0000`,
        }),
      );
      const data = draft.data as { meta: { threadKey: string } };
      data.meta.threadKey = `${refs[0] ?? name}@lists.example`;
      return draft;
    };
    const [a, b, c, d] = [
      await mail('a', []),
      await mail('b', ['a']),
      await mail('c', ['b']),
      await mail('d', ['b', 'c']),
    ];
    const series = async () =>
      (await h.call(MentionComplete, { prefix: 'patch series', kinds: ['thread'] })).items.map((i) => [
        i.key,
        i.detail,
      ]);
    await h.publish([a, c]);
    assert.equal((await series()).length, 2);
    // b arrives last: ingest joins the halves, the oldest thread's key surviving.
    const bId = (b.data as { id: string }).id;
    const joined: NamedDraft = {
      type: 'thread.joined',
      subject: `item:${bId}`,
      actor: { kind: 'import', id: 'test' },
      labels: [],
      kind: 'email',
      data: { key: 'a@lists.example', merged: ['b@lists.example'], id: bId },
    };
    await h.publish([b, joined]);
    assert.deepEqual(await series(), [['thread:a@lists.example', '3 messages, last 2026-03-03']]);
    // A later reply carrying the merged key (b) is in the joined thread too.
    await h.publish([d]);
    assert.deepEqual(await series(), [['thread:a@lists.example', '4 messages, last 2026-03-03']]);

    const live = await snapshot(h.env.config.databaseUrl);
    await h.app.get(ServiceHost).projector!.rebuild(h.env.config.databaseUrl);
    assert.deepEqual(await snapshot(h.env.config.databaseUrl), live);
    assert.deepEqual(await series(), [['thread:a@lists.example', '4 messages, last 2026-03-03']]);
  });

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
