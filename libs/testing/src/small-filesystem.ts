import { execFileSync } from 'node:child_process';
import fs from 'node:fs';

/** A real file system of a set size mounted at a folder (a tmpfs), to fill up on purpose. */
export interface SmallFilesystem {
  dir: string;
  /** Changes its size in place (tmpfs remount): more room, or less. */
  resize(bytes: number): void;
  /** Unmounts it and removes the folder. */
  unmount(): void;
}

/**
 * Why a small file system cannot be mounted here (mounting needs root), or false when it can.
 * A test that needs one is skipped with this reason.
 */
export function smallFilesystemSkip(): string | false {
  return process.getuid?.() === 0 ? false : 'mounting a small tmpfs needs root, and this test does not run as root';
}

/** Mounts a tmpfs of `bytes` at `dir` (created if missing); throws where mounting is not allowed. */
export function mountSmallFilesystem(dir: string, bytes: number): SmallFilesystem {
  fs.mkdirSync(dir, { recursive: true });
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${bytes},mode=0755`, 'memex-test-tmpfs', dir]);
  return {
    dir,
    resize(size) {
      execFileSync('mount', ['-o', `remount,size=${size}`, dir]);
    },
    unmount() {
      execFileSync('umount', ['--lazy', dir]);
      fs.rmSync(dir, { recursive: true, force: true }); // the empty folder it was mounted on
    },
  };
}
