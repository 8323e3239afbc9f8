import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { test, type TestContext } from 'node:test';

// deploy/local/provision.sh run against a fake system: a root prefix with PostgreSQL servers
// laid out as Debian does, and a PATH with a scripted apt-cache (and nats-server when present).
const script = fileURLToPath(new URL('../../../deploy/local/provision.sh', import.meta.url));

interface FakeSystem {
  /** Installed PostgreSQL majors, and whether pgvector is installed for each. */
  servers?: Record<number, { vector: boolean }>;
  /** The installed nats-server's version (`2.10.27`), if one is. */
  nats?: string;
  /** apt candidates, e.g. { postgresql: '17+257' }. */
  candidates?: Record<string, string>;
  /** Whether apt knows a pgvector source package (a deb-src entry for a suite that has it). */
  pgvectorSource?: boolean;
}

function executable(file: string, body: string): void {
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, `#!/bin/sh\n${body}\n`);
  chmodSync(file, 0o755);
}

function fakeSystem(t: TestContext, system: FakeSystem): { root: string; bin: string } {
  const dir = mkdtempSync(path.join(tmpdir(), 'memex-provision-test-'));
  chmodSync(dir, 0o755);
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const root = path.join(dir, 'root');
  const bin = path.join(dir, 'bin');
  for (const [major, { vector }] of Object.entries(system.servers ?? {})) {
    const bindir = path.join(root, 'usr/lib/postgresql', major, 'bin');
    const sharedir = path.join(root, 'usr/share/postgresql', major);
    for (const name of ['initdb', 'pg_ctl']) executable(path.join(bindir, name), 'exit 0');
    executable(path.join(bindir, 'postgres'), `echo "postgres (PostgreSQL) ${major}.4 (Debian ${major}.4-1)"`);
    executable(path.join(bindir, 'pg_config'), `[ "$1" = --sharedir ] && echo ${sharedir}`);
    mkdirSync(path.join(sharedir, 'extension'), { recursive: true });
    if (vector) writeFileSync(path.join(sharedir, 'extension', 'vector.control'), '');
  }
  const policy = Object.entries(system.candidates ?? {})
    .map(([pkg, version]) => `[ "$2" = ${pkg} ] && printf '${pkg}:\\n  Installed: (none)\\n  Candidate: ${version}\\n'`)
    .join('\n');
  executable(
    path.join(bin, 'apt-cache'),
    `case "$1" in\npolicy)\n${policy || ':'}\n;;\nshowsrc) ${system.pgvectorSource ? "printf 'Package: pgvector\\nVersion: 0.8.0-1\\n'" : ':'} ;;\nesac\nexit 0`,
  );
  if (system.nats) executable(path.join(bin, 'nats-server'), `echo "nats-server: v${system.nats}"`);
  return { root, bin };
}

