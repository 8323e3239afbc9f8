import assert from 'node:assert/strict';
import { existsSync, rmSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import pg from 'pg';
import { startLocalServers } from './local-servers.js';
import { freePort } from './ports.js';
import { isAlive } from './process.js';
import { makeServerTempDir } from './server-user.js';

test('startLocalServers: Postgres and NATS under MEMEX_HOME; an external database URL is prepared, not started', async (t) => {
  const home = path.join(makeServerTempDir('memex-local-test-'), 'home');
  t.after(() => rmSync(path.dirname(home), { recursive: true, force: true }));
  const [pgPort, natsPort] = [await freePort(), await freePort()];
  const local = await startLocalServers({ home, pgPort, natsPort, detached: false });
  t.after(() => local.stop());
  assert.equal(local.databaseUrl, `postgres://postgres@127.0.0.1:${pgPort}/memex`);
  assert.equal(local.natsUrl, `nats://127.0.0.1:${natsPort}`);
  assert.deepEqual(
    local.servers.map((s) => s.name),
    ['postgres', 'nats'],
  );
  for (const dir of ['postgres/PG_VERSION', 'nats/nats-server.conf', 'blobs', 'logs/postgres.log', 'logs/nats.log']) {
    assert.ok(existsSync(path.join(home, dir)), dir);
  }

  // A second home using the first one's Postgres as its "external" database: created with the extensions.
  const externalUrl = `postgres://postgres@127.0.0.1:${pgPort}/elsewhere`;
  const other = await startLocalServers({
    home: `${home}-2`,
    natsPort: await freePort(),
    databaseUrl: externalUrl,
    detached: false,
  });
  assert.equal(other.databaseUrl, externalUrl);
  assert.deepEqual(
    other.servers.map((s) => s.name),
    ['nats'],
  );
  assert.equal(existsSync(`${home}-2/postgres`), false);
  const client = new pg.Client({ connectionString: externalUrl });
  await client.connect();
  const { rows } = await client.query(
    `SELECT extname FROM pg_extension WHERE extname IN ('vector', 'pg_trgm') ORDER BY 1`,
  );
  await client.end();
  assert.deepEqual(
    rows.map((r) => r.extname),
    ['pg_trgm', 'vector'],
  );
  await other.stop();

  const pids = local.servers.map((s) => s.pid);
  await local.stop();
  for (const pid of pids) assert.equal(isAlive(pid), false);
});
