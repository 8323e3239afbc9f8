import path from 'node:path';
import { promisify } from 'node:util';
import { crc32 } from 'node:zlib';
import yauzl, { type Entry, type ZipFile } from 'yauzl';
import { CHUNK, mount, unmount, type FileStat, type FolderEntry, type MountedTree } from './files.js';
import type { SkippedFile } from './folder.js';

const openZip = promisify<string, yauzl.Options, ZipFile>(yauzl.open);

/** A zip file that cannot be opened: not a zip, or cut short (its list of files is at its end). */
export class UnreadableZip extends Error {
  constructor(
    file: string,
    readonly reason: string,
  ) {
    super(`${file}: ${reason}`);
  }
}

/** The folder a path of the tree is in ('' for its top). */
const parentOf = (name: string) => (path.posix.dirname(name) === '.' ? '' : path.posix.dirname(name));

/** A file of one of the archives: the part it is in and its entry there. */
interface Member {
  part: string;
  zip: ZipFile;
  entry: Entry;
}

const stat = (size: number, mtime: Date, directory: boolean): FileStat => ({
  size,
  mtime,
  mtimeMs: mtime.getTime(),
  isDirectory: () => directory,
  isFile: () => !directory,
});

/**
 * Zip archives read as one folder without unpacking them: Google Takeout splits an export into
 * parts (`takeout-…-001.zip`, `-002.zip`, up to 50 GB each), and a photo's sidecar or album file
 * may be in another part than the photo, so the parts are one tree. Mounted at the first part's
 * path (see files.ts). Members no reader can open (encrypted, an unknown compression, a second
 * copy of a path) are left out of the tree and listed in `skipped`, so an import accounts for them.
 */
export class ZipArchives implements MountedTree {
  /** What no reader can open, by its path in the archives, with why. */
  readonly skipped: SkippedFile[] = [];
  private readonly members = new Map<string, Member>();
  private readonly folders = new Map<string, Map<string, boolean>>([['', new Map()]]);
  private readonly zips: ZipFile[] = [];
  private readonly opened = new Date();

  private constructor(
    readonly path: string,
    private readonly parts: string[],
  ) {}

  /** Opens and mounts the archives (their central directories are read now: a damaged part is refused, naming it). */
  static async open(parts: string[]): Promise<ZipArchives> {
    const archives = new ZipArchives(parts[0]!, parts);
    try {
      for (const part of parts) await archives.add(part);
    } catch (error) {
      archives.close();
      throw error;
    }
    mount(archives);
    return archives;
  }

  private async add(part: string): Promise<void> {
    let zip: ZipFile;
    try {
      zip = await openZip(part, { lazyEntries: true, autoClose: false, decodeStrings: true, validateEntrySizes: true });
    } catch (error) {
      throw new UnreadableZip(part, `it cannot be read as a zip archive (${(error as Error).message})`);
    }
    this.zips.push(zip);
    try {
      for await (const entry of zip.eachEntry()) this.addEntry(part, zip, entry);
    } catch (error) {
      throw new UnreadableZip(part, `its list of files is damaged (${(error as Error).message}); download it again`);
    }
  }

  private addEntry(part: string, zip: ZipFile, entry: Entry): void {
    const name = entry.fileName.replace(/\/+$/, '');
    if (name === '') return;
    this.addFolders(parentOf(name));
    if (entry.fileName.endsWith('/')) return void this.addFolders(name);
    const skip = (reason: string) => this.skipped.push({ key: name, reason });
    const before = this.members.get(name);
    if (before) skip(`in ${path.basename(part)} again (read from ${path.basename(before.part)})`);
    else if (entry.isEncrypted()) skip(`encrypted in ${path.basename(part)}: unpack it with its password`);
    else if (!entry.canDecodeFileData())
      skip(
        `compressed in ${path.basename(part)} with a method memex cannot read (${entry.compressionMethod}): unpack it`,
      );
    else {
      this.members.set(name, { part, zip, entry });
      this.folders.get(parentOf(name))!.set(path.posix.basename(name), false);
    }
  }

  /** A folder and those it is in, as folders of the tree. */
  private addFolders(folder: string): void {
    if (folder === '.' || folder === '' || this.folders.has(folder)) return;
    const parent = parentOf(folder);
    this.addFolders(parent);
    this.folders.set(folder, new Map());
    this.folders.get(parent)!.set(path.posix.basename(folder), true);
  }

  /**
   * What a member's entry in the central directory says of it (null for no member): its CRC-32
   * and sizes, which tell a changed member without inflating it, and how much it inflates to.
   */
  entryOf(file: string): { crc32: number; size: number; compressedSize: number } | null {
    const entry = this.members.get(file)?.entry;
    return entry ? { crc32: entry.crc32, size: entry.uncompressedSize, compressedSize: entry.compressedSize } : null;
  }

  /** The bytes its readable members inflate to, by their entries (yauzl holds each read to its size). */
  get uncompressedBytes(): number {
    let total = 0;
    for (const { entry } of this.members.values()) total += entry.uncompressedSize;
    return total;
  }

  async list(dir: string): Promise<FolderEntry[]> {
    const folder = this.folders.get(dir);
    if (!folder) throw this.missing(dir);
    return [...folder].map(([name, directory]) => ({ name, isDirectory: () => directory, isFile: () => !directory }));
  }

  async stat(file: string): Promise<FileStat> {
    const member = this.members.get(file);
    if (member) return stat(member.entry.uncompressedSize, member.entry.getLastModDate(), false);
    if (this.folders.has(file)) return stat(0, this.opened, true);
    throw this.missing(file);
  }

  async *read(file: string, start: number): AsyncGenerator<Buffer> {
    const member = this.members.get(file);
    if (!member) throw this.missing(file);
    const named = `${this.path}/${file}`;
    let skip = start;
    let read = 0;
    // yauzl checks sizes, not checksums: a damaged member whose data still inflates is caught here.
    let checksum = 0;
    try {
      const stream = await member.zip.openReadStreamPromise(member.entry);
      stream.on('error', () => undefined); // surfaced by the iteration below
      try {
        let pending: Buffer[] = [];
        let size = 0;
        for await (const chunk of stream as AsyncIterable<Buffer>) {
          read += chunk.length;
          checksum = crc32(chunk, checksum);
          if (skip >= chunk.length) {
            skip -= chunk.length;
            continue;
          }
          pending.push(skip > 0 ? chunk.subarray(skip) : chunk);
          size += pending[pending.length - 1]!.length;
          skip = 0;
          // Inflate gives 16 KB at a time: handed on in chunks of about `CHUNK`, as a file's are.
          if (size >= CHUNK) {
            yield Buffer.concat(pending);
            pending = [];
            size = 0;
          }
        }
        if (checksum !== member.entry.crc32) throw new Error('its checksum does not match (CRC-32)');
        if (size > 0) yield Buffer.concat(pending);
      } finally {
        stream.destroy();
      }
    } catch (error) {
      throw new Error(
        `${named} (in ${path.basename(member.part)}) is damaged after ${read} bytes: ${(error as Error).message}`,
      );
    }
  }

  private missing(file: string): NodeJS.ErrnoException {
    return Object.assign(
      new Error(`ENOENT: no such file in ${this.parts.map((p) => path.basename(p)).join(', ')}: ${file}`),
      {
        code: 'ENOENT',
      },
    );
  }

  /** Unmounts the tree and closes the archives. */
  close(): void {
    unmount(this);
    for (const zip of this.zips) zip.close();
  }
}
