import path from 'node:path';
import { files } from './files.js';
import type { FolderFile, SkippedFile } from './folder.js';

/**
 * Apple Mail keeps a message whose attachments it downloaded apart as `Messages/123.partial.emlx`:
 * each such part is there with its headers and `X-Apple-Content-Length`, but no body; the file is
 * in `Attachments/123/<section>/<name>` beside `Messages` (`<section>` the part's IMAP number,
 * `2` or `1.2`), or, in older stores, `Messages/123.<section>.emlxpart`. The message is sent whole:
 * the parts put back where Mail took them from.
 */

const PARTIAL = /(^|\/)Messages\/(\d+)\.partial\.emlx$/;
/** A file Mail keeps apart from its message: `Attachments/123/2/report.pdf` or `Messages/123.2.emlxpart`. */
const KEPT_APART = /(^|\/)(?:Attachments\/(\d+)\/[\d.]+\/[^/]+|Messages\/(\d+)\.[\d.]+\.emlxpart)$/;

/** Whether a file of a folder is a `.partial.emlx` (see `completePartialEmlx`). */
export const isPartialEmlx = (key: string) => PARTIAL.test(key);

/**
 * The `.partial.emlx` a file Mail keeps apart would belong to (`Attachments/123/2/report.pdf` →
 * `Messages/123.partial.emlx` beside it), or null for any other file. Whether that message is
 * there is the caller's to check.
 */
export function partialEmlxOf(key: string): string | null {
  const match = KEPT_APART.exec(key);
  return match ? `${key.slice(0, match.index + match[1]!.length)}Messages/${match[2] ?? match[3]}.partial.emlx` : null;
}

/**
 * A folder's listing with the files Mail keeps apart from `.partial.emlx` messages taken out of
 * what is sent (each is sent inside its message) and accounted for as skipped, saying so.
 */
export function withAppleMailParts(listed: { files: FolderFile[]; skipped: SkippedFile[] }): {
  files: FolderFile[];
  skipped: SkippedFile[];
} {
  const partials = new Set(listed.files.filter((file) => isPartialEmlx(file.key)).map((file) => file.key));
  const messageOf = (key: string) => {
    const message = partialEmlxOf(key);
    return message !== null && partials.has(message) ? message : undefined;
  };
  const partOf = (message: string) => `a part of the Apple Mail message ${message}, sent inside it`;
  const files: FolderFile[] = [];
  const skipped = listed.skipped.map(({ key, reason }) => {
    const message = messageOf(key);
    return { key, reason: message ? partOf(message) : reason };
  });
  for (const file of listed.files) {
    const message = messageOf(file.key);
    if (message) skipped.push({ key: file.key, reason: partOf(message) });
    else files.push(file);
  }
  return { files, skipped };
}

/** Where a line ends in these bytes: `\r\n` or `\n`. */
const newlineOf = (bytes: Buffer) => (bytes.includes('\r\n') ? '\r\n' : '\n');

/**
 * The end of a part's header (the blank line after it), and where its body starts. A part whose
 * body is empty ends with its header's line break: the blank line's is the boundary's (RFC 2046).
 */
function headerEnd(part: Buffer): { header: number; body: number; blank: boolean } | null {
  const text = part.toString('latin1');
  const match = /\r?\n\r?\n/.exec(text);
  if (match) return { header: match.index, body: match.index + match[0].length, blank: true };
  const last = /\r?\n$/.exec(text);
  return last ? { header: last.index, body: text.length, blank: false } : null;
}

/** A header field of a part, unfolded, or undefined. */
function field(header: string, name: string): string | undefined {
  const match = new RegExp(`^${name}:[ \\t]*(.*(?:\\r?\\n[ \\t].*)*)`, 'im').exec(header);
  return match?.[1]!.replace(/\r?\n[ \t]+/g, ' ').trim();
}

/** The part's bytes in the encoding its header names: base64 in lines of 76, else as they are. */
function encoded(content: Buffer, encoding: string | undefined, newline: string): Buffer {
  if (encoding?.toLowerCase() !== 'base64') return content;
  return Buffer.from(`${content.toString('base64').replace(/.{76}(?=.)/g, `$&${newline}`)}${newline}`);
}

