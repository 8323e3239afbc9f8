import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ConfigError, configEnv, ensureNatsToken, loadConfig } from './index.js';

test('configEnv gives the environment that loadConfig reads back into the same config', () => {
  const config = {
    ...loadConfig({ MEMEX_HOME: '/tmp/memex-config-test' }),
    port: 8123,
    grpcPort: 0,
    natsUrl: 'nats://127.0.0.1:4999',
    databaseUrl: 'postgres://me@127.0.0.1:5999/other',
    rpcTimeoutMs: 1234,
    ingestMaxLag: 0,
    goneGraceSeconds: 5,
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

test('the local NATS URL carries the token MEMEX_HOME holds (made once, readable by its owner only)', (t) => {
  const home = mkdtempSync(path.join(tmpdir(), 'memex-config-token-'));
  t.after(() => rmSync(home, { recursive: true, force: true }));
  assert.equal(loadConfig({ MEMEX_HOME: home, MEMEX_NATS_PORT: '7500' }).natsUrl, 'nats://127.0.0.1:7500');
  const token = ensureNatsToken(home);
  assert.match(token, /^[A-Za-z0-9_-]{32}$/);
  assert.equal(ensureNatsToken(home), token);
  assert.equal(statSync(path.join(home, 'nats-token')).mode & 0o777, 0o600);
  assert.equal(loadConfig({ MEMEX_HOME: home, MEMEX_NATS_PORT: '7500' }).natsUrl, `nats://${token}@127.0.0.1:7500`);
  // An explicit URL wins (an external NATS, a worker's tunnel).
  assert.equal(loadConfig({ MEMEX_HOME: home, MEMEX_NATS_URL: 'nats://other:4222' }).natsUrl, 'nats://other:4222');
});
