import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Budgets } from './budgets.js';
import { retryAfterMs } from './chat.js';

test('requests per minute: the minute’s allowance, then a pause until the next minute', () => {
  let now = Date.parse('2024-03-04T10:00:30Z');
  const budgets = new Budgets(() => now);
  const budget = { requests_per_minute: 2 };
  assert.equal(budgets.startRequest('m@1', budget), undefined);
  assert.equal(budgets.startRequest('m@1', budget), undefined);
  const pause = budgets.startRequest('m@1', budget)!;
  assert.equal(pause.until.toISOString(), '2024-03-04T10:01:00.000Z');
  assert.match(pause.because, /requests_per_minute 2 used/);
  assert.equal(budgets.startRequest('other@1', budget), undefined, 'each model has its own budget');
  now += 30_000;
  assert.equal(budgets.startRequest('m@1', budget), undefined, 'the minute turned');
});

test('cost per day: spent by the price of the tokens, back at midnight UTC; spend from the log counts only today', () => {
  let now = Date.parse('2024-03-04T23:00:00Z');
  const budgets = new Budgets(() => now);
  const budget = { cost_per_day: 1 };
  budgets.record('m@1', { requests: 1, tokens: 1_000_000, cost: 50 }, new Date('2024-03-03T12:00:00Z'));
  assert.equal(budgets.paused('m@1', budget), undefined, "yesterday's spend is not today's");
  budgets.record('m@1', { requests: 1, tokens: 1000, cost: 0.5 }, new Date('2024-03-04T08:00:00Z'));
  budgets.startRequest('m@1', budget);
  assert.deepEqual(budgets.charge('m@1', 2000, 0.25), { requests: 1, tokens: 2000, cost: 0.5 });
  assert.deepEqual(budgets.today('m@1'), { requests: 2, tokens: 3000, cost: 1 });
  const pause = budgets.paused('m@1', budget)!;
  assert.equal(pause.until.toISOString(), '2024-03-05T00:00:00.000Z');
  now += 60 * 60 * 1000;
  assert.equal(budgets.paused('m@1', budget), undefined);
  assert.deepEqual(budgets.today('m@1'), { requests: 0, tokens: 0, cost: 0 });
});

test('a 429 holds the model for its Retry-After (seconds or a date), by the wall clock', () => {
  const budgets = new Budgets(() => Date.parse('2000-01-01T00:00:00Z'));
  budgets.hold('m@1', retryAfterMs('2'));
  const pause = budgets.paused('m@1', {})!;
  assert.match(pause.because, /429/);
  assert.ok(Math.abs(pause.until.getTime() - (Date.now() + 2000)) < 1000);
  assert.equal(retryAfterMs(new Date(Date.now() + 5000).toUTCString()) > 3000, true);
  assert.equal(retryAfterMs(null), 60_000);
});
