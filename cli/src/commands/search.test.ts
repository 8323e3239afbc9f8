import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { NotesPut, Search, type ResultOf } from '@memex/contracts';
import { startStack, type TestStack } from '@memex/e2e';

const CLI = fileURLToPath(new URL('../../bin/memex.js', import.meta.url));

/**
 * More notes than one search answers (100), all holding the word in their text, none in their
 * title: a note matches once its passages are indexed, never before by its title alone, so its
 * rank does not move between pages while the pipelines are still at work.
 */
const NOTES = 130;

describe('memex search', () => {
  let stack: TestStack;
  const memex = (...args: string[]) =>
    promisify(execFile)(process.execPath, [CLI, ...args], {
      env: { ...process.env, MEMEX_URL: stack.url, MEMEX_HOME: stack.config.home },
    });
  before(async () => {
    stack = await startStack(['ingest', 'pipelines', 'search']);
    for (let i = 0; i < NOTES; i++)
      await stack.owner.call(NotesPut, { title: `Line ${i}`, body: `Budget line ${i} for the year` });
    for (let i = 0; i < 480 && (await stack.owner.call(Search, { q: 'budget', mode: 'keyword' })).total < NOTES; i++)
      await new Promise((resolve) => setTimeout(resolve, 250));
  });
  after(async () => stack?.stop());

  test('memex.search pages by offset: every hit once, the total on each page, no next page after the last', async () => {
    const ids: string[] = [];
    const pages: Array<number | null> = [];
    let offset: number | null = 0;
    while (offset !== null) {
      const page: ResultOf<typeof Search> = await stack.owner.call(Search, {
        q: 'budget',
        mode: 'keyword',
        limit: 50,
        offset,
      });
      assert.equal(page.total, NOTES);
      ids.push(...page.hits.map((hit) => hit.id));
      pages.push((offset = page.next_offset));
    }
    assert.deepEqual(pages, [50, 100, null]);
    assert.equal(new Set(ids).size, NOTES, 'every note once');
  });

  test('--limit above one search pages through the answers; above the deepest page it is capped, saying so', async () => {
    const paged = await memex('search', 'budget', '--limit', '250');
    assert.equal((paged.stdout.match(/^\d+\. \[note\]/gm) ?? []).length, NOTES);
    assert.match(paged.stdout, new RegExp(`^${NOTES} found, ${NOTES} shown$`, 'm'));
    const capped = await memex('search', 'budget', '--limit', '5000');
    assert.match(capped.stdout, /, 130 shown \(--limit 5000 capped at 1000, the deepest search pages to/m);
    await assert.rejects(memex('search', 'budget', '--limit', '0'), /--limit must be a whole number from 1, got "0"/);
  });
});
