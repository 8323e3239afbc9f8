import { createReadStream } from 'node:fs';
import fs from 'node:fs/promises';

/**
 * Where listings and readers of exports get their files: the disk, or an archive mounted at its
 * own path (`~/Downloads/takeout-001.zip/Takeout/Mail/…`), read as the folder it would unpack to.
 * A path inside a mounted archive names nothing on disk (a file is no folder), so the two never
 * meet.
 */

/** How much of a file is read at a time. */
export const CHUNK = 1 << 20;

/** An entry of a folder. */
export interface FolderEntry {
  name: string;
  isDirectory(): boolean;
  isFile(): boolean;
  /** On disk: a symbolic link (whose target `files.stat` gives). */
  isSymbolicLink?(): boolean;
}

/** A file's size and time (node's `Stats` has these too). */
export interface FileStat {
  size: number;
  mtime: Date;
  mtimeMs: number;
  isDirectory(): boolean;
  isFile(): boolean;
}

/** A tree of files at a path: paths given to it are relative to that path, with `/` ('' for its top). */
export interface MountedTree {
  readonly path: string;
  list(dir: string): Promise<FolderEntry[]>;
  stat(file: string): Promise<FileStat>;
  /** A file's bytes from `start` on, in chunks. */
  read(file: string, start: number): AsyncIterable<Buffer>;
}

const mounted = new Set<MountedTree>();

/** Serves the tree's files at its path until `unmount`. */
export function mount(tree: MountedTree): void {
  mounted.add(tree);
}

export function unmount(tree: MountedTree): void {
  mounted.delete(tree);
}

/** The mounted tree a path is in, and the path inside it. */
function inTree(file: string): [MountedTree, string] | undefined {
  for (const tree of mounted) {
    if (file === tree.path) return [tree, ''];
    if (file.startsWith(`${tree.path}/`)) return [tree, file.slice(tree.path.length + 1)];
  }
  return undefined;
}

/** Whether a path is inside a mounted archive. */
export function inArchive(file: string): boolean {
  return inTree(file) !== undefined;
}

export const files = {
  async list(dir: string): Promise<FolderEntry[]> {
    const found = inTree(dir);
    return found ? found[0].list(found[1]) : fs.readdir(dir, { withFileTypes: true });
  },

  async stat(file: string): Promise<FileStat> {
    const found = inTree(file);
    return found ? found[0].stat(found[1]) : fs.stat(file);
  },

  /** A file's bytes from `start` on, in chunks of up to `CHUNK`. */
  read(file: string, start = 0): AsyncIterable<Buffer> {
    const found = inTree(file);
    return found
      ? found[0].read(found[1], start)
      : (createReadStream(file, { start, highWaterMark: CHUNK }) as AsyncIterable<Buffer>);
  },

  async readFile(file: string): Promise<Buffer> {
    if (!inTree(file)) return fs.readFile(file);
    const chunks: Buffer[] = [];
    for await (const chunk of this.read(file)) chunks.push(chunk);
    return Buffer.concat(chunks);
  },

  /** A file's first `bytes` bytes (fewer when it is shorter). */
  async head(file: string, bytes: number): Promise<Buffer> {
    if (!inTree(file)) {
      const handle = await fs.open(file, 'r');
      try {
        const head = Buffer.alloc(bytes);
        return head.subarray(0, (await handle.read(head, 0, bytes, 0)).bytesRead);
      } finally {
        await handle.close();
      }
    }
    const chunks: Buffer[] = [];
    let read = 0;
    for await (const chunk of this.read(file)) {
      chunks.push(chunk);
      if ((read += chunk.length) >= bytes) break;
    }
    return Buffer.concat(chunks).subarray(0, bytes);
  },
};
