import { pipeline, Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import { files } from './files.js';

/** Gzipped files read as they decompress: a mailing list's monthly archive, an exported mbox. */

const GZIP_MAGIC = Buffer.from([0x1f, 0x8b]);
/** Whether the file is gzip-compressed: by its first bytes, whatever its name. */
export async function isGzip(file: string): Promise<boolean> {
  return (await files.head(file, 2)).equals(GZIP_MAGIC);
}

/** The first `bytes` bytes a gzipped file decompresses to (what it has of them when it is corrupt). */
export async function gunzippedHead(file: string, bytes: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let read = 0;
  try {
    for await (const chunk of gunzipped(file)) {
      chunks.push(chunk);
      if ((read += chunk.length) >= bytes) break;
    }
  } catch (error) {
    if (!(error instanceof CorruptGzip)) throw error;
  }
  return Buffer.concat(chunks).subarray(0, bytes);
}

/** A gzipped mbox whose data stops short of its end (a download cut short) or is corrupt. */
export class CorruptGzip extends Error {
  constructor(
    file: string,
    readonly reason: string,
  ) {
    super(`${file}: ${reason}`);
  }
}

/** A gzipped file's decompressed bytes; a cut-short or corrupt one fails (CorruptGzip) after what was readable. */
export async function* gunzipped(file: string): AsyncGenerator<Buffer> {
  let read = 0;
  try {
    const stream = pipeline(Readable.from(files.read(file)), createGunzip(), () => undefined);
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      read += chunk.length;
      yield chunk;
    }
  } catch (error) {
    const why = (error as Error).message;
    throw new CorruptGzip(
      file,
      `its gzip data is cut short or corrupt after ${read} bytes (${why}): download it again`,
    );
  }
}
