import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** One upstream tarball of a Debian source package, pinned by its checksum. */
export interface DebianSource {
  /** The source package, e.g. `notmuch`. */
  name: string;
  /** The upstream version of its `.orig.tar.*`, e.g. `0.39`. */
  version: string;
  /** The tarball's file name in the pool, e.g. `notmuch_0.39.orig.tar.xz`. */
  file: string;
  sha256: string;
  /** The folders of the tarball the tests read, e.g. `notmuch-0.39/test/corpora`. */
  members: string[];
}

/**
 * Real-world test data that another project's test suite ships (notmuch's LKML and mailing-list
 * corpora, say), fetched from the Debian archive — reachable wherever Debian's packages are, as
 * in CI — once per machine into a cache folder, checked against its pinned sha256, and read there
 * in place: never copied into this repository. `MEMEX_DEBIAN_MIRROR` names another mirror.
 * Returns the folder the members were unpacked under, or why the test cannot run here.
 */
export async function debianSourceTree(source: DebianSource): Promise<{ dir: string } | { skip: string }> {
  const cache = path.join(
    process.env.MEMEX_TEST_DATA_CACHE ?? path.join(os.tmpdir(), 'memex-test-data'),
    `${source.name}-${source.version}`,
  );
  const done = path.join(cache, '.unpacked');
  if (fs.existsSync(done)) return { dir: cache };
  const mirror = process.env.MEMEX_DEBIAN_MIRROR ?? 'http://deb.debian.org/debian';
  const url = `${mirror}/pool/main/${source.name[0]}/${source.name}/${source.file}`;
  let bytes: Buffer;
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(60_000) });
    if (!response.ok)
      return { skip: `needs ${url} (Debian's ${source.name} source), which answered ${response.status}` };
    bytes = Buffer.from(await response.arrayBuffer());
  } catch (error) {
    return {
      skip: `needs ${url} (Debian's ${source.name} source), which cannot be reached: ${(error as Error).message}`,
    };
  }
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  if (sha256 !== source.sha256) throw new Error(`${url} has sha256 ${sha256}, not the pinned ${source.sha256}`);
  // Unpacked beside the final folder and renamed into place, so a run killed halfway leaves no half tree.
  fs.mkdirSync(path.dirname(cache), { recursive: true });
  const staging = fs.mkdtempSync(`${cache}.partial-`);
  const tarball = path.join(staging, source.file);
  fs.writeFileSync(tarball, bytes);
  execFileSync('tar', ['-xf', tarball, '-C', staging, ...source.members]);
  fs.rmSync(tarball);
  fs.writeFileSync(path.join(staging, '.unpacked'), `${url}\n${sha256}\n`);
  try {
    fs.renameSync(staging, cache);
  } catch (error) {
    // Another test file unpacked it first.
    if (!fs.existsSync(done)) throw error;
    fs.rmSync(staging, { recursive: true, force: true });
  }
  return { dir: cache };
}
