import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { getPriority } from 'node:os';
import { createTestEnv, type TestEnv } from '@memex/testing';
import { nicenessFromEnv, WorkerPool } from './pool.js';

/** The niceness of each thread of this process (Linux: field 19 of /proc/self/task/<tid>/stat). */
function threadNiceness(): Map<number, number> {
  return new Map(
    readdirSync('/proc/self/task').map((tid) => {
      const fields = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8').split(') ')[1]!.split(' ');
      return [Number(tid), Number(fields[16])];
    }),
  );
}

let env: TestEnv;
before(async () => {
  env = await createTestEnv();
});
after(async () => env.stop());

test(
  'worker threads run at the background niceness; the service thread stays as it was',
  { skip: process.platform !== 'linux' && 'a niceness per thread is Linux’s' },
  async () => {
    const own = getPriority();
    const before = threadNiceness();
    const pool = new WorkerPool(1, { natsUrl: env.config.natsUrl, blobsDir: env.config.blobsDir });
    await pool.start();
    try {
      const started = [...threadNiceness()].filter(([tid]) => !before.has(tid));
      const niceness = started.map(([, nice]) => nice);
      assert.ok(
        niceness.includes(Math.max(own, 10)),
        `a worker thread at ${Math.max(own, 10)}: ${niceness.join(', ')}`,
      );
      assert.equal(threadNiceness().get(process.pid), own, 'the service thread as it was');
    } finally {
      await pool.stop();
    }
  },
);

test('MEMEX_PIPELINE_NICENESS sets it, from 0 (as the service) to 19', () => {
  assert.equal(nicenessFromEnv({}), 10);
  assert.equal(nicenessFromEnv({ MEMEX_PIPELINE_NICENESS: '0' }), 0);
  assert.equal(nicenessFromEnv({ MEMEX_PIPELINE_NICENESS: '19' }), 19);
  assert.throws(() => nicenessFromEnv({ MEMEX_PIPELINE_NICENESS: '20' }), /from 0 to 19, got "20"/);
  assert.throws(() => nicenessFromEnv({ MEMEX_PIPELINE_NICENESS: 'low' }), /from 0 to 19, got "low"/);
});