function provision(fake: { root: string; bin: string }, args: string[], runAs: string[] = []) {
  const [command, ...rest] = runAs.length ? [...runAs, 'bash', script, ...args] : ['bash', script, ...args];
  const result = spawnSync(command!, rest, {
    encoding: 'utf8',
    env: { ...process.env, MEMEX_PROVISION_ROOT: fake.root, MEMEX_PROVISION_PATH: fake.bin },
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

test('everything present: does nothing and prints nothing', (t) => {
  const fake = fakeSystem(t, { servers: { 15: { vector: true } }, nats: '2.10.27' });
  assert.deepEqual(provision(fake, []), { code: 0, stdout: '', stderr: '' });
});

test('the highest installed server is the one that needs pgvector', (t) => {
  const fake = fakeSystem(t, { servers: { 13: { vector: false }, 16: { vector: true } }, nats: '2.11.0' });
  assert.deepEqual(provision(fake, []), { code: 0, stdout: '', stderr: '' });
});

test('fresh machine with a pgvector binary package: installs the server, nats-server, then postgresql-NN-pgvector', (t) => {
  const fake = fakeSystem(t, {
    candidates: { postgresql: '17+257', 'postgresql-17-pgvector': '0.8.0-1', 'nats-server': '2.10.27-1' },
  });
  const { code, stdout } = provision(fake, ['--dry-run']);
  assert.equal(code, 0, stdout);
  const lines = stdout.split('\n');
  assert.equal(lines.filter((l) => l.includes('apt-get update')).length, 1, 'apt-get update once');
  assert.ok(lines.includes('provision: installing postgresql nats-server'), stdout);
  assert.ok(lines.includes('provision: installing postgresql-17-pgvector'), stdout);
  assert.doesNotMatch(stdout, /building pgvector|deb-src|memex-nats/);
});

test('server without pgvector and no binary package: adds a trixie deb-src entry and builds from source', (t) => {
  const fake = fakeSystem(t, {
    servers: { 15: { vector: false } },
    nats: '2.10.27',
    candidates: { postgresql: '15+248' },
  });
  const { code, stdout } = provision(fake, ['--dry-run']);
  assert.equal(code, 0, stdout);
  assert.match(stdout, /adding a deb-src entry for Debian trixie/);
  assert.match(stdout, /installing postgresql-server-dev-15 build-essential/);
  assert.match(
    stdout,
    /building pgvector from Debian's source package against PostgreSQL 15 \(.*\/usr\/lib\/postgresql\/15\/bin\)/,
  );
  assert.match(stdout, /make PG_CONFIG=.*\/usr\/lib\/postgresql\/15\/bin\/pg_config/);
  assert.doesNotMatch(stdout, /installing postgresql nats-server|installing nats-server/);
  // apt-get update before looking for the binary package, and again for the new source's index
  assert.equal(stdout.split('\n').filter((l) => l.includes('apt-get update')).length, 2);
});

test('a known pgvector source package is used without adding a deb-src entry', (t) => {
  const fake = fakeSystem(t, { servers: { 15: { vector: false } }, nats: '2.10.27', pgvectorSource: true });
  const { code, stdout } = provision(fake, ['--dry-run']);
  assert.equal(code, 0, stdout);
  assert.doesNotMatch(stdout, /deb-src/);
  assert.match(stdout, /building pgvector/);
});

test('only nats-server missing: installs just that', (t) => {
  const fake = fakeSystem(t, { servers: { 15: { vector: true } } });
  const { code, stdout } = provision(fake, ['--dry-run']);
  assert.equal(code, 0, stdout);
  assert.match(stdout, /^provision: installing nats-server$/m);
  assert.doesNotMatch(stdout, /pgvector|postgresql/);
});

test("nats-server 2.9 where the distribution has nothing newer: trixie's, pinned to that package alone", (t) => {
  const fake = fakeSystem(t, {
    servers: { 15: { vector: true } },
    nats: '2.9.10',
    candidates: { 'nats-server': '2.9.10-1+b3' },
  });
  const { code, stdout } = provision(fake, ['--dry-run']);
  assert.equal(code, 0, stdout);
  assert.match(stdout, /nats-server 2\.9\.10 is replaced by 2\.10 or newer/);
  assert.match(stdout, /adding a deb entry for Debian trixie, pinned to nats-server alone/);
  assert.match(
    stdout,
    /would write \/etc\/apt\/sources\.list\.d\/memex-nats\.sources and \/etc\/apt\/preferences\.d\/memex-nats/,
  );
  assert.match(stdout, /^provision: installing nats-server$/m);
  // It was installed before: whether its system service runs is the owner's choice, kept.
  assert.doesNotMatch(stdout, /disabling the nats-server system service/);
  assert.doesNotMatch(stdout, /pgvector|postgresql/);
});

test("nats-server 2.9 where the distribution has 2.10: the distribution's, no other suite", (t) => {
  const fake = fakeSystem(t, {
    servers: { 15: { vector: true } },
    nats: '2.9.10',
    candidates: { 'nats-server': '2.10.27-1' },
  });
  const { code, stdout } = provision(fake, ['--dry-run']);
  assert.equal(code, 0, stdout);
  assert.match(stdout, /^provision: installing nats-server$/m);
  assert.doesNotMatch(stdout, /trixie|memex-nats/);
});

test('an unknown option is refused', (t) => {
  const fake = fakeSystem(t, {});
  const { code, stderr } = provision(fake, ['--yes']);
  assert.equal(code, 2);
  assert.match(stderr, /unknown option --yes/);
});

test('not root and no sudo: fails saying it needs root, installs nothing', (t) => {
  const isRoot = process.getuid?.() === 0;
  const setpriv = ['/usr/bin/setpriv', '/bin/setpriv'].find((p) => existsSync(p));
  if (isRoot && !setpriv) return t.skip('root without setpriv: cannot run as an unprivileged user');
  const fake = fakeSystem(t, { servers: { 15: { vector: true } } });
  const runAs = isRoot ? [setpriv!, '--reuid=65534', '--regid=65534', '--clear-groups'] : [];
  const { code, stderr } = provision(fake, [], runAs);
  assert.equal(code, 1);
  assert.match(stderr, /installing packages needs root: run this as root, or install sudo/);
});
