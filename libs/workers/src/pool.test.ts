import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { TaskFailed, TaskPool } from './index.js';

type Task = { kind: 'echo' | 'sleep' | 'grow' | 'exit'; value?: number };
const pool = new TaskPool<Task, number>({
  name: 'the test pool',
  script: new URL('./testing/pool-task.js', import.meta.url),
  threads: 2,
  heapMb: 32,
});
after(() => pool.close());

test('runs tasks in threads and returns their results', async () => {
  assert.deepEqual(await Promise.all([1, 2, 3].map((value) => pool.run({ kind: 'echo', value }))), [2, 4, 6]);
});

test('a task past its time, out of memory, or whose thread exits fails alone, named; the pool goes on', async () => {
  const [slow, greedy, gone, fine] = await Promise.allSettled([
    pool.run({ kind: 'sleep' }, { timeoutMs: 200 }),
    pool.run({ kind: 'grow' }),
    pool.run({ kind: 'exit' }),
    pool.run({ kind: 'echo', value: 21 }),
  ]);
  const failure = (result: PromiseSettledResult<number>) =>
    result.status === 'rejected' && result.reason instanceof TaskFailed
      ? [result.reason.failure, result.reason.message]
      : result;
  assert.deepEqual(failure(slow), ['timeout', 'the test pool took longer than 0.2 s']);
  assert.deepEqual(failure(greedy), ['out_of_memory', 'the test pool needs more than 32 MB of memory for this']);
  assert.equal(gone.status === 'rejected' && (gone.reason as TaskFailed).failure, 'worker_died');
  assert.deepEqual(fine, { status: 'fulfilled', value: 42 });
  assert.equal(await pool.run({ kind: 'echo', value: 5 }), 10);
});
