import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { ItemsGet, NotesPut } from '@memex/contracts';
import { startStack, type TestStack } from '@memex/e2e';
import { statusText } from './status.js';

const CLI = fileURLToPath(new URL('../../bin/memex.js', import.meta.url));

describe('memex status', () => {
  let stack: TestStack;
  before(async () => {
    stack = await startStack(['ingest', 'pipelines']);
  });
  after(async () => stack?.stop());

  test('says for each service whether it is up and caught up with the log, and the pipelines backlog', async () => {
    const put = await stack.owner.call(NotesPut, { body: 'status check' });
    await stack.owner.call(ItemsGet, { id: put.id, min_seq: put.seq });
    const { stdout } = await promisify(execFile)(process.execPath, [CLI, 'status'], {
      env: { ...process.env, MEMEX_URL: stack.url, MEMEX_HOME: stack.config.home },
    });
    assert.match(stdout, new RegExp(`^memex at ${stack.url.replace(/[.]/g, '\\.')}: ok\\nlog: \\d+ events?\\n`));
    assert.match(stdout, /^ {2}✓ gateway +up, up to date$/m);
    assert.match(stdout, /^ {2}✓ ingest +up, up to date$/m);
    assert.match(stdout, /^pipelines backlog: /m);
    assert.doesNotMatch(stdout, /applied/);
  });

  test('a service behind, failing or down is said so, in words', () => {
    const text = statusText(
      'http://x',
      {
        status: 'degraded',
        log: { last_seq: 10_596 },
        failures: 3,
        services: [
          { service: 'gateway', ready: true, projector: { checkpoint: 4, lag: 0 } },
          { service: 'search', ready: true, projector: { checkpoint: 9_000, lag: 1_596 } },
          { service: 'graph', ready: true, projector: { checkpoint: 10_596, lag: 0, failures: 3 } },
          { service: 'insights', ready: false },
        ],
      },
      { queues: [{ priority: 'background', waiting: 1200, in_progress: 2 }], workers: 2, failed: 0 },
    );
    assert.equal(
      text,
      [
        'memex at http://x: degraded: some events failed to project, so a read model misses data',
        'log: 10,596 events',
        '  ✓ gateway   up, up to date',
        '  ✓ search    up, 1,596 events behind',
        '  ✗ graph     up, up to date, 3 events failed to project',
        '  ✗ insights  not answering',
        'pipelines backlog: 1,200 jobs waiting, 2 in progress (memex jobs)',
        'events failed to project: `memex failures` shows them, `memex failures retry` applies them again',
      ].join('\n'),
    );
  });
});
