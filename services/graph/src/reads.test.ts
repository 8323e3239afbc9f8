import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ContextBrief, EntityGet, MemexError, Timeline, type ResultOf } from '@memex/contracts';
import { mailEvent, message, startGraph, type GraphHarness } from './testing/harness.js';

const idOf = (draft: { data: unknown }) => (draft.data as { id: string }).id;

/**
 * Reads that must not lie (issue 11): paging that neither skips nor repeats items sharing a
 * time, briefs that use their text and never call an undated item recent, and one person behind
 * a mailing list's rewritten From.
 */
describe('graph reads: paging, briefs, undated items, list gateways', () => {
  let h: GraphHarness;
  /** 45 messages from Ann at 5 times, 9 sharing each. */
  const burst: string[] = [];
  let pyramid = '';
  let undated = '';

  before(async () => {
    h = await startGraph();
    const drafts = [];
    for (let i = 0; i < 45; i++) {
      const date = new Date(Date.UTC(2024, 0, 10 + Math.floor(i / 9), 9)).toUTCString();
      const draft = await mailEvent(
        h.blobs,
        message({ From: 'Ann Lee <ann@acme.example>', To: 'me@home.example', Subject: `Standup ${i}`, Date: date }),
      );
      burst.push(idOf(draft));
      drafts.push(draft);
    }
    const older = await mailEvent(
      h.blobs,
      message({
        From: 'Raj Patel <raj@acme.example>',
        To: 'me@home.example',
        Subject: 'Pyramid launch plan',
        Date: 'Mon, 04 Dec 2023 10:00:00 +0000',
      }),
    );
    pyramid = idOf(older);
    const noDate = await mailEvent(
      h.blobs,
      message({ From: 'Old Friend <friend@oldmail.example>', To: 'me@home.example', Subject: 'Long ago' }),
      { undated: true },
    );
    undated = idOf(noDate);
    const list = [
      message({
        From: '"Zed Shaw via Dev" <dev@lists.example.org>',
        'Reply-To': 'Zed Shaw <zed@zedshaw.example>',
        'List-Id': 'Developers <dev.lists.example.org>',
        To: 'dev@lists.example.org',
        Subject: 'Release notes',
        Date: 'Tue, 05 Dec 2023 10:00:00 +0000',
      }),
      message({
        From: 'Zed Shaw <zed-Ab3dE9xQ@public.gmane.org>',
        'Reply-To': 'zed@zedshaw.example',
        To: 'dev-list@public.gmane.org',
        Subject: 'Re: Release notes',
        Date: 'Wed, 06 Dec 2023 10:00:00 +0000',
      }),
      message({
        From: 'Zed Shaw <zed@zedshaw.example>',
        To: 'me@home.example',
        Subject: 'Direct question',
        Date: 'Thu, 07 Dec 2023 10:00:00 +0000',
      }),
      // gmane's munging with nothing else to go by: the writer is known by name.
      message({
        From: 'Li Zefan <lizefan-hv44wF8Li93QT0dZR+AlfA@public.gmane.org>',
        To: 'cgroups-u79uwXL29TY76Z2rM5mHXA@public.gmane.org',
        Subject: '[PATCH] memcg: cleanup',
        Date: 'Fri, 08 Dec 2023 10:00:00 +0000',
      }),
      // A vanity domain not named after its one writer, under two of her addresses.
      ...['jane@moonbase.example', 'hello@moonbase.example'].map((address, i) =>
        message({
          From: `Jane Doe <${address}>`,
          To: 'me@home.example',
          Subject: `From the moon ${i}`,
          Date: `Sat, ${9 + i} Dec 2023 10:00:00 +0000`,
        }),
      ),
    ];
    for (const raw of list) drafts.push(await mailEvent(h.blobs, raw));
    await h.publish([...drafts, older, noDate]);
  });
  after(async () => h.stop());

  /** Every page of a timeline, following next_cursor. */
  async function allPages(params: { key?: string; limit: number }): Promise<string[]> {
    const ids: string[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 100; page++) {
      const result: ResultOf<typeof Timeline> = await h.call(Timeline, { ...params, ...(cursor ? { cursor } : {}) });
      ids.push(...result.items.map((entry) => entry.item.id));
      if (!result.next_cursor) return ids;
      cursor = result.next_cursor;
    }
    throw new Error('too many pages');
  }

  test('timeline pages by (time, id): no item skipped or repeated, whatever the page size', async () => {
    for (const limit of [1, 4, 9, 10, 50]) {
      const everything = await allPages({ limit });
      assert.equal(new Set(everything).size, everything.length, `repeated at limit ${limit}`);
      assert.equal(everything.length, 52, `limit ${limit}: every dated item once`);
      const ann = await allPages({ key: 'person:ann@acme.example', limit });
      assert.deepEqual(new Set(ann), new Set(burst), `Ann's timeline at limit ${limit}`);
      assert.equal(ann.length, 45);
    }
    await assert.rejects(
      h.call(Timeline, { cursor: 'yesterday' }),
      (error: MemexError) => error.code === 'invalid_params' && /cursor/.test(error.message),
    );
  });

  test('a brief with text and no labels is about the text', async () => {
    const brief = await h.call(ContextBrief, { labels: [], text: 'where are we with the pyramid launch at acme?' });
    assert.ok(
      brief.things.some((thing) => thing.key === 'org:acme.example'),
      JSON.stringify(brief.things),
    );
    assert.ok(
      brief.lines.some((line) => line.section === 'event' && line.refs.includes(`item:${pyramid}`)),
      brief.text,
    );
  });

  test('an undated item is never a recent event, and is undated on its timeline', async () => {
    for (const params of [{ labels: ['person:friend@oldmail.example'] }, { labels: [] }]) {
      const brief = await h.call(ContextBrief, params);
      assert.ok(
        !brief.lines.some((line) => line.section === 'event' && line.refs.includes(`item:${undated}`)),
        brief.text,
      );
    }
    const friend = await h.call(EntityGet, { key: 'person:friend@oldmail.example' });
    assert.deepEqual(
      friend.timeline.map((entry) => [entry.item.id, entry.item.occurred_at]),
      [[undated, null]],
    );
    assert.deepEqual([friend.stats.first_at, friend.stats.last_at], [null, null]);
  });

  test("a list's rewritten From is the person behind it, not the list nor the gateway; a personal domain is no organization", async () => {
    const zed = await h.call(EntityGet, { key: 'person:zed@zedshaw.example' });
    assert.equal(zed.entity.name, 'Zed Shaw');
    assert.deepEqual(zed.timeline.map((entry) => entry.item.title).sort(), [
      'Direct question',
      'Re: Release notes',
      'Release notes',
    ]);
    for (const key of [
      'person:dev@lists.example.org',
      'person:zed-ab3de9xq@public.gmane.org',
      'org:gmane.org',
      'org:example.org',
      // zedshaw.example is Zed Shaw's own domain, not where he works; acme.example has Ann and Raj.
      'org:zedshaw.example',
      // Only Jane writes from moonbase.example, and the recipient nobody names at home.example.
      'org:moonbase.example',
      'org:home.example',
      'person:lizefan-hv44wf8li93qt0dzr+alfa@public.gmane.org',
    ]) {
      await assert.rejects(
        h.call(EntityGet, { key }),
        (error: MemexError) => error.code === 'not_found',
        `${key} should not exist`,
      );
    }
    assert.ok((await h.call(EntityGet, { key: 'person:raj@acme.example' })).facts.some((f) => f.rel === 'works_at'));
    // The organization's card says what made it one; a person's card has no such line.
    const acme = await h.call(EntityGet, { key: 'org:acme.example' });
    assert.match(acme.why ?? '', /^2 people write from acme\.example: (Ann Lee, Raj Patel|Raj Patel, Ann Lee)\b/);
    assert.equal(zed.why, null);
    // Ann works at acme.example since her first message, though Raj's (published after hers) made it an organization.
    const ann = await h.call(EntityGet, { key: 'person:ann@acme.example' });
    const annWorks = ann.facts.find((f) => f.rel === 'works_at')!;
    assert.equal(Date.parse(annWorks.valid_from!), Date.UTC(2024, 0, 10, 9));
    assert.ok(annWorks.evidence.every((e) => burst.includes(e.item)) && annWorks.evidence.length > 0);
    assert.deepEqual(ann.own_domains, []);
    // A one-person domain is on its person's card instead.
    const jane = await h.call(EntityGet, { key: 'person:jane@moonbase.example' });
    assert.deepEqual(jane.own_domains, ['moonbase.example']);
    assert.equal(jane.facts.filter((f) => f.rel === 'works_at').length, 0);
    const li = await h.call(EntityGet, { key: 'person:li-zefan' });
    assert.equal(li.entity.name, 'Li Zefan');
    assert.deepEqual(
      li.timeline.map((entry) => [entry.item.title, entry.rels]),
      [['[PATCH] memcg: cleanup', ['sent']]],
    );
  });
});
