import fs from 'node:fs';
import path from 'node:path';

/**
 * The workplace's shared folder: real-world corpora (`corpus/`) and small model fixtures
 * (`models/`) that tests read in place, never copied into this repository. It sits beside the
 * checkout (`../shared`) on every development machine and in CI; `MEMEX_SHARED_DIR` points
 * elsewhere. A user's own checkout may not have it: tests that need it are skipped, saying why.
 */
export const sharedRoot = path.resolve(
  process.env.MEMEX_SHARED_DIR ?? path.join(import.meta.dirname, '..', '..', '..', '..', 'shared'),
);

/** Why a test that reads `relative` under the shared folder cannot run here, or false when it can. */
export function sharedSkip(relative = ''): string | false {
  const full = path.join(sharedRoot, relative);
  return fs.existsSync(full) ? false : `needs ${full} (the shared corpus beside the checkout), which is absent`;
}

/** The absolute path of a file or folder under the shared folder; throws when it is absent. */
export function sharedFile(relative: string): string {
  const reason = sharedSkip(relative);
  if (reason) throw new Error(reason);
  return path.join(sharedRoot, relative);
}
