import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * The bytes ffmpeg writes from `args` (its inputs, codecs and metadata) into a temporary file
 * named `name`, whose extension picks the container unless `args` name one (`-f`). Needs ffmpeg.
 */
export async function ffmpegFile(name: string, args: string[]): Promise<Buffer> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'memex-ffmpeg-'));
  try {
    const file = path.join(dir, name);
    await run('ffmpeg', ['-y', '-loglevel', 'error', ...args, file]);
    return await fs.readFile(file);
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
}
