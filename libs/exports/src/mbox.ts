import { createHash, type Hash } from 'node:crypto';
import path from 'node:path';
import { files } from './files.js';
import { HEADER_FIELD, walkFolder, zipAsFolder, type SkippedFile } from './folder.js';
import { CorruptGzip, gunzipped, isGzip } from './gzip.js';

/** One message of an mbox, with where it starts and ends in the file. */
export interface MboxMessage {
  /** Byte offset of its `From ` line: the message's place in the archive. */
  offset: number;
  /** Byte offset just after it: where the next message's `From ` line starts (or the end of the file). */
  end: number;
  /** The RFC 822 message, mboxrd-unescaped, without the `From ` line and the blank line before the next one. */
  bytes: Buffer;
  /** The date on the `From ` line (when the message arrived), if it has a readable one. */
  received: string | null;
  /** The `From ` line's first word (an address; Google Takeout writes the Gmail message id there: `1612345678901234567@xxx`). */
  sender: string | null;
}

const FROM = Buffer.from('From ');
const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
/**
 * `From sender Sat Jan  3 01:05:34 1996` (asctime), optionally with a zone before the year; the
 * sender may be `alice at example.com`, as Mailman's pipermail archives write it.
 */
const SEPARATOR_DATE =
  /^From (?:\S+ at \S+|\S+)\s+[A-Za-z]{3}\s+([A-Za-z]{3})\s+(\d{1,2})\s+(\d{1,2}):(\d{2})(?::(\d{2}))?\s+(?:\S+\s+)?(\d{4})\s*$/;

/** What a separator looks like: `From <sender>`, alone or with a date (a time of day in it). */
const SEPARATOR_SHAPE = /^From \S+(?:[ \t]+.*\d{1,2}:\d{2}.*)?[ \t]*\r?\n?$/;
const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

function startsWithFrom(line: Buffer): boolean {
  return line.length >= 5 && line.compare(FROM, 0, 5, 0, 5) === 0;
}

function isBlank(line: Buffer): boolean {
  return (
    line.length === 0 ||
    (line.length === 1 && line[0] === 0x0a) ||
    (line.length === 2 && line[0] === 0x0d && line[1] === 0x0a)
  );
}

/** A `>From `, `>>From `… line (mboxrd-escaped): one `>` comes off. */
function isEscapedFrom(line: Buffer): boolean {
  let i = 0;
  while (i < line.length && line[i] === 0x3e) i++;
  return i > 0 && line.length - i >= 5 && line.compare(FROM, 0, 5, i, i + 5) === 0;
}

/** The `From ` line's date as ISO (taken as UTC: the line carries no reliable zone), or null. */
export function separatorDate(line: string): string | null {
  const m = SEPARATOR_DATE.exec(line.trimEnd());
  if (!m) return null;
  const month = MONTHS.indexOf(m[1]!.toLowerCase());
  if (month < 0) return null;
  const date = new Date(Date.UTC(Number(m[6]), month, Number(m[2]), Number(m[3]), Number(m[4]), Number(m[5] ?? 0)));
  return Number.isNaN(date.getTime()) ? null : date.toISOString();
}

/** The `From ` line's sender, its `at` made `@` again where pipermail spelled it out. */
function separatorSender(line: string): string | null {
  const m = /^From (\S+)(?: at (\S+\.\S+)(?=\s+[A-Za-z]{3}\s))?/.exec(line);
  if (!m) return null;
  return m[2] ? `${m[1]}@${m[2]}` : m[1]!;
}

/**
 * Splits an mbox into messages as a stream: the file is read in chunks and only one message is
 * held at a time, so an archive of any size fits. A message starts at a `From ` line that begins
 * the file (after a byte-order mark, if any), that has the asctime date of a real separator, or
 * that looks like one (`From <sender>`, alone or with a time) and is followed by a header field:
 * mboxo and mboxrd, Netscape's `From - ` lines with no date and no blank line before them, archives
 * written without the blank line. An unescaped body line (`From Russia with love`, even after a
 * blank line) stays in the body, where Python's mailbox would split. `>From ` lines are unescaped
 * (mboxrd). Starts at `fromOffset`, which must be the offset of a `From ` line (the `end` of a
 * message read before). A gzipped mbox (`.mbox.gz`, a list archive's `.txt.gz`) is read as it is
 * decompressed, its offsets counting decompressed bytes.
 */
