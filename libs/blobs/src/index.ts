import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, existsSync, type ReadStream } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';

const SHA256 = /^[0-9a-f]{64}$/;
/** What the file system says when the disk (or the user's quota) has no room left. */
const NO_SPACE = new Set(['ENOSPC', 'EDQUOT']);

/** A blob that could not be written for want of space; nothing of it was kept. */
export class BlobSpaceError extends Error {
  constructor(
    readonly root: string,
    readonly code: string,
  ) {
    super(`the blob store at ${root} is full (${code}): free space there, then send the items again`);
  }
}

export function sha256(bytes: Uint8Array | string): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/**
 * Content-addressed files under `<root>/ab/cd/<sha256>`. A blob is written (fsynced, renamed
 * into place) before the event that names it is published, so the log never points at nothing.
 */
export class BlobStore {
  /** Directories known to exist, so a batch does not create each blob's again. */
  private readonly directories = new Set<string>();
  /** When a write last failed for want of space, until a write succeeds again. */
  private fullSince: Date | undefined;

  constructor(readonly root: string) {}

  pathOf(hash: string): string {
    if (!SHA256.test(hash)) throw new Error(`not a sha256 blob id: "${hash}"`);
    return path.join(this.root, hash.slice(0, 2), hash.slice(2, 4), hash);
  }

  /** Stores bytes and returns their sha256; storing the same bytes again is a no-op. */
  async put(bytes: Uint8Array): Promise<string> {
    const hash = sha256(bytes);
    if (!(await this.has(hash))) await this.write(hash, bytes);
    return hash;
  }

  /** Stores many blobs (by their sha256) side by side; those already there are skipped. */
  async putAll(blobs: Map<string, Uint8Array>): Promise<void> {
    await Promise.all(
      [...blobs].filter(([hash]) => !existsSync(this.pathOf(hash))).map(([hash, bytes]) => this.write(hash, bytes)),
    );
  }

  /**
   * The store's trouble, if it has one: the disk was full at the last write (a write that
   * succeeds again clears it). A service adds it to its health.
   */
  spaceProblem(): string | undefined {
    return this.fullSince
      ? `the blob store at ${this.root} has been full since ${this.fullSince.toISOString()}: items cannot be stored until space is freed`
      : undefined;
  }

  /**
   * Written to a temp file, flushed, renamed into place: a reader never sees half a blob, and a
   * write that fails (a full disk) leaves nothing behind.
   */
  private async write(hash: string, bytes: Uint8Array): Promise<void> {
    const target = this.pathOf(hash);
    const dir = path.dirname(target);
    const temp = `${target}.${randomBytes(6).toString('hex')}.tmp`;
    try {
      if (!this.directories.has(dir)) {
        await fs.mkdir(dir, { recursive: true });
        this.directories.add(dir);
      }
      const handle = await fs.open(temp, 'wx', 0o600);
      try {
        await handle.writeFile(bytes);
        await handle.datasync();
      } finally {
        await handle.close();
      }
      await fs.rename(temp, target);
    } catch (error) {
      await fs.rm(temp, { force: true });
      const code = (error as NodeJS.ErrnoException).code;
      if (code && NO_SPACE.has(code)) {
        this.fullSince ??= new Date();
        throw new BlobSpaceError(this.root, code);
      }
      throw error;
    }
    this.fullSince = undefined;
  }

  async has(hash: string): Promise<boolean> {
    return fs.access(this.pathOf(hash)).then(
      () => true,
      () => false,
    );
  }

  async get(hash: string): Promise<Buffer> {
    try {
      return await fs.readFile(this.pathOf(hash));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new Error(`blob ${hash} is missing`);
      throw error;
    }
  }

  stream(hash: string): ReadStream {
    return createReadStream(this.pathOf(hash));
  }

  /** Removes a blob for good (deletion is real); missing blobs are fine. */
  async delete(hash: string): Promise<void> {
    await fs.rm(this.pathOf(hash), { force: true });
  }
}
