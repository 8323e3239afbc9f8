import { execFileSync } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

/** The unprivileged account Postgres runs as when we are root (Postgres refuses to run as root). */
export interface ServerUser {
  name: string;
  uid: number;
  gid: number;
}

const SERVER_USER = 'postgres';

function lookup(name: string): ServerUser | undefined {
  try {
    const entry = execFileSync('getent', ['passwd', name], { encoding: 'utf8' }).trim();
    const [, , uid, gid] = entry.split(':');
    return { name, uid: Number(uid), gid: Number(gid) };
  } catch {
    return undefined;
  }
}

/**
 * Undefined when this process is not root (Postgres then runs as us). As root: the `postgres`
 * system account the Debian package creates, created here (system user, no login) when missing.
 */
export function postgresServerUser(): ServerUser | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const existing = lookup(SERVER_USER);
  if (existing) return existing;
  try {
    execFileSync(
      'useradd',
      ['--system', '--user-group', '--no-create-home', '--shell', '/usr/sbin/nologin', SERVER_USER],
      {
        stdio: 'pipe',
      },
    );
  } catch (err) {
    throw new Error(
      `Postgres refuses to run as root and there is no '${SERVER_USER}' user to run it as; creating one failed: ${(err as Error).message}`,
    );
  }
  const created = lookup(SERVER_USER);
  if (!created) throw new Error(`created user '${SERVER_USER}' but cannot look it up with getent`);
  return created;
}

function canSearch(dir: string, user: ServerUser): boolean {
  const st = statSync(dir);
  if (st.uid === user.uid) return (st.mode & 0o100) !== 0;
  if (st.gid === user.gid) return (st.mode & 0o010) !== 0;
  return (st.mode & 0o001) !== 0;
}

/**
 * Creates `dir` owned by `user` with `mode`, creating missing parents searchable by everyone
 * (they are ours). Existing parents are left alone: if one of them keeps `user` out, this fails
 * with a message saying which one and how to fix it, rather than changing a directory we do not own.
 */
export function prepareServerDir(dir: string, mode: number, user: ServerUser | undefined): void {
  const absolute = path.resolve(dir);
  const missing: string[] = [];
  for (let d = path.dirname(absolute); ; d = path.dirname(d)) {
    try {
      statSync(d);
      break;
    } catch {
      missing.push(d);
    }
    if (d === path.dirname(d)) break;
  }
  mkdirSync(absolute, { recursive: true, mode });
  for (const d of missing) chmodSync(d, statSync(d).mode | 0o011);
  if (user) {
    chownSync(absolute, user.uid, user.gid);
    for (let d = path.dirname(absolute); d !== path.dirname(d); d = path.dirname(d)) {
      if (!canSearch(d, user)) {
        const st = statSync(d);
        throw new Error(
          `Postgres refuses to run as root, so it runs as user '${user.name}', which cannot enter ${d} ` +
            `(mode ${(st.mode & 0o777).toString(8)}, owner uid ${st.uid}) on the way to ${absolute}. ` +
            `Make it searchable (e.g. chmod o+x ${d}) or put the data directory elsewhere (MEMEX_HOME=/var/lib/memex).`,
        );
      }
    }
  }
  chmodSync(absolute, mode);
}

/**
 * A fresh directory under the OS temp dir that the Postgres server user can enter (mkdtemp makes
 * it 0700, which would lock out `postgres` when we are root). For test clusters.
 */
export function makeServerTempDir(prefix = 'memex-stack-'): string {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  chmodSync(dir, 0o711);
  return dir;
}
