import fs from 'node:fs/promises';
import path from 'node:path';

/**
 * Where an item's bytes live when the memex does not keep them (seed §4.1 `location_ref`): a
 * `scheme:rest` string. `file:/abs/path` is a file on the memex host; `worker:<name>:/abs/path` is a
 * file on a worker, fetched over NATS. The memex never copies such bytes into the blob store; it
 * reads them for extraction and serves them through memex.items.content.
 */
export type Location = string;

export interface LocationStat {
  size: number;
  modifiedAt: Date;
}

/** How one scheme reads: `rest` is the location without its `scheme:`. */
export interface SchemeReader {
  stat(rest: string): Promise<LocationStat>;
  /** Up to `length` bytes from `offset` (fewer at the end). */
  read(rest: string, offset: number, length: number): Promise<Buffer>;
}

/** The bytes cannot be read now (a file gone, a volume unmounted, a worker away): not a bad request. */
export class LocationUnreachable extends Error {
  constructor(
    readonly location: Location,
    readonly why: string,
  ) {
    super(`${location} cannot be read: ${why}`);
    this.name = 'LocationUnreachable';
  }
}

/** A location that is not well formed (unknown scheme, relative path): the sender's mistake. */
export class InvalidLocation extends Error {
  constructor(
    readonly location: string,
    why: string,
  ) {
    super(`location ${JSON.stringify(location)} ${why}`);
    this.name = 'InvalidLocation';
  }
}

const SCHEME = /^([a-z][a-z0-9+.-]*):(.+)$/s;

export function parseLocation(location: string): { scheme: string; rest: string } {
  const match = SCHEME.exec(location);
  if (!match) throw new InvalidLocation(location, 'must be scheme:rest, e.g. file:/home/me/photos/a.jpg');
  return { scheme: match[1]!, rest: match[2]! };
}

/** The `file:` location of a path on this host (made absolute and normalized). */
export function fileLocation(filePath: string): Location {
  return `file:${path.resolve(filePath)}`;
}

/**
 * Whether `location` is `prefix` or lies under it. A prefix names one file, or a folder when it
 * ends with `/` (`file:/photos/` covers `file:/photos/a.jpg`, never `file:/photos2/a.jpg`).
 */
export function isWithin(location: Location, prefix: Location): boolean {
  return prefix.endsWith('/') ? location.startsWith(prefix) : location === prefix;
}

/** Why a file cannot be read, in words (the errno names what an operator looks up). */
function fileProblem(error: unknown): string | null {
  const code = (error as NodeJS.ErrnoException).code;
  switch (code) {
    case 'ENOENT':
      return 'no such file (ENOENT): it was moved or deleted, or its volume is not mounted';
    case 'ENOTDIR':
      return 'a folder on its path is now a file (ENOTDIR)';
    case 'EACCES':
    case 'EPERM':
      return `the memex may not read it (${code})`;
    case 'EIO':
    case 'ENXIO':
    case 'ESTALE':
    case 'EHOSTDOWN':
      return `its volume does not answer (${code})`;
    default:
      return null;
  }
}

/** `file:` — an absolute path on the memex host. */
export const fileScheme: SchemeReader = {
  async stat(rest) {
    const stat = await fileCall(rest, () => fs.stat(rest));
    if (!stat.isFile()) throw new LocationUnreachable(`file:${rest}`, 'it is not a regular file');
    return { size: stat.size, modifiedAt: stat.mtime };
  },
  async read(rest, offset, length) {
    const handle = await fileCall(rest, () => fs.open(rest, 'r'));
    try {
      const buffer = Buffer.alloc(length);
      const { bytesRead } = await fileCall(rest, () => handle.read(buffer, 0, length, offset));
      return buffer.subarray(0, bytesRead);
    } finally {
      await handle.close();
    }
  },
};

async function fileCall<T>(rest: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    const why = fileProblem(error);
    if (why === null) throw error;
    throw new LocationUnreachable(`file:${rest}`, why);
  }
}

function checkFilePath(location: string, rest: string): void {
  if (!path.isAbsolute(rest) || path.normalize(rest) !== rest || rest.includes('\0'))
    throw new InvalidLocation(location, 'must name an absolute, normalized path (file:/abs/path)');
}

/** Reads any location through the scheme registered for it. */
export class Locations {
  private readonly schemes = new Map<string, SchemeReader>();

  register(scheme: string, reader: SchemeReader): this {
    this.schemes.set(scheme, reader);
    return this;
  }

  /** Throws InvalidLocation unless a registered scheme can read it. */
  check(location: string): { scheme: string; rest: string; reader: SchemeReader } {
    const { scheme, rest } = parseLocation(location);
    const reader = this.schemes.get(scheme);
    if (!reader) {
      throw new InvalidLocation(
        location,
        `has scheme "${scheme}:", which this memex cannot read (it reads ${[...this.schemes.keys()].map((s) => `${s}:`).join(', ')})`,
      );
    }
    if (scheme === 'file') checkFilePath(location, rest);
    return { scheme, rest, reader };
  }

  async stat(location: Location): Promise<LocationStat> {
    const { rest, reader } = this.check(location);
    return reader.stat(rest);
  }

  async read(location: Location, offset: number, length: number): Promise<Buffer> {
    const { rest, reader } = this.check(location);
    return reader.read(rest, offset, length);
  }

  /** The whole content, refused past `limitBytes` (before reading it) with the size in the message. */
  async readAll(location: Location, limitBytes: number): Promise<Buffer> {
    const { rest, reader } = this.check(location);
    const { size } = await reader.stat(rest);
    if (size > limitBytes) throw new TooLarge(location, size, limitBytes);
    const bytes = await reader.read(rest, 0, size);
    // It changed while read: the caller tries again later rather than storing a torn read.
    if (bytes.length !== size) throw new LocationUnreachable(location, 'it changed while being read');
    return bytes;
  }
}

export class TooLarge extends Error {
  constructor(
    readonly location: Location,
    readonly size: number,
    readonly limitBytes: number,
  ) {
    super(`${location} has ${size} bytes; at most ${limitBytes} are read`);
    this.name = 'TooLarge';
  }
}

/**
 * The locations a memex service reads. `file:` is built in; a scheme that needs a connection
 * (`worker:` over NATS) is registered by whoever builds it on the instance a service gets from here.
 */
export function memexLocations(): Locations {
  return new Locations().register('file', fileScheme);
}
export * from './worker.js';
