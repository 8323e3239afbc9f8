import { test } from 'node:test';
import assert from 'node:assert/strict';
import { itemMeta } from '@memex/testing';
import { priorityOf, PriorityBuffer, WorkBudget } from './priorities.js';

function photo(takenDaysBeforeArrival: number | null): Parameters<typeof priorityOf>[0] {
  const arrived = Date.parse('2025-06-01T12:00:00Z');
  const taken = arrived - (takenDaysBeforeArrival ?? 0) * 86_400_000;
  return {
    recorded_at: new Date(arrived).toISOString(),
    occurred_at: new Date(taken).toISOString(),
    data: itemMeta('photo', { timeSource: takenDaysBeforeArrival === null ? null : 'exif' }),
  };
}

test('a photo taken within a week of arriving is new; an older or undated one is backfill', () => {
  const week = 7 * 86_400_000;
  assert.equal(priorityOf(photo(0.5), week), 'new');
  assert.equal(priorityOf(photo(6), week), 'new');
  assert.equal(priorityOf(photo(400), week), 'backfill');
  assert.equal(priorityOf(photo(null), week), 'backfill');
});

test('workers take new photos before backfill read ahead of them, each kind in arrival order', async () => {
  const buffer = new PriorityBuffer<string>(10, new WorkBudget(null));
  for (const [name, priority] of [
    ['old-1', 'backfill'],
    ['old-2', 'backfill'],
    ['today-1', 'new'],
    ['old-3', 'backfill'],
    ['today-2', 'new'],
  ] as const)
    buffer.push(name, priority);
  const order: string[] = [];
  for (let i = 0; i < 5; i++) order.push((await buffer.take())!);
  assert.deepEqual(order, ['today-1', 'today-2', 'old-1', 'old-2', 'old-3']);
  buffer.close();
  assert.equal(await buffer.take(), null);
});

test('the backfill budget lets so many through a minute; a new photo does not wait for it', async () => {
  let now = 0;
  const budget = new WorkBudget(2, () => now);
  const buffer = new PriorityBuffer<string>(10, budget);
  for (const name of ['old-1', 'old-2', 'old-3']) buffer.push(name, 'backfill');
  assert.equal(await buffer.take(), 'old-1');
  assert.equal(await buffer.take(), 'old-2');
  assert.equal(budget.waitMs(), 60_000, 'the third waits for the minute to pass');
  const third = buffer.take();
  buffer.push('today', 'new');
  assert.equal(await third, 'today', 'a new photo arriving meanwhile goes at once');
  now = 60_000;
  assert.equal(await buffer.take(), 'old-3');
});
