import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from '@memex/config';
import { sharedRoot, sharedSkip } from './shared.js';

function sha256(file: string): string {
  return createHash('sha256').update(fs.readFileSync(file)).digest('hex');
}

/** Every non-empty file under `dir`, by the sha256 of its content. */
function hashTree(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const entry of fs.readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const full = path.join(entry.parentPath, entry.name);
    if (fs.statSync(full).size > 0) out.set(sha256(full), path.relative(dir, full));
  }
  return out;
}

test(
  'the repository holds no copy of a file from the shared folder (third-party data is read in place)',
  { skip: sharedSkip('') },
  () => {
    const shared = hashTree(sharedRoot);
    assert.ok(shared.size > 100, `${shared.size} files under ${sharedRoot}`);
    const tracked = execFileSync('git', ['ls-files', '-z'], { cwd: REPO_ROOT, encoding: 'utf8' })
      .split('\0')
      .filter(Boolean);
    assert.ok(tracked.length > 100, `${tracked.length} files in git ls-files`);
    const copies: string[] = [];
    for (const file of tracked) {
      const full = path.join(REPO_ROOT, file);
      // A path git lists but the working tree no longer has (a deletion not yet committed).
      const stat = fs.statSync(full, { throwIfNoEntry: false });
      if (!stat?.isFile() || stat.size === 0) continue;
      const twin = shared.get(sha256(full));
      if (twin) copies.push(`${file} = shared/${twin}`);
    }
    assert.deepEqual(copies, []);
  },
);
