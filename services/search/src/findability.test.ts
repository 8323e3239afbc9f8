import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Search, type ParamsOf, type ResultOf } from '@memex/contracts';
import { SearchHarness } from './test-support.js';

/**
 * What a person types into the search box and expects to find (issue 11): people by name and
 * address, with or without accents; Chinese, Japanese and Korean words inside longer runs; the
 * one item holding a rare word above items that are merely near in meaning; and meaning search
 * that stops where the meaning does.
 */
const SKY_ITEMS = 160;

describe('search: people, accents, CJK, fusion, the meaning floor', () => {
  let h: SearchHarness;
  const ids = {} as Record<
    'zoe' | 'mullerReport' | 'yamada' | 'beijing' | 'seoul' | 'rare' | 'notes' | 'photo',
    string
  >;
  const search = (params: Partial<ParamsOf<typeof Search>> & { q: string }) => h.call(Search, params);
  const found = (result: ResultOf<typeof Search>) => result.hits.map((hit) => hit.id);

  before(async () => {
    h = await SearchHarness.start({ workers: 2 });
    ids.zoe = await h.ingest({
      kind: 'email',
      title: 'Train tickets',
      text: 'The tickets for Saturday are booked, platform four at nine.',
      meta: {
        from: [{ name: 'Zoë Müller', address: 'zoe.mueller@lakeside.example' }],
        to: [{ name: 'Bob Stone', address: 'bob@example.com' }],
      },
    });
    ids.mullerReport = await h.ingest({
      kind: 'email',
      title: 'Müller quarterly report',
      text: 'Attached is the quarterly report on the Müller account.',
      meta: { from: [{ name: 'Ann Lee', address: 'ann@example.com' }] },
    });
    ids.yamada = await h.ingest({ title: 'Meeting', text: '山田太郎です。来週東京で会いましょう。' });
    ids.beijing = await h.ingest({ title: 'Study', text: '我在北京大学学习中文。' });
    ids.seoul = await h.ingest({ title: 'Campus', text: '서울대학교에서 공부합니다.' });
    // More items about the night sky than the meaning signal's 100 candidates, none saying
    // "astronomy", then the one that does, in passing: the nearest in meaning are all the others.
    const sky = ['stars', 'planets', 'the moon', 'comets', 'meteors', 'galaxies', 'nebulae', 'the milky way'];
    const watch = ['watched', 'photographed', 'counted', 'sketched', 'observed'];
    await h.ingestPrepared(
      await Promise.all(
        Array.from({ length: SKY_ITEMS }, async (_, i) => {
          const text = `We ${watch[i % watch.length]} ${sky[i % sky.length]} and ${sky[(i + 3) % sky.length]} in the night sky from the hill, night ${i}.`;
          return { item: { title: `Night ${i}`, text }, sha: await h.blobs.put(Buffer.from(text)) };
        }),
      ),
    );
    // Titled by their file names, as imported documents and photos are.
    ids.notes = await h.ingest({ title: 'meeting-notes_2023.docx', text: 'Agenda: the roof, the garden gate.' });
    ids.photo = await h.ingest({ kind: 'photo', title: 'IMG_5195.HEIC', text: 'IMG_5195.HEIC' });
    ids.rare = await h.ingest({
      title: 'Hardware store receipt',
      text: 'Screws, white paint, two brushes, a ladder, and the astronomy club fee paid in cash.',
    });
    await h.settle();
  });
  after(async () => h.stop());

  test('a file name in a title is found by its parts, and whole', async () => {
    for (const q of ['meeting notes', 'notes 2023', 'meeting-notes_2023.docx'])
      assert.deepEqual(found(await search({ q, mode: 'keyword' })), [ids.notes], q);
    for (const q of ['IMG_5195', '5195', 'IMG_5195.HEIC'])
      assert.deepEqual(found(await search({ q, mode: 'keyword' })), [ids.photo], q);
  });

  test("a sender's name finds the mail, accents folded, weighted below the subject", async () => {
    const zoe = await search({ q: 'zoe', mode: 'keyword' });
    assert.deepEqual(found(zoe), [ids.zoe]);
    assert.deepEqual(zoe.hits[0]!.why.keyword?.fields, ['people']);
    for (const q of ['muller', 'müller', 'Müller']) {
      // Both hold the name; the one with it in the subject and text comes first.
      assert.deepEqual(found(await search({ q, mode: 'keyword' })), [ids.mullerReport, ids.zoe], q);
    }
    assert.deepEqual(found(await search({ q: 'Zoë Müller tickets', mode: 'keyword' })), [ids.zoe]);
  });

  test('a recipient, an address, its local part and its domain are words too', async () => {
    for (const q of ['stone', 'bob@example.com', 'zoe.mueller@lakeside.example', 'mueller', 'lakeside.example'])
      assert.ok(found(await search({ q, mode: 'keyword' })).includes(ids.zoe), q);
    assert.deepEqual(found(await search({ q: 'ann@example.com', mode: 'keyword' })), [ids.mullerReport]);
  });

  test('Chinese, Japanese and Korean words are found inside longer runs', async () => {
    for (const [q, id] of [
      ['山田', ids.yamada],
      ['東京', ids.yamada],
      ['山田太郎', ids.yamada],
      ['北京', ids.beijing],
      ['中文', ids.beijing],
      ['서울', ids.seoul],
      ['京', ids.beijing],
    ] as const) {
      const result = await search({ q, mode: 'keyword' });
      assert.ok(found(result).includes(id!), `${q}: ${result.hits.map((hit) => hit.title).join(' | ')}`);
    }
    // Both hold 京 (東京, 北京): a single character matches either.
    assert.deepEqual(new Set(found(await search({ q: '京', mode: 'keyword' }))), new Set([ids.yamada, ids.beijing]));
    assert.deepEqual(found(await search({ q: '大阪', mode: 'keyword' })), []);
    assert.deepEqual(
      found(await search({ q: '田山', mode: 'keyword' })),
      [],
      'bigrams in order, not a bag of characters',
    );
  });

  test('hybrid: the only item holding a rare word outranks items only near in meaning', async () => {
    const result = await search({ q: 'astronomy' });
    assert.equal(result.hits[0]?.id, ids.rare, result.hits.map((hit) => hit.title).join(' | '));
    assert.equal(result.hits[0]!.why.keyword?.rank, 1);
    const meaningOnly = result.hits.find((hit) => !hit.why.keyword);
    assert.ok(meaningOnly, 'items near in meaning still follow');
    assert.ok(meaningOnly.score < result.hits[0]!.score);
  });

  test('meaning: hits stop at a floor relative to the best, and the total counts them', async () => {
    const result = await search({ q: 'quarterly accounting report', mode: 'meaning', limit: 100 });
    const similarities = result.hits.map((hit) => hit.why.meaning!.similarity);
    assert.ok(similarities.length > 0);
    const best = similarities[0]!;
    assert.ok(
      similarities.every((s) => s > 0 && s >= 0.4 * best - 1e-4),
      `similarities ${similarities.join(', ')}`,
    );
    assert.ok(result.hits.length < SKY_ITEMS, 'not every item comes back');
    assert.equal(result.total, result.hits.length);
    assert.equal(result.total_exact, true);
    const keyword = await search({ q: 'night', mode: 'keyword', limit: 5 });
    assert.deepEqual([keyword.hits.length, keyword.total, keyword.total_exact], [5, SKY_ITEMS, true]);
  });

  test('a subject typed word for word finds its message among more matching passages than are ranked', async () => {
    // More passages holding the words than a query ranks (the first found are), then the one item
    // whose title they are: as a subject's common words are in a large archive.
    const text = 'Minutes of the harbor lantern festival committee: stalls, permits and the parade route.';
    const sha = await h.blobs.put(Buffer.from(text));
    await h.ingestPrepared(
      Array.from({ length: 1_050 }, (_, i) => ({ item: { title: `Committee minutes ${i}`, text }, sha })),
    );
    const subject = await h.ingest({
      kind: 'email',
      title: 'Harbor lantern festival',
      text: 'Can you bring the ladder on Sunday? We hang them at six.',
    });
    await h.settle();
    const result = await search({ q: 'harbor lantern festival', mode: 'keyword', limit: 10 });
    assert.equal(result.hits[0]?.id, subject, result.hits.map((hit) => hit.title).join(' | '));
    assert.equal(result.total_exact, false, 'the total is a lower bound');
  });
});
