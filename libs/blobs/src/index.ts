import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, type ReadStream } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';

const SHA256 = /^[0-9a-f]{64}$/;

export function sha256(bytes: Uint8Array | string): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/**
 * Content-addressed files under `<root>/ab/cd/<sha256>`. A blob is written (fsynced, renamed
 * into place) before the event that names it is published, so the log never points at nothing.
 */
export class BlobStore {
  constructor(readonly root: string) {}

  pathOf(hash: string): string {
    if (!SHA256.test(hash)) throw new Error(`not a sha256 blob id: "${hash}"`);
    return path.join(this.root, hash.slice(0, 2), hash.slice(2, 4), hash);
  }

  /** Stores bytes and returns their sha256; storing the same bytes again is a no-op. */
  async put(bytes: Uint8Array): Promise<string> {
    const hash = sha256(bytes);
    const target = this.pathOf(hash);
    if (await this.has(hash)) return hash;
    await fs.mkdir(path.dirname(target), { recursive: true });
    const temp = `${target}.${randomBytes(6).toString('hex')}.tmp`;
    const handle = await fs.open(temp, 'wx', 0o600);
    try {
      await handle.writeFile(bytes);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await fs.rename(temp, target);
    return hash;
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
