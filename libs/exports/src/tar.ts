import { createReadStream } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { createGunzip } from 'node:zlib';
import type { SkippedFile } from './folder.js';

/** A `.tgz`, `.tar.gz` or `.tar`: what `unpackTar` reads. */
export const TAR_FILE = /\.(tgz|tar\.gz|tar)$/i;

const BLOCK = 512;
/** Headers about the next member: a GNU long name (L) or link name (K), pax records for it (x) or for all (g). */
const ABOUT_NEXT = new Set(['L', 'K', 'x', 'g']);

/** A tar archive that cannot be read through: damaged, or cut short. */
export class UnreadableTar extends Error {
  constructor(file: string, reason: string) {
    super(`${file}: ${reason}`);
  }
}

/** One header's fields (ustar, with GNU and pax long names and sizes applied). */
interface Header {
  name: string;
  size: number;
  type: string;
  mtime: Date;
}

/**
 * Unpacks a tar archive (gzipped or not) into `into`, streaming: its files and folders, with their
 * times. What cannot be unpacked safely is left out and returned, with why: a link (it could point
 * anywhere on the disk), a path out of the folder (`../`, absolute), a device or other special file.
 * A damaged or cut short archive fails, naming it, after unpacking what came before.
 */
export async function unpackTar(archive: string, into: string): Promise<SkippedFile[]> {
  const skipped: SkippedFile[] = [];
  const input = createReadStream(archive);
  const stream = /\.tar$/i.test(archive) ? input : input.pipe(createGunzip());
  input.on('error', (error) => stream.destroy(error));
  let pending: Buffer = Buffer.alloc(0);
  let header: Header | null = null;
  let longName: string | null = null;
  let pax: Record<string, string> = {};
  let file: fs.FileHandle | null = null;
  let left = 0;
  let padding = 0;
  let ended = false;
  let data: Buffer[] = [];
  const fail = (reason: string) => new UnreadableTar(path.basename(archive), reason);

  /** Where a member goes, or why it does not. */
  const target = (name: string): string | null => {
    const normal = path.posix.normalize(name.replace(/\\/g, '/')).replace(/\/+$/, '');
    if (normal === '.' || normal === '') return null;
    if (path.posix.isAbsolute(normal) || normal === '..' || normal.startsWith('../')) return null;
    return path.join(into, normal);
  };

  const startMember = async (h: Header): Promise<void> => {
    left = h.size;
    padding = (BLOCK - (h.size % BLOCK)) % BLOCK;
    if (ABOUT_NEXT.has(h.type)) return;
    const to = target(h.name);
    const isFile = h.type === '0' || h.type === '\0' || h.type === '7';
    if (h.type === '5') {
      if (to) await fs.mkdir(to, { recursive: true });
      else if (h.name.replace(/\/+$/, '') !== '.') skipped.push({ key: h.name, reason: 'a path out of the archive' });
    } else if (!isFile) {
      const what = h.type === '1' || h.type === '2' ? 'a link' : `a special file (type ${h.type})`;
      skipped.push({ key: h.name, reason: `${what} in the archive: not unpacked` });
    } else if (!to) skipped.push({ key: h.name, reason: 'a path out of the archive: not unpacked' });
    else {
      try {
        await fs.mkdir(path.dirname(to), { recursive: true });
        file = await fs.open(to, 'w');
      } catch (error) {
        // A name this file system cannot hold is that member's problem; a full or read-only disk is the archive's.
        const code = (error as NodeJS.ErrnoException).code;
        if (code !== 'ENAMETOOLONG' && code !== 'EILSEQ' && code !== 'EINVAL') throw error;
        skipped.push({ key: h.name, reason: `a name this disk cannot hold (${code}): not unpacked` });
      }
    }
  };

  const endMember = async (h: Header): Promise<void> => {
    if (file) {
      await file.close();
      file = null;
      const to = target(h.name)!;
      await fs.utimes(to, h.mtime, h.mtime);
    }
  };

  for await (const chunk of chunksOf(stream as AsyncIterable<Buffer>, fail)) {
    if (ended) break;
    pending = pending.length > 0 ? Buffer.concat([pending, chunk]) : chunk;
    let at = 0;
    while (!ended) {
      if (header) {
        // A member's data: to its file, or kept (a long name, pax records), or passed over.
        const take = Math.min(left, pending.length - at);
        if (take > 0) {
          const part = pending.subarray(at, at + take);
          if (file) await (file as fs.FileHandle).write(part);
          else if (ABOUT_NEXT.has(header.type)) data.push(Buffer.from(part));
          at += take;
          left -= take;
        }
        if (left > 0) break;
        const skip = Math.min(padding, pending.length - at);
        at += skip;
        padding -= skip;
        if (padding > 0) break;
        if (header.type === 'L') longName = Buffer.concat(data).toString('utf8').replace(/\0.*$/s, '');
        else if (header.type === 'x') pax = paxRecords(Buffer.concat(data));
        else await endMember(header);
        data = [];
        header = null;
        continue;
      }
      if (pending.length - at < BLOCK) break;
      const block = pending.subarray(at, at + BLOCK);
      at += BLOCK;
      if (block.every((byte) => byte === 0)) {
        ended = true;
        break;
      }
      const read = readHeader(block);
      if (!read) throw fail('it is damaged (a header does not add up): download it again');
      const h: Header = {
        ...read,
        name: pax.path ?? longName ?? read.name,
        size: pax.size !== undefined ? Number(pax.size) : read.size,
      };
      if (!ABOUT_NEXT.has(read.type)) {
        longName = null;
        pax = {};
      }
      header = h;
      await startMember(h);
    }
    pending = pending.subarray(at);
  }
  if (file) await (file as fs.FileHandle).close();
  if (!ended && (header || pending.length > 0)) throw fail('it is cut short: download it again');
  return skipped;
}

