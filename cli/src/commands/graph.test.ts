import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { TrailsGet } from '@memex/contracts';
import { startStack, type TestStack } from '@memex/e2e';
import { waitUntil } from '@memex/testing';

const CLI = fileURLToPath(new URL('../../bin/memex.js', import.meta.url));
const run = promisify(execFile);

describe('memex trail', () => {
  let stack: TestStack;

  /** Runs the CLI against the test stack; answers stdout (a failure rejects with stderr). */
  const memex = async (...args: string[]): Promise<string> =>
    (
      await run(process.execPath, [CLI, ...args], {
        env: { ...process.env, MEMEX_URL: stack.url, MEMEX_TOKEN: stack.ownerToken, MEMEX_HOME: stack.config.home },
      })
    ).stdout;

  before(async () => {
    stack = await startStack(['graph']);
  });
  after(async () => stack?.stop());

  test('move takes a step by its number in `trail show` or by its id, to a position', async () => {
    const trail = (await memex('trail', 'create', 'Moves')).trim();
    const ids: string[] = [];
    for (const who of ['ann', 'bob', 'cy'])
      ids.push((await memex('trail', 'append', trail, `person:${who}@x.example`)).trim());
    const order = async () =>
      (await stack.owner.call(TrailsGet, { trail_id: trail })).steps_list.map((s) => s.step_id).join(' ');
    await waitUntil(async () => (await order()).split(' ').length === 3, 'the three steps to be projected');

    assert.match(await memex('trail', 'move', trail, '3', '1'), new RegExp(`^moved ${ids[2]} to 1\n$`));
    await waitUntil(async () => (await order()) === [ids[2], ids[0], ids[1]].join(' '), 'cy first');
    await memex('trail', 'move', trail, ids[0]!, '3');
    await waitUntil(async () => (await order()) === [ids[2], ids[1], ids[0]].join(' '), 'ann last');
    assert.match(
      await memex('trail', 'show', trail),
      /\n {2}1\. cy@x\.example \(person:cy@x\.example\)\n {2}2\. bob@x\.example .*\n {2}3\. ann@x\.example /,
    );

    await assert.rejects(memex('trail', 'move', trail, '4', '1'), /has 3 steps, no step 4/);
    await assert.rejects(memex('trail', 'move', trail, '1', '0'), /to must be a position \(1, 2, …\), not "0"/);
    await assert.rejects(memex('trail', 'move', trail, '1', '9'), /to 9 is past the end: the trail has 3 steps/);
  });
});
