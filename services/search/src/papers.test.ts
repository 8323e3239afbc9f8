import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Search } from '@memex/contracts';
import { generatedPapers, pdfText } from '@memex/pipelines';
import { SearchHarness } from './test-support.js';

describe('search: papers (kind:paper, author:)', () => {
  let h: SearchHarness;
  const [paper, other] = generatedPapers(2);
  const ids: string[] = [];

  before(async () => {
    h = await SearchHarness.start();
    for (const p of [paper!, other!]) {
      const { text, pages } = pdfText(p.pages);
      ids.push(await h.ingest({ title: p.title, text, kind: 'paper', meta: { format: 'pdf', pages, info: {} } }));
    }
    await h.ingest({ title: `Notes on ${paper!.authors[0]}`, text: `${paper!.authors[0]} called about lunch.` });
    await h.settle();
  });

  after(async () => h?.stop());

  test("author: finds a paper by an author's name as tier 0 read it, and only papers; kind:paper keeps to papers", async () => {
    const [first, last] = paper!.authors[0]!.split(' ');
    const byAuthor = await h.call(Search, { q: `author:"${first} ${last}"` });
    assert.deepEqual(
      byAuthor.hits.map((hit) => hit.id),
      [ids[0]],
      'the note naming the author is not a paper',
    );
    assert.deepEqual(
      (await h.call(Search, { q: `author:"${first} ${last}" kind:paper` })).hits.map((hit) => hit.id),
      [ids[0]],
    );
    const papers = await h.call(Search, { q: 'kind:paper' });
    assert.deepEqual(papers.hits.map((hit) => hit.id).sort(), [...ids].sort());
    assert.equal(
      (await h.call(Search, { q: `author:${other!.authors[0]!.split(' ')[1]} author:nobody` })).hits.length,
      1,
    );
  });
});
