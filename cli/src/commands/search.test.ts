import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { NotesPut, Search } from '@memex/contracts';
import { startStack, type TestStack } from '@memex/e2e';

const CLI = fileURLToPath(new URL('../../bin/memex.js', import.meta.url));

describe('memex search', () => {
  let stack: TestStack;
  before(async () => {
    stack = await startStack(['ingest', 'pipelines', 'search']);
    for (const body of ['The budget for March', 'A budget review', 'Budget cuts ahead'])
      await stack.owner.call(NotesPut, { body });
    for (let i = 0; i < 240 && (await stack.owner.call(Search, { q: 'budget' })).hits.length < 3; i++)
      await new Promise((resolve) => setTimeout(resolve, 250));
  });
  after(async () => stack?.stop());

  test('--limit above what one search answers is capped, saying so, with the total found', async () => {
    const { stdout } = await promisify(execFile)(process.execPath, [CLI, 'search', 'budget', '--limit', '500'], {
      env: { ...process.env, MEMEX_URL: stack.url, MEMEX_HOME: stack.config.home },
    });
    assert.match(stdout, /^3 found, 3 shown \(--limit 500 capped at 100, the most one search answers/m);
    await assert.rejects(
      promisify(execFile)(process.execPath, [CLI, 'search', 'budget', '--limit', '0'], {
        env: { ...process.env, MEMEX_URL: stack.url, MEMEX_HOME: stack.config.home },
      }),
      /--limit must be a whole number from 1, got "0"/,
    );
  });
});
