import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { findNatsServer, startNats, type NatsHandle } from './nats.js';
import { freePort } from './ports.js';
import { isAlive } from './process.js';

describe('startNats', () => {
  const storeDir = path.join(mkdtempSync(path.join(tmpdir(), 'memex-nats-test-')), 'nats');
  let port: number;
  let monitorPort: number;
  let nats: NatsHandle;

  before(async () => {
    [port, monitorPort] = [await freePort(), await freePort()];
    nats = await startNats({ storeDir, port, monitorPort, detached: false });
  });

  after(async () => {
    await nats?.stop();
    rmSync(path.dirname(storeDir), { recursive: true, force: true });
  });

  test('finds nats-server 2.9 or newer', () => {
    const { version } = findNatsServer();
    const [major, minor] = version.split('.').map(Number);
    assert.ok(major! > 2 || (major === 2 && minor! >= 9), version);
  });

  test('serves JetStream: a file stream takes and keeps a message', async () => {
    assert.equal(nats.url, `nats://127.0.0.1:${port}`);
    const nc = await connect({ servers: nats.url });
    try {
      const jsm = await jetstreamManager(nc);
      await jsm.streams.add({ name: 'STACK_TEST', subjects: ['stack.test.>'] });
      const ack = await jsm.jetstream().publish('stack.test.one', 'hello', { msgID: 'm1' });
      assert.equal(ack.seq, 1);
      const info = await jsm.streams.info('STACK_TEST');
      assert.equal(info.state.messages, 1);
      assert.equal(nc.info?.max_payload, 64 * 1024 * 1024);
    } finally {
      await nc.close();
    }
    const health = await fetch(`http://127.0.0.1:${monitorPort}/healthz?js-enabled-only=true`);
    assert.equal(health.status, 200);
  });

  test('attaches to the running server on a second start, and refuses another port', async () => {
    const again = await startNats({ storeDir, port });
    assert.equal(again.reused, true);
    assert.equal(again.pid, nats.pid);
    assert.equal(again.monitorPort, monitorPort);
    await assert.rejects(startNats({ storeDir, port: port + 1 }), /already running .* on port \d+, not \d+/);
  });

  test('stops, and the stream survives a restart on the same store', async () => {
    await nats.stop();
    assert.equal(isAlive(nats.pid), false);
    nats = await startNats({ storeDir, port, detached: false });
    assert.equal(nats.reused, false);
    const nc = await connect({ servers: nats.url });
    try {
      const info = await (await jetstreamManager(nc)).streams.info('STACK_TEST');
      assert.equal(info.state.messages, 1);
    } finally {
      await nc.close();
    }
  });
});

test('startNats with a token: a client without it is refused, one with it (the handle URL names it) gets in', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'memex-nats-token-'));
  const port = await freePort();
  const nats = await startNats({ storeDir: path.join(dir, 'nats'), port, detached: false, token: 'worker-s3cret' });
  t.after(async () => {
    await nats.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  assert.equal(nats.url, `nats://worker-s3cret@127.0.0.1:${port}`);
  const servers = `nats://127.0.0.1:${port}`;
  await assert.rejects(connect({ servers, maxReconnectAttempts: 0 }), /authorization/i);
  await assert.rejects(connect({ servers, token: 'guessed', maxReconnectAttempts: 0 }), /authorization/i);
  const nc = await connect({ servers, token: 'worker-s3cret' });
  await nc.flush();
  await nc.close();
});