export async function* readMbox(file: string, fromOffset = 0): AsyncGenerator<MboxMessage> {
  let message: { offset: number; received: string | null; sender: string | null; lines: Buffer[] } | null = null;
  let carry = Buffer.alloc(0);
  let carryOffset = fromOffset;
  const ready: MboxMessage[] = [];

  const finish = (end: number) => {
    if (!message) return;
    const lines = message.lines;
    // The blank line before the next `From ` belongs to the mbox, not to the message.
    if (lines.length > 0 && isBlank(lines[lines.length - 1]!)) lines.pop();
    ready.push({
      offset: message.offset,
      end,
      bytes: Buffer.concat(lines),
      received: message.received,
      sender: message.sender,
    });
    message = null;
  };

  /** A `From ` line that is a separator only if the next line is a header field. */
  let maybe: { bytes: Buffer; offset: number } | null = null;

  const start = (bytes: Buffer, offset: number) => {
    finish(offset);
    const line = bytes.toString('latin1');
    message = { offset, received: separatorDate(line), sender: separatorSender(line), lines: [] };
  };

  const line = (bytes: Buffer, offset: number) => {
    if (offset === 0 && bytes.subarray(0, 3).equals(BOM)) bytes = bytes.subarray(3);
    const candidate = maybe as { bytes: Buffer; offset: number } | null;
    if (candidate) {
      maybe = null;
      if (HEADER_FIELD.test(bytes.subarray(0, 200).toString('latin1'))) start(candidate.bytes, candidate.offset);
      else body(candidate.bytes, candidate.offset);
    }
    if (startsWithFrom(bytes)) {
      const text = bytes.toString('latin1');
      if (message === null || separatorDate(text) !== null) {
        start(bytes, offset);
        return;
      }
      if (SEPARATOR_SHAPE.test(text)) {
        maybe = { bytes, offset };
        return;
      }
    }
    body(bytes, offset);
  };

  const body = (bytes: Buffer, offset: number) => {
    if (!message) {
      const where =
        offset === 0 ? 'it does not start with a "From " line' : `there is no "From " line at byte ${offset}`;
      throw new Error(`${file} is not an mbox (or not at this position): ${where}`);
    }
    message.lines.push(isEscapedFrom(bytes) ? bytes.subarray(1) : bytes);
  };

  for await (const chunk of mboxBytes(file, fromOffset)) {
    const buffer = carry.length > 0 ? Buffer.concat([carry, chunk]) : chunk;
    let at = 0;
    for (let newline = buffer.indexOf(0x0a, at); newline >= 0; newline = buffer.indexOf(0x0a, at)) {
      line(buffer.subarray(at, newline + 1), carryOffset + at);
      at = newline + 1;
    }
    // Lines point into the chunk; the unfinished tail is copied so the chunk can go.
    carry = Buffer.from(buffer.subarray(at));
    carryOffset += at;
    yield* ready.splice(0);
  }
  if (carry.length > 0) line(carry, carryOffset);
  const last = maybe as { bytes: Buffer; offset: number } | null;
  if (last) body(last.bytes, last.offset);
  finish(carryOffset + carry.length);
  yield* ready.splice(0);
}

/** The mbox's bytes from `from` on (a count of decompressed bytes in a gzipped one). */
async function* mboxBytes(file: string, from: number): AsyncGenerator<Buffer> {
  if (!(await isGzip(file))) {
    yield* files.read(file, from);
    return;
  }
  let skip = from;
  for await (const chunk of gunzipped(file)) {
    if (skip >= chunk.length) skip -= chunk.length;
    else {
      yield skip > 0 ? chunk.subarray(skip) : chunk;
      skip = 0;
    }
  }
}

/**
 * An mbox's length in bytes, decompressed if it is gzipped: what `readMbox`'s offsets count. A
 * gzipped one is read through to count it, so one cut short fails here (CorruptGzip), before any
 * of its messages is sent.
 */
export async function mboxSize(file: string): Promise<number> {
  if (!(await isGzip(file))) return (await files.stat(file)).size;
  let size = 0;
  for await (const chunk of gunzipped(file)) size += chunk.length;
  return size;
}

/**
 * A running sha256 of a file's bytes from its start, taken up to an offset and then on from
 * there: whether the bytes of an mbox before its last message are still those read before (a mail
 * client appending new mail leaves them be), at the cost of hashing them (~0.9 GB/s) rather than
 * splitting and reading every message again (~0.13 GB/s).
 */
export class LeadingDigest {
  private hash: Hash = createHash('sha256');
  private at = 0;

  constructor(private readonly file: string) {}

  /** The sha256 of the file's first `offset` bytes, or null when it has fewer. */
  async through(offset: number): Promise<string | null> {
    if (offset < this.at) {
      this.hash = createHash('sha256');
      this.at = 0;
    }
    if (offset > this.at) {
      for await (const chunk of files.read(this.file, this.at)) {
        const part = chunk.subarray(0, offset - this.at);
        this.hash.update(part);
        this.at += part.length;
        if (this.at === offset) break;
      }
    }
    return this.at === offset ? this.hash.copy().digest('hex') : null;
  }
}

/** An mbox file of a folder tree, with the folder label its place in the tree gives it. */
export interface MboxFile {
  /** Path relative to the tree, with `/` (the file's name for a single mbox). */
  key: string;
  file: string;
  size: number;
  /** `Work/Projects` for Apple Mail's `Work.mbox/Projects.mbox/mbox` or Thunderbird's `Work.sbd/Projects`. */
  folder: string | undefined;
}

/** A folder of Apple Mail's export (`Work.mbox`, holding a file named `mbox`) or of Thunderbird's (`Work.sbd`). */
const MAILBOX_FOLDER = /^(.+)\.(mbox|sbd)$/i;

