import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError, configEnv, loadConfig } from './index.js';

test('configEnv gives the environment that loadConfig reads back into the same config', () => {
  const config = {
    ...loadConfig({ MEMEX_HOME: '/tmp/memex-config-test' }),
    port: 8123,
    grpcPort: 0,
    natsUrl: 'nats://127.0.0.1:4999',
    databaseUrl: 'postgres://me@127.0.0.1:5999/other',
    rpcTimeoutMs: 1234,
    logLevel: 'warn' as const,
    services: ['gateway', 'ingest'],
  };
  assert.deepEqual(loadConfig(configEnv(config)), config);
});

test('a malformed setting is named', () => {
  assert.throws(
    () => loadConfig({ MEMEX_PORT: 'eighty' }),
    (error: unknown) => {
      assert.ok(error instanceof ConfigError);
      assert.match(error.message, /MEMEX_PORT must be a non-negative integer, got "eighty"/);
      return true;
    },
  );
});
