import { test } from 'node:test';
import assert from 'node:assert/strict';
import { tier2Lines } from './jobs.js';
import { rerunText } from './understanding.js';

test('memex jobs: tier 2 per model — spend today against the budget, a pause and why, re-run progress', () => {
  const lines = tier2Lines({
    waiting: 12,
    in_progress: 4,
    done: 300,
    failed: 2,
    last_failure: 'topics of item 01J with gpt@1',
    models: [
      {
        model: 'gpt@1',
        tasks: ['summarize', 'extract'],
        spent_today: { requests: 410, tokens: 500_100, cost: 0.15 },
        budget: { tokens_per_day: 500_000 },
        paused_until: '2024-03-05T00:00:00.000Z',
        paused_because: 'tokens_per_day 500000 spent',
      },
      {
        model: 'local@1',
        tasks: ['extract'],
        spent_today: { requests: 3, tokens: 900, cost: 0 },
        budget: {},
        paused_until: null,
        paused_because: null,
      },
    ],
    reruns: [{ rerun_id: '01JRERUN', model: 'gpt@1', jobs: 100, done: 40, failed: 1 }],
  });
  assert.deepEqual(lines, [
    'tier 2     12 waiting, 4 in progress, 300 done, 2 failed (last: topics of item 01J with gpt@1)',
    '  gpt@1 (summarize, extract): today 410 requests, 500100 tokens, cost 0.15; budget 500000 tokens/day; PAUSED until 2024-03-05T00:00:00.000Z: tokens_per_day 500000 spent',
    '  local@1 (extract): today 3 requests, 900 tokens, cost 0.00; budget none',
    '  re-run 01JRERUN with gpt@1: 41/100 (1 failed)',
  ]);
  assert.deepEqual(tier2Lines(undefined), [], 'nothing about tier 2 without a chat model');
});

test('memex rerun --dry-run: jobs, tokens, cost, and the days the daily limits make it take', () => {
  const text = rerunText({
    rerun_id: null,
    jobs: 8412,
    tokens: 9_630_000,
    cost: 2.89,
    budget: { tokens_left_today: 2_000_000, cost_left_today: null, days: 5 },
    seq: null,
  });
  assert.equal(
    text,
    'would queue 8412 task runs, about 9630000 tokens, cost 2.89\nbudget left today: 2000000 tokens; 5 day(s) at the daily limits',
  );
});
