import assert from 'node:assert/strict';
import { test } from 'node:test';
import { natsConnectOptions, withoutCredentials } from './nats-url.js';

test('a NATS URL gives its token or user and password as connect options, and the server without them', () => {
  assert.deepEqual(natsConnectOptions('nats://127.0.0.1:7422'), { servers: 'nats://127.0.0.1:7422' });
  assert.deepEqual(natsConnectOptions('nats://s3cr%2Ft@memex-head:7422'), {
    servers: 'nats://memex-head:7422',
    token: 's3cr/t',
  });
  assert.deepEqual(natsConnectOptions('nats://nas:pa%40ss@10.0.0.5:4222'), {
    servers: 'nats://10.0.0.5:4222',
    user: 'nas',
    pass: 'pa@ss',
  });
  assert.equal(withoutCredentials('nats://s3cret@memex-head:7422'), 'nats://memex-head:7422');
});
