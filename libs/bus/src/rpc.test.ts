import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { isMemexError, OWNER_SCOPE } from '@memex/contracts';
import { createTestEnv, type TestEnv } from '@memex/testing';
import { Bus } from './bus.js';
import { callRpc, serveRpc, type RpcRequest } from './rpc.js';

let env: TestEnv;
let server: Bus;
let client: Bus;
before(async () => {
  env = await createTestEnv();
  server = await Bus.connect(env.config.natsUrl, 'rpc-test-server');
  client = await Bus.connect(env.config.natsUrl, 'rpc-test-client');
  serveRpc(server, 'test.rpc.echo', 'test', async (request) => request.params);
  // Answers nothing: a call to it waits for its timeout unless something else ends it.
  serveRpc(server, 'test.rpc.never', 'test', () => new Promise(() => undefined));
  // The subscriptions reach NATS before any call: else a call may meet "no responders".
  await server.nc.flush();
});
after(async () => {
  await client.close();
  await server.close();
  await env.stop();
});

const request = (params: unknown): RpcRequest => ({
  method: 'test',
  params,
  scope: OWNER_SCOPE,
  caller: { kind: 'user', id: 'owner' },
});

/** How a call ended: its answer, or its error's code. */
const outcome = (call: Promise<unknown>): Promise<{ answer?: unknown; code?: string; message?: string }> =>
  call.then(
    (answer) => ({ answer }),
    (error: unknown) => ({ code: isMemexError(error) ? error.code : String(error), message: String(error) }),
  );

test('a call in flight when NATS restarts fails at once as unavailable, not after its timeout', async () => {
  const waiting = outcome(callRpc(client, 'test.rpc.never', request({}), 60_000));
  await new Promise((resolve) => setTimeout(resolve, 100));
  await env.restartNats();
  const ended = await waiting;
  assert.equal(ended.code, 'unavailable', JSON.stringify(ended));
  assert.match(ended.message!, /connection to NATS dropped while waiting for test\.rpc\.never/);
});

test('a call made while the connection is down goes out once it is back: answered, or told nobody serves it yet', async () => {
  await env.restartNats();
  // Until the serving client has subscribed again, "nobody serves it" at once; never a timeout.
  for (const deadline = Date.now() + 30_000; ;) {
    const ended = await outcome(callRpc(client, 'test.rpc.echo', request({ n: 1 }), 30_000));
    if ('answer' in ended) {
      assert.deepEqual(ended.answer, { n: 1 });
      break;
    }
    assert.equal(ended.code, 'unavailable', JSON.stringify(ended));
    assert.ok(Date.now() < deadline, 'the service answers again once both clients have reconnected');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
});