/** The archive's bytes; gzip failing (a download cut short, a damaged copy) fails as the archive's. */
async function* chunksOf(stream: AsyncIterable<Buffer>, fail: (reason: string) => Error): AsyncGenerator<Buffer> {
  try {
    yield* stream;
  } catch (error) {
    if (!String((error as NodeJS.ErrnoException).code ?? '').startsWith('Z_')) throw error;
    throw fail(`it is cut short or damaged (${(error as Error).message}): download it again`);
  }
}

/** A ustar header block, or null when its checksum does not match. */
function readHeader(block: Buffer): Header | null {
  const field = (at: number, length: number) =>
    block
      .subarray(at, at + length)
      .toString('utf8')
      .replace(/\0.*$/s, '');
  const checksum = Number.parseInt(field(148, 8).trim(), 8);
  let sum = 0;
  for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 0x20 : block[i]!;
  if (sum !== checksum) return null;
  const prefix = field(257, 6).startsWith('ustar') ? field(345, 155) : '';
  const name = field(0, 100);
  return {
    name: prefix ? `${prefix}/${name}` : name,
    size: numeric(block.subarray(124, 136)),
    type: String.fromCharCode(block[156]!),
    mtime: new Date(numeric(block.subarray(136, 148)) * 1000),
  };
}

/** An octal field, or a base-256 one (its first byte's high bit set: sizes past 8 GB). */
function numeric(bytes: Buffer): number {
  if (bytes[0]! & 0x80) {
    let value = bytes[0]! & 0x7f;
    for (let i = 1; i < bytes.length; i++) value = value * 256 + bytes[i]!;
    return value;
  }
  return Number.parseInt(bytes.toString('latin1').replace(/\0.*$/s, '').trim() || '0', 8);
}

/** A pax extended header's records: `<length> <key>=<value>\n`. */
function paxRecords(data: Buffer): Record<string, string> {
  const records: Record<string, string> = {};
  let at = 0;
  while (at < data.length) {
    const space = data.indexOf(0x20, at);
    if (space < 0) break;
    const length = Number.parseInt(data.subarray(at, space).toString('latin1'), 10);
    if (!(length > 0)) break;
    const record = data.subarray(space + 1, at + length - 1).toString('utf8');
    const equals = record.indexOf('=');
    if (equals > 0) records[record.slice(0, equals)] = record.slice(equals + 1);
    at += length;
  }
  return records;
}
