import { test } from 'node:test';
import assert from 'node:assert/strict';
import { seqsOption } from '../context.js';
import { failedText, jobsText } from './jobs.js';

test('memex jobs: failed jobs are counted beside the backlog, with where to look', () => {
  const status = { queues: [{ priority: 'new', waiting: 3, in_progress: 1 }], workers: 2 };
  assert.equal(
    jobsText({ ...status, failed: 0 }),
    'new        3 waiting, 1 in progress\n2 workers in the answering process',
  );
  assert.match(
    jobsText({ ...status, failed: 7 }),
    /^failed {5}7 set aside after every retry: memex jobs failed, memex jobs retry$/m,
  );
});

test('memex jobs failed: each job with its seq, item, attempts and why; what the limit left out', () => {
  assert.equal(failedText({ total: 0, jobs: [] }), 'no failed jobs');
  const text = failedText({
    total: 3,
    jobs: [
      {
        seq: 812,
        task: 'text',
        item_id: '01JAAAAAAAAAAAAAAAAAAAAAAA',
        priority: 'new',
        attempts: 5,
        reason: 'unknown embedding space e5@2',
        failed_at: '2026-12-04T10:00:00.000Z',
        worker: 'w1',
      },
      {
        seq: 900,
        task: 'backfill',
        item_id: null,
        priority: 'background',
        attempts: 5,
        reason: 'connect ECONNREFUSED 10.0.0.7:11434',
        failed_at: '2026-12-04T11:00:00.000Z',
        worker: 'gpu-box',
      },
    ],
  });
  assert.equal(
    text,
    [
      '3 job(s) failed every retry and were set aside; after a fix, run: memex jobs retry',
      '  seq 812 text of item 01JAAAAAAAAAAAAAAAAAAAAAAA (new) at 2026-12-04T10:00:00.000Z, 5 attempts, worker w1',
      '    unknown embedding space e5@2',
      '  seq 900 backfill (background) at 2026-12-04T11:00:00.000Z, 5 attempts, worker gpu-box',
      '    connect ECONNREFUSED 10.0.0.7:11434',
      '  … and 1 more (--limit)',
    ].join('\n'),
  );
});

test('--seq of memex jobs retry and memex failures retry: positive integers, a bad one named', () => {
  assert.deepEqual(seqsOption(['3', '12'], "a job's seq"), [3, 12]);
  assert.equal(seqsOption(undefined, "a job's seq"), undefined);
  assert.throws(() => seqsOption(['3', '0'], "a job's seq"), /^Error: --seq 0: a job's seq is a positive integer$/);
  assert.throws(() => seqsOption(['1.5'], 'a log sequence'), /--seq 1\.5: a log sequence is a positive integer/);
});
