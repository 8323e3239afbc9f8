import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createTestEnv, waitUntil, type TestEnv } from '@memex/testing';
import { Bus } from './bus.js';

let env: TestEnv;
let bus: Bus;
before(async () => {
  env = await createTestEnv();
  bus = await Bus.connect(env.config.natsUrl, 'bus-test');
});
after(async () => {
  await bus.close();
  await env.stop();
});

test('a drop and the reconnection after it are told once each, to those still listening', async () => {
  const told: string[] = [];
  bus.onDrop(() => told.push('drop'));
  bus.onReconnect(() => told.push('reconnect'));
  const stopped = bus.onReconnect(() => told.push('stopped listening'));
  stopped();
  await env.restartNats();
  await waitUntil(async () => told.includes('reconnect'), 'the reconnection told', { timeoutMs: 30_000 });
  assert.deepEqual(told, ['drop', 'reconnect']);
  await bus.connected(1_000);

  // Told once: a second restart tells only who listens again.
  bus.onDrop(() => told.push('second drop'));
  await env.restartNats();
  await waitUntil(async () => told.includes('second drop'), 'the second drop told', { timeoutMs: 30_000 });
  await bus.connected(30_000);
  assert.deepEqual(told, ['drop', 'reconnect', 'second drop']);
});