/**
 * The mbox files under a folder, in a stable order, and the other files skipped with why (so an
 * import accounts for every file): an export of Apple Mail (`Inbox.mbox/mbox`, mailboxes nested
 * as folders), Thunderbird's Local Folders (an mbox per folder, named as the folder, subfolders in
 * `.sbd` folders, beside `.msf` indexes) or a folder of `.mbox` files. A file is an mbox when it
 * starts with a `From ` line (after a byte-order mark), whatever its name. Each one's folder label
 * is its path without those suffixes: the folder it stands for.
 */
export async function listMboxTree(root: string): Promise<{ mboxes: MboxFile[]; skipped: SkippedFile[] }> {
  const mboxes: MboxFile[] = [];
  const rootFolder = MAILBOX_FOLDER.exec(path.basename(root))?.[1];
  const skipped = await walkFolder(root, async ({ file, key, stat }, skip) => {
    const mbox = await mboxOfTree(file, key, stat.size, rootFolder);
    if ('skipped' in mbox) skip(mbox.skipped);
    else mboxes.push(mbox);
  });
  return { mboxes, skipped };
}

/**
 * A file at `key` in a folder tree as an mbox to read, with its size (decompressed) and the
 * folder label its place gives it (under `rootFolder`, the tree's own), or why it is none.
 */
export async function mboxOfTree(
  file: string,
  key: string,
  bytes: number,
  rootFolder?: string,
): Promise<MboxFile | { skipped: string }> {
  if (bytes === 0) return { skipped: 'an empty file (an mbox with no messages)' };
  // A file that cannot be read (a damaged member of a zip, no permission) is skipped, saying why.
  const why = await notAnMbox(file).catch((error: unknown) => (error as Error).message);
  if (why) return { skipped: why };
  // A cut-short download is skipped whole, saying so: its messages would be read up to the cut.
  const size = await mboxSize(file).catch((error: unknown) =>
    error instanceof CorruptGzip ? error : Promise.reject(error),
  );
  if (size instanceof CorruptGzip) return { skipped: size.reason };
  return { key, file, size, folder: mboxFolder(key, rootFolder) };
}

/**
 * The folder an mbox at `key` in a tree stands for (under `rootFolder`, the tree's own):
 * `Work/Projects` for Apple Mail's `Work.mbox/Projects.mbox/mbox`, Thunderbird's
 * `Work.sbd/Projects` or `Work/Projects.mbox`.
 */
export function mboxFolder(key: string, rootFolder?: string): string | undefined {
  const [name, ...parents] = key.split('/').reverse();
  const folders = parents.reverse().map((folder) => MAILBOX_FOLDER.exec(folder)?.[1] ?? zipAsFolder(folder));
  // Apple Mail's `Work.mbox/mbox` is the folder's own file; elsewhere the file is a folder.
  const own = name === 'mbox' ? [] : [name!.replace(/\.gz$/i, '').replace(/\.(mbox|mbx|txt)$/i, '')];
  return [...(rootFolder ? [rootFolder] : []), ...folders, ...own].join('/') || undefined;
}

/** Why a file is not an mbox we can read, or null when it starts as one. */
async function notAnMbox(file: string): Promise<string | null> {
  let start: Buffer = Buffer.alloc(0);
  if (await isGzip(file)) {
    try {
      for await (const chunk of gunzipped(file)) {
        start = chunk;
        break;
      }
    } catch {
      return 'gzipped, but its gzip data is corrupt';
    }
  } else {
    start = await files.head(file, 8);
  }
  return startsWithFrom(start.subarray(0, 3).equals(BOM) ? start.subarray(3) : start)
    ? null
    : 'not an mbox: it does not start with a From line';
}

/** Thunderbird's flags in `X-Mozilla-Status` (hex): read, marked (its star), deleted but not yet compacted away. */
const MOZILLA_READ = 0x0001;
const MOZILLA_MARKED = 0x0004;
const MOZILLA_EXPUNGED = 0x0008;

/** Read and starred as a mail client marked a message in its own header; each only where a header says. */
export interface ClientMarks {
  read?: boolean;
  starred?: boolean;
  /** Deleted in Thunderbird, still in the file until the folder is compacted. */
  expunged?: boolean;
}

/**
 * The marks mbox clients keep in a message's header, rewritten in place as it is read or flagged:
 * Thunderbird's `X-Mozilla-Status`, else mutt's and Pine's `Status` (`R` read, `O` seen but
 * unread) and `X-Status` (`F` flagged). `field` gives a header field's value by its name.
 */
export function clientMarks(field: (name: string) => string | undefined): ClientMarks {
  const mozilla = field('x-mozilla-status')?.trim();
  if (mozilla && /^[0-9a-f]{1,4}$/i.test(mozilla)) {
    const bits = Number.parseInt(mozilla, 16);
    return {
      read: (bits & MOZILLA_READ) !== 0,
      starred: (bits & MOZILLA_MARKED) !== 0,
      expunged: (bits & MOZILLA_EXPUNGED) !== 0,
    };
  }
  const status = field('status')?.trim();
  const xStatus = field('x-status')?.trim();
  return {
    ...(status ? { read: status.includes('R') } : {}),
    ...(xStatus ? { starred: xStatus.includes('F') } : {}),
  };
}
