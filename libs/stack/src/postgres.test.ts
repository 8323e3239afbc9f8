import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { freePort } from './ports.js';
import { findPostgresBinaries, postgresTunables, startPostgres, type PostgresHandle } from './postgres.js';
import { isAlive } from './process.js';
import { makeServerTempDir } from './server-user.js';

async function query<T>(url: string, sql: string): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(sql)).rows as T[];
  } finally {
    await client.end();
  }
}

describe('startPostgres', () => {
  const root = makeServerTempDir('memex-pg-test-');
  const dataDir = path.join(root, 'pg');
  let port: number;
  let first: PostgresHandle;

  before(async () => {
    port = await freePort();
    first = await startPostgres({ dataDir, port, durable: false, detached: false });
  });

  after(async () => {
    await first?.stop();
    rmSync(root, { recursive: true, force: true });
  });

  test('finds a server of version 15 or newer', () => {
    const { bindir, version } = findPostgresBinaries();
    assert.ok(version >= 15, `version ${version}`);
    assert.ok(existsSync(path.join(bindir, 'initdb')));
  });

  test('serves the database with pgvector and pg_trgm on the requested port', async () => {
    assert.equal(first.url, `postgres://postgres@127.0.0.1:${port}/memex`);
    assert.equal(first.reused, false);
    const [distance] = await query<{ d: number }>(first.url, `SELECT '[1,2,3]'::vector <-> '[1,2,5]'::vector AS d`);
    assert.equal(distance?.d, 2);
    await query(first.url, `CREATE TABLE docs (id int PRIMARY KEY, body text, embedding vector(3))`);
    await query(first.url, `CREATE INDEX ON docs USING hnsw (embedding vector_cosine_ops)`);
    await query(first.url, `INSERT INTO docs VALUES (1, 'Zürich trip', '[1,0,0]'), (2, 'garden', '[0,1,0]')`);
    const nearest = await query<{ id: number }>(
      first.url,
      `SELECT id FROM docs ORDER BY embedding <=> '[0.9,0.1,0]' LIMIT 1`,
    );
    assert.deepEqual(nearest, [{ id: 1 }]);
    // pg_trgm must see non-ASCII letters as word characters (LC_CTYPE UTF-8, not C).
    const [sim] = await query<{ s: number }>(first.url, `SELECT similarity('zürich', 'Zürich trip') AS s`);
    assert.ok((sim?.s ?? 0) > 0.3, `similarity ${sim?.s}`);
  });

  test("runs its backends with glibc's malloc keeping a large sort's memory for the next query", () => {
    // Backends are forked from the postmaster: its environment is theirs. (glibc splits the
    // variable in place as it reads it: each tunable shows as an entry of its own.)
    const environment = readFileSync(`/proc/${first.pid}/environ`, 'utf8').split('\0');
    for (const tunable of ['glibc.malloc.mmap_threshold=33554432', 'glibc.malloc.trim_threshold=67108864'])
      assert.ok(
        environment.some((entry) => entry.endsWith(tunable)),
        `${tunable} not in ${environment.filter((entry) => entry.includes('glibc')).join(', ')}`,
      );
  });

  test('keeps its Unix socket beside the data dir, never in /var/run/postgresql', async () => {
    assert.ok(existsSync(path.join(root, 'run', `.s.PGSQL.${port}`)));
  });

  test('attaches to the running server on a second start', async () => {
    const again = await startPostgres({ dataDir, port });
    assert.equal(again.reused, true);
    assert.equal(again.pid, first.pid);
  });

  test('refuses to start the same data dir on another port', async () => {
    await assert.rejects(startPostgres({ dataDir, port: port + 1 }), /already running .* on port \d+, not \d+/);
  });

  test('stops, and starts again on the same data with the data kept', async () => {
    await first.stop();
    assert.equal(isAlive(first.pid), false);
    assert.equal(existsSync(path.join(dataDir, 'postmaster.pid')), false);
    first = await startPostgres({ dataDir, port, durable: false, detached: false });
    assert.equal(first.reused, false);
    assert.deepEqual(await query(first.url, 'SELECT id FROM docs ORDER BY id'), [{ id: 1 }, { id: 2 }]);
  });
});

test("the server's malloc settings keep the operator's own GLIBC_TUNABLES, theirs winning", () => {
  assert.equal(
    postgresTunables('glibc.malloc.trim_threshold=1048576:glibc.cpu.hwcaps=-AVX512F'),
    'glibc.malloc.mmap_threshold=33554432:glibc.malloc.trim_threshold=1048576:glibc.cpu.hwcaps=-AVX512F',
  );
  assert.equal(postgresTunables(''), postgresTunables(undefined));
});

test('startPostgres names the port when another program holds it', async (t) => {
  const root = makeServerTempDir('memex-pg-test-');
  t.after(() => rmSync(root, { recursive: true, force: true }));
  const blocker = net.createServer().listen(0, '127.0.0.1');
  await new Promise((resolve) => blocker.once('listening', resolve));
  t.after(() => blocker.close());
  const port = (blocker.address() as net.AddressInfo).port;
  await assert.rejects(
    startPostgres({ dataDir: path.join(root, 'pg'), port, durable: false }),
    new RegExp(`127\\.0\\.0\\.1:${port} is already in use by another program.*MEMEX_PG_PORT`),
  );
});

test('as root, a parent directory the postgres user cannot enter is reported, not changed', async (t) => {
  if (process.getuid?.() !== 0) return t.skip('only meaningful as root (Postgres then runs as user postgres)');
  const root = makeServerTempDir('memex-pg-test-');
  t.after(() => rmSync(root, { recursive: true, force: true }));
  const locked = path.join(root, 'locked');
  mkdirSync(locked, { mode: 0o700 });
  await assert.rejects(
    startPostgres({ dataDir: path.join(locked, 'home', 'pg'), port: await freePort(), durable: false }),
    new RegExp(`runs as user 'postgres', which cannot enter ${locked} \\(mode 700`),
  );
});