/**
 * The part with every body Mail kept apart put back (`find` gives a file by its IMAP section),
 * its other bytes as they were; counts what was put back and what was not found.
 */
async function fill(
  part: Buffer,
  section: number[],
  find: (section: string) => Promise<Buffer | null>,
  counts: { filled: number; missing: string[] },
): Promise<Buffer> {
  const end = headerEnd(part);
  if (!end) return part;
  const header = part.subarray(0, end.header).toString('latin1');
  const body = part.subarray(end.body);
  const type = field(header, 'content-type') ?? 'text/plain';
  if (/^multipart\//i.test(type)) {
    const boundary = /boundary\s*=\s*(?:"([^"]+)"|([^;\s]+))/i.exec(type);
    if (!boundary) return part;
    const delimiter = `--${boundary[1] ?? boundary[2]}`;
    // Each child is what lies between one delimiter line and the line break before the next.
    const text = body.toString('latin1');
    const lines = [...text.matchAll(new RegExp(`(^|\\r?\\n)${escapeRegExp(delimiter)}(--)?[ \\t]*(?=\\r?\\n|$)`, 'g'))];
    const pieces: Buffer[] = [];
    let at = 0;
    for (const [i, line] of lines.entries()) {
      const next = lines[i + 1];
      const childStart = text.indexOf('\n', line.index + line[0].length) + 1;
      if (line[2] === '--' || !next || childStart === 0) break;
      const childEnd = next.index;
      pieces.push(body.subarray(at, childStart));
      pieces.push(await fill(body.subarray(childStart, childEnd), [...section, i + 1], find, counts));
      at = childEnd;
    }
    pieces.push(body.subarray(at));
    return Buffer.concat([part.subarray(0, end.body), ...pieces]);
  }
  if (field(header, 'x-apple-content-length') === undefined || body.toString('latin1').trim() !== '') return part;
  const number = (section.length > 0 ? section : [1]).join('.');
  const content = await find(number);
  if (!content) {
    counts.missing.push(number);
    return part;
  }
  counts.filled++;
  const newline = newlineOf(part.subarray(0, end.body));
  return Buffer.concat([
    part.subarray(0, end.body),
    // The blank line between header and body, where the empty part had none of its own.
    Buffer.from(end.blank ? '' : newline),
    encoded(content, field(header, 'content-transfer-encoding'), newline),
  ]);
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The first line of an .emlx: the message's length in bytes. */
const LENGTH_LINE = /^[ \t]*(\d{1,12})[ \t]*\r?\n/;

/**
 * A `.partial.emlx` made whole: its parts put back from `Attachments/<n>/<section>/` beside its
 * `Messages` folder (or its `.emlxpart` files), its length line counting them; the property list
 * after the message (read and flagged marks) is kept. A part Mail never downloaded stays empty;
 * `missing` names each by its IMAP section. An .emlx without a length line is given back as it is.
 */
export async function completePartialEmlx(
  bytes: Buffer,
  file: string,
): Promise<{ bytes: Buffer; filled: number; missing: string[] }> {
  const counts = { filled: 0, missing: [] as string[] };
  const line = LENGTH_LINE.exec(bytes.subarray(0, 32).toString('latin1'));
  const stem = /^(\d+)\.partial\.emlx$/.exec(path.basename(file))?.[1];
  if (!line || !stem) return { bytes, ...counts };
  const start = line[0].length;
  const message = bytes.subarray(start, start + Number(line[1]));
  const attachments = path.join(path.dirname(file), '..', 'Attachments', stem);
  const find = async (section: string): Promise<Buffer | null> => {
    const folder = path.join(attachments, section);
    const names = await files.list(folder).catch(() => []);
    const found = names.find((entry) => entry.isFile() && !entry.name.startsWith('.'));
    if (found) return files.readFile(path.join(folder, found.name));
    return files.readFile(path.join(path.dirname(file), `${stem}.${section}.emlxpart`)).catch(() => null);
  };
  const whole = await fill(message, [], find, counts);
  const newline = line[0].endsWith('\r\n') ? '\r\n' : '\n';
  return {
    bytes: Buffer.concat([Buffer.from(`${whole.length}${newline}`), whole, bytes.subarray(start + message.length)]),
    ...counts,
  };
}
