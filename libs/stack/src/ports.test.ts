import assert from 'node:assert/strict';
import net from 'node:net';
import { test } from 'node:test';
import { assertPortFree, freePort, isPortFree } from './ports.js';

test('freePort gives a bindable port; once taken, isPortFree and assertPortFree say so', async (t) => {
  const port = await freePort();
  assert.ok(port > 1024 && port < 65536);
  assert.equal(await isPortFree('127.0.0.1', port), true);
  const server = net.createServer().listen(port, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  t.after(() => server.close());
  assert.equal(await isPortFree('127.0.0.1', port), false);
  await assert.rejects(assertPortFree('127.0.0.1', port, 'the thing', 'THING_PORT'), {
    message: `cannot start the thing: 127.0.0.1:${port} is already in use by another program. Stop that program or choose another port (THING_PORT).`,
  });
});
