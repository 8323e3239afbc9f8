import { createHash } from 'node:crypto';
import { clientMarks, type ClientMarks } from '@memex/exports';
import { archiveOfMember } from './archives.js';
import type { KnownFile } from './files.js';

/**
 * An mbox in a watched folder (Thunderbird's Local Folders, a folder of `.mbox` files) is read as
 * its messages: each is a row of the source's files at `<mbox path>#<id>`, an item of its own,
 * beside the mbox's own row (`mailbox`), which holds the file's size and time.
 *
 * A message's id is a hash of what it says, without the header fields a mail client rewrites in
 * place when the message is read, flagged or tagged (Thunderbird's `X-Mozilla-Status`, mutt's
 * `Status`), so reading mail in the client does not send it again, and a message moved to
 * another mbox keeps its item.
 */

const CLIENT_STATE =
  /^(x-mozilla-status|x-mozilla-status2|x-mozilla-keys|status|x-status|x-keywords|x-uid|content-length|lines)$/i;

export interface MessageIdentity {
  /** 32 hex digits: the same for the same message wherever it is and whatever its client state. */
  id: string;
  /** What its client marked in it: read, starred, deleted but not yet compacted away. */
  marks: ClientMarks;
}

export function messageIdentity(bytes: Buffer): MessageIdentity {
  const end = headerEnd(bytes);
  const hash = createHash('sha256');
  const state = new Map<string, string>();
  for (const field of headerFields(bytes.subarray(0, end).toString('latin1'))) {
    const colon = field.indexOf(':');
    const name = field.slice(0, colon).trim();
    if (!CLIENT_STATE.test(name)) hash.update(field);
    else if (!state.has(name.toLowerCase())) state.set(name.toLowerCase(), field.slice(colon + 1));
  }
  hash.update('\0');
  hash.update(bytes.subarray(end));
  return { id: hash.digest('hex').slice(0, 32), marks: clientMarks((name) => state.get(name)) };
}

/** Read and starred as a message's client marked them, as the row of a message records them (`r1s0`; '' for none). */
export function marksText({ read, starred }: ClientMarks): string {
  return `${read === undefined ? '' : `r${Number(read)}`}${starred === undefined ? '' : `s${Number(starred)}`}`;
}

/** Where a message's header ends: at its first empty line (or the end, for a header alone). */
function headerEnd(bytes: Buffer): number {
  const lf = bytes.indexOf('\n\n');
  const crlf = bytes.indexOf('\n\r\n');
  const ends = [lf, crlf].filter((i) => i >= 0);
  return ends.length > 0 ? Math.min(...ends) + 1 : bytes.length;
}

/** A header's fields, each with its continuation lines. */
function* headerFields(header: string): Generator<string> {
  let field = '';
  for (const line of header.split('\n')) {
    if (/^[ \t]/.test(line) && field) {
      field += `\n${line}`;
      continue;
    }
    if (field) yield field;
    field = line;
  }
  if (field) yield field;
}

/** A message's path among the source's files. */
export function messagePath(mbox: string, id: string): string {
  return `${mbox}#${id}`;
}

/** A message's path: its mbox's, `#`, its id. */
const MESSAGE_PATH = /^(.+)#[0-9a-f]{32}$/;

/** The mbox a message's path is in; null for a file's path. */
export function mboxOfMessage(at: string): string | null {
  return MESSAGE_PATH.exec(at)?.[1] ?? null;
}

/**
 * A source's rows split into the files on disk (plain files, mboxes, archives, refused files) and
 * each mbox's messages (and each zip's or Evernote export's members, see archives.ts) by the mbox's path, known by their paths' shape: also those of an mbox not
 * recorded yet (a scan stopped while reading it), which a scan reads again or finds gone.
 */
export function splitMailboxRows(rows: Iterable<KnownFile>): {
  files: Map<string, KnownFile>;
  messages: Map<string, Map<string, KnownFile>>;
} {
  const files = new Map<string, KnownFile>();
  const messages = new Map<string, Map<string, KnownFile>>();
  for (const row of rows) {
    const mbox = row.mailbox ? null : (mboxOfMessage(row.path) ?? archiveOfMember(row.path));
    if (mbox === null) {
      files.set(row.path, row);
      continue;
    }
    let held = messages.get(mbox);
    if (!held) messages.set(mbox, (held = new Map()));
    held.set(row.path, row);
  }
  return { files, messages };
}
