import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  agentScope,
  DEFAULT_SCOPE_RULES,
  MemexError,
  ModelsList,
  Search,
  Similar,
  type ParamsOf,
  type ResultOf,
} from '@memex/contracts';
import { sql, type Kysely } from 'kysely';
import { DATABASE } from '@memex/runtime';
import { SearchHarness } from './test-support.js';

const agentWithoutMail = agentScope('tok1', [], DEFAULT_SCOPE_RULES);
const agentWithMail = agentScope('tok2', ['mail'], DEFAULT_SCOPE_RULES);

describe('search', () => {
  let h: SearchHarness;
  const ids = {} as Record<'car' | 'tomato' | 'garden' | 'telescope' | 'budget' | 'pads' | 'spam' | 'market', string>;
  const search = (
    params: Partial<ParamsOf<typeof Search>> & { q: string },
    scope = undefined as Parameters<SearchHarness['call']>[2],
  ) => h.call(Search, params, scope);
  const titles = (result: ResultOf<typeof Search>) => result.hits.map((hit) => hit.title);

  before(async () => {
    h = await SearchHarness.start();
    ids.car = await h.ingest({
      title: 'Workshop visit',
      text: 'The mechanic replaced the brake pads and changed the engine oil. The car broke down on the highway last week, and the garage fixed it.',
      occurred_at: '2021-05-03T10:00:00Z',
    });
    ids.tomato = await h.ingest({
      title: 'Tomato planting guide',
      text: 'Plant tomato seedlings after the last spring frost. Water the garden beds deeply and stake the plants as they grow.',
      occurred_at: '2019-04-10T10:00:00Z',
    });
    ids.garden = await h.note(
      'Garden plans',
      'Sow carrots and lettuce in the vegetable garden this spring; the tomatoes go along the fence.',
    );
    ids.telescope = await h.ingest({
      title: 'Night sky',
      text: 'Through the telescope we saw craters on the moon and the rings of Saturn.',
      occurred_at: '2020-08-12T22:00:00Z',
    });
    ids.budget = await h.ingest({
      kind: 'email',
      title: 'Quarterly budget review',
      text: 'Hi Bob, the quarterly budget review is on Thursday. Please bring the invoices from the supplier. Alice',
      occurred_at: '2021-03-02T09:00:00Z',
      meta: {
        from: [{ name: 'Alice Martin', address: 'alice@example.com' }],
        to: [{ name: 'Bob Stone', address: 'bob@example.com' }],
      },
      source: { kind: 'mbox', id: 'work-2021' },
    });
    ids.pads = await h.ingest({
      title: 'Office supplies',
      text: 'Order writing pads for the office. The brake on the shared bicycle is broken too.',
      occurred_at: '2021-06-01T09:00:00Z',
    });
    ids.spam = await h.ingest({
      kind: 'email',
      title: 'You won a prize',
      text: 'Claim your lottery prize now: the budget review committee selected you. Send your bank details.',
      spam: true,
      meta: {
        from: [{ name: 'Winner Desk', address: 'win@lottery.example' }],
        to: [{ name: 'Bob Stone', address: 'bob@example.com' }],
      },
    });
    ids.market = await h.ingest({
      title: 'Markets today',
      text: 'The stock market fell sharply today as investors worried about interest rates.',
      labels: ['finance'],
      occurred_at: '2022-01-20T16:00:00Z',
    });
    await h.settle();
  });
  after(async () => h.stop());

  test('keyword: a word of the text finds the item, with the word highlighted and why', async () => {
    const result = await search({ q: 'mechanic', mode: 'keyword' });
    assert.deepEqual(titles(result), ['Workshop visit']);
    const [hit] = result.hits;
    assert.match(hit!.snippet, /\*\*mechanic\*\*/);
    assert.deepEqual(hit!.why.keyword?.fields, ['text']);
    assert.equal(hit!.why.keyword?.rank, 1);
    assert.equal(hit!.kind, 'document');
    assert.equal(hit!.occurred_at, '2021-05-03T10:00:00.000Z');
  });

  test('keyword: a title match ranks above a text match', async () => {
    const result = await search({ q: 'tomato', mode: 'keyword' });
    assert.deepEqual(titles(result), ['Tomato planting guide', 'Garden plans']);
    assert.deepEqual(result.hits[0]!.why.keyword?.fields, ['title', 'text']);
  });

  test('meaning: a paraphrase sharing no word with the item ranks it first', async () => {
    for (const mode of ['meaning', 'hybrid'] as const) {
      const result = await search({ q: 'my automobile stopped working on the motorway', mode });
      assert.equal(result.hits[0]?.id, ids.car, `${mode}: ${titles(result).join(' | ')}`);
      assert.ok(result.hits[0]!.why.meaning, 'found by meaning');
      assert.equal(result.hits[0]!.why.keyword, undefined, 'no shared word');
      assert.equal(result.space, 'glove-100d-sif@2');
    }
  });

  test('hybrid: found by both signals says so, fused by rank', async () => {
    const result = await search({ q: 'telescope moon' });
    assert.equal(result.hits[0]?.id, ids.telescope);
    const why = result.hits[0]!.why;
    assert.equal(why.keyword?.rank, 1);
    assert.equal(why.meaning?.rank, 1);
    // Each signal's rank 1: the keyword hit weighs 1, the meaning hit its similarity.
    assert.ok(Math.abs(result.hits[0]!.score - (1 + why.meaning!.similarity) / 61) < 1e-4);
  });

  test('a quoted phrase must appear as written', async () => {
    const phrase = await search({ q: '"brake pads"' });
    assert.deepEqual(
      phrase.hits.map((hit) => hit.id),
      [ids.car],
    );
    const words = await search({ q: 'brake pads', mode: 'keyword' });
    assert.deepEqual(new Set(words.hits.map((hit) => hit.id)), new Set([ids.car, ids.pads]));
  });

  test('prefixes: an explicit prefix, and a half-typed word widened to indexed words', async () => {
    assert.deepEqual(titles(await search({ q: 'mechan*', mode: 'keyword' })), ['Workshop visit']);
    const half = await search({ q: 'telesc', mode: 'keyword' });
    assert.deepEqual(titles(half), ['Night sky']);
    assert.deepEqual(half.query.expansions, [{ word: 'telesc', matches: ['telescope'], how: 'prefix' }]);
  });

  test('typos and substrings find the indexed word (trigrams)', async () => {
    const typo = await search({ q: 'telescpoe', mode: 'keyword' });
    assert.deepEqual(titles(typo), ['Night sky']);
    assert.equal(typo.query.expansions[0]?.how, 'typo');
    const inside = await search({ q: 'voice', mode: 'keyword' });
    assert.deepEqual(titles(inside), ['Quarterly budget review']);
    assert.deepEqual(inside.query.expansions, [{ word: 'voice', matches: ['invoices'], how: 'substring' }]);
  });

  test('filters: from:, to:, kind:, before:/after:, -exclusion, labels, sources, people', async () => {
    assert.deepEqual(titles(await search({ q: 'budget from:alice' })), ['Quarterly budget review']);
    assert.deepEqual(titles(await search({ q: 'from:"alice martin"' })), ['Quarterly budget review']);
    assert.deepEqual(titles(await search({ q: 'to:bob kind:email' })), ['You won a prize', 'Quarterly budget review']);
    assert.deepEqual(titles(await search({ q: 'budget -lottery', mode: 'keyword' })), ['Quarterly budget review']);
    assert.deepEqual(titles(await search({ q: 'after:2021-05 before:2022' })), ['Office supplies', 'Workshop visit']);
    assert.deepEqual(titles(await search({ q: 'market', labels: ['finance'] })), ['Markets today']);
    assert.deepEqual(titles(await search({ q: 'budget', sources: ['mbox:work-2021'] })), ['Quarterly budget review']);
    assert.deepEqual(titles(await search({ q: '', people: ['win@lottery'] })), ['You won a prize']);
    assert.deepEqual(titles(await search({ q: 'garden', kinds: ['note'] })), ['Garden plans']);
    await assert.rejects(
      search({ q: 'before:someday' }),
      (error: MemexError) => error.code === 'invalid_params' && /before: "someday"/.test(error.message),
    );
  });

  test('groups: the best hits of each kind', async () => {
    const result = await search({ q: 'budget review', limit: 1, mode: 'keyword' });
    assert.equal(result.hits.length, 1);
    assert.deepEqual(Object.keys(result.groups).sort(), ['email']);
    assert.deepEqual(result.groups.email!.map((hit) => hit.id).sort(), [ids.budget, ids.spam].sort());
  });

  test('an agent without the mail label never sees mail: no hit, no group, no snippet', async () => {
    const owner = await search({ q: 'budget review invoices' });
    assert.ok(owner.hits.some((hit) => hit.kind === 'email'));
    for (const mode of ['hybrid', 'keyword', 'meaning'] as const) {
      const agent = await search({ q: 'budget review invoices', mode }, agentWithoutMail);
      assert.equal(agent.hits.filter((hit) => hit.kind === 'email').length, 0, mode);
      assert.equal(agent.groups.email, undefined);
      assert.ok(!JSON.stringify(agent).includes('invoices from the supplier'));
    }
    assert.deepEqual(titles(await search({ q: 'kind:email' }, agentWithoutMail)), []);
    // Nor a word of mail through the shared vocabulary: no expansion offers it.
    assert.deepEqual((await search({ q: 'invoi', mode: 'keyword' })).query.expansions[0]?.matches, ['invoices']);
    const hidden = await search({ q: 'invoi', mode: 'keyword' }, agentWithoutMail);
    assert.deepEqual([hidden.hits, hidden.query.expansions], [[], []]);
    await assert.rejects(
      h.call(Similar, { id: ids.budget }, agentWithoutMail),
      (error: MemexError) => error.code === 'not_found',
    );
  });

  test('spam is never returned to an agent, even one allowed mail', async () => {
    const withMail = await search({ q: 'lottery prize budget' }, agentWithMail);
    assert.ok(withMail.hits.some((hit) => hit.id === ids.budget));
    assert.ok(!withMail.hits.some((hit) => hit.id === ids.spam));
    const owner = await search({ q: 'lottery prize' });
    assert.equal(owner.hits[0]?.id, ids.spam);
  });

  test('similar: more like this item, within scope', async () => {
    const result = await h.call(Similar, { id: ids.tomato, limit: 3 });
    assert.equal(result.hits[0]?.id, ids.garden);
    assert.ok(!result.hits.some((hit) => hit.id === ids.tomato));
    assert.ok(result.hits[0]!.why.meaning!.similarity > 0.5);
    await assert.rejects(
      h.call(Similar, { id: '01HZZZZZZZZZZZZZZZZZZZZZZZ' }),
      (error: MemexError) => error.code === 'not_found',
    );
  });

  test('models.list: the built-in space is active and complete', async () => {
    const models = await h.call(ModelsList, {});
    assert.equal(models.active, 'glove-100d-sif@2');
    assert.deepEqual(
      models.models.map((m) => [m.space, m.state, m.embedded_items, m.total_items]),
      [['glove-100d-sif@2', 'active', 8, 8]],
    );
  });

  test('search plans its statements without parallel workers', async () => {
    const db = h.searchApp.get<Kysely<unknown>>(DATABASE);
    const { rows } = await sql<{
      workers: string;
    }>`select current_setting('max_parallel_workers_per_gather') as workers`.execute(db);
    assert.equal(rows[0]!.workers, '0');
  });

  test('a deleted item vanishes from every signal', async () => {
    const id = await h.ingest({
      title: 'Passport renewal',
      text: 'Renew the passport at the consulate before the trip to Japan.',
    });
    await h.settle();
    assert.equal((await search({ q: 'passport consulate' })).hits[0]?.id, id);
    await h.delete(id);
    await h.settle();
    for (const mode of ['hybrid', 'keyword', 'meaning'] as const) {
      const result = await search({ q: 'passport consulate renew', mode });
      assert.ok(!result.hits.some((hit) => hit.id === id), mode);
    }
    await assert.rejects(h.call(Similar, { id }), (error: MemexError) => error.code === 'not_found');
    assert.equal(
      (await search({ q: 'consulate', mode: 'keyword' })).query.expansions.length,
      0,
      'its words left the vocabulary too',
    );
  });
});
