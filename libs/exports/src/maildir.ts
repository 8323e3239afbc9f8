import path from 'node:path';
import { files } from './files.js';
import type { SkippedFile } from './folder.js';

/** One message file of a Maildir tree. */
export interface MaildirMessage {
  /** Stable across flag changes and moves between new/ and cur/: `<folder>/<unique name>`. */
  key: string;
  file: string;
  folder: string;
  read: boolean;
  starred: boolean;
  /** Delivery time from the unique name's leading timestamp, if it has one. */
  received: string | null;
}

/** Files mail servers and clients keep beside the messages (Dovecot, Courier, Maildir++, locks). */
const METADATA = /^(dovecot[.-]|courierimap|maildirfolder$|maildirsize$|subscriptions$|.*\.lock$)/i;

/**
 * The folder a maildir directory stands for: the root is INBOX; Maildir++ subfolders (`.Sent`,
 * `.Work.2009`) and nested maildirs (`Work/2009`) keep their names with `/` between levels.
 */
export function folderName(relative: string): string {
  if (relative === '') return 'INBOX';
  return relative
    .split(/[/\\]/)
    .flatMap((part) => (part.startsWith('.') ? part.slice(1).split('.') : [part]))
    .filter(Boolean)
    .join('/');
}

/** `unique:2,FS` → the unique part and its flags (S seen, F flagged); `!` separates on some filesystems. */
export function parseMaildirName(name: string): { unique: string; flags: string } {
  const match = /^(.*?)[:!]2,([A-Za-z]*)$/.exec(name);
  return match ? { unique: match[1]!, flags: match[2]! } : { unique: name, flags: '' };
}

function deliveryTime(unique: string): string | null {
  const seconds = /^(\d{9,11})\./.exec(unique)?.[1];
  return seconds ? new Date(Number(seconds) * 1000).toISOString() : null;
}

/** The subfolders of a Maildir folder: a message is delivered into `tmp/`, then `new/`, then seen in `cur/`. */
export const MAILDIR_SUBFOLDERS: ReadonlySet<string> = new Set(['tmp', 'new', 'cur']);

/** What a message file's place in a Maildir says about it (see `maildirMessage`). */
export interface MaildirPlace {
  /** The folder it is in: `INBOX` for the Maildir itself, `Work/2009` for `.Work.2009`. */
  folder: string;
  read: boolean;
  starred: boolean;
  /** Flagged `T`: moved to the trash by the client, to be expunged. */
  trashed: boolean;
  received: string | null;
}

/**
 * A file at `key` (a path with `/`, relative to a Maildir or a folder holding Maildirs) as a
 * Maildir message: in a `new/` or `cur/` folder, with its folder from the path above (Maildir++
 * or nested) and its flags from its name (`…:2,FS`: seen, flagged; mail in `new/` is unseen).
 * Null for any other file, and for a delivery not finished (`tmp/`).
 */
export function maildirMessage(key: string): MaildirPlace | null {
  const parts = key.split('/');
  const sub = parts.at(-2);
  if (sub !== 'new' && sub !== 'cur') return null;
  const { unique, flags } = parseMaildirName(parts.at(-1)!);
  return {
    folder: folderName(parts.slice(0, -2).join('/')),
    read: sub === 'cur' && flags.includes('S'),
    starred: flags.includes('F'),
    trashed: flags.includes('T'),
    received: deliveryTime(unique),
  };
}

/**
 * Every file under a Maildir root, in a stable order (folder, then name), as a message or a skip
 * with its reason. Messages are the files of `new/` and `cur/`, and files outside them that are
 * not known metadata (an MH-style folder, a loose message copied in by hand): the server says
 * whether those are messages. Folders nest at any depth, Maildir++ or not.
 */
export async function listMaildir(root: string): Promise<{ messages: MaildirMessage[]; skipped: SkippedFile[] }> {
  const messages: MaildirMessage[] = [];
  const skipped: SkippedFile[] = [];
  const visit = async (dir: string) => {
    const entries = await files.list(dir);
    const relative = path.relative(root, dir);
    const folder = folderName(relative);
    const keyOf = (...parts: string[]) =>
      path
        .join(relative, ...parts)
        .split(path.sep)
        .join('/');
    const add = (file: string, name: string, sub: 'new' | 'cur' | null) => {
      const { unique, flags } = parseMaildirName(name);
      messages.push({
        key: `${folder}/${unique}`,
        file,
        folder,
        // Mail in new/ has not been seen by any client yet; a loose file says nothing (taken as read).
        read: sub === null || (sub === 'cur' && flags.includes('S')),
        starred: flags.includes('F'),
        received: deliveryTime(unique),
      });
    };
    for (const entry of entries) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) {
        if (entry.name !== 'new' && entry.name !== 'cur' && entry.name !== 'tmp') continue;
        for (const file of await files.list(full)) {
          const key = keyOf(entry.name, file.name);
          if (!file.isFile()) skipped.push({ key, reason: 'not a regular file' });
          else if (entry.name === 'tmp') skipped.push({ key, reason: 'in tmp/: a delivery that has not finished' });
          else if (file.name.startsWith('.')) skipped.push({ key, reason: 'a hidden file' });
          else add(path.join(full, file.name), file.name, entry.name);
        }
      } else if (!entry.isFile()) {
        skipped.push({ key: keyOf(entry.name), reason: 'not a regular file' });
      } else if (entry.name.startsWith('.') || METADATA.test(entry.name)) {
        skipped.push({ key: keyOf(entry.name), reason: 'Maildir metadata (index, uid list, lock or a hidden file)' });
      } else {
        add(full, entry.name, null);
      }
    }
    const folders = entries
      .filter((e) => e.isDirectory() && !['new', 'cur', 'tmp'].includes(e.name))
      .map((e) => e.name);
    for (const name of folders.sort()) await visit(path.join(dir, name));
  };
  await visit(root);
  const byKey = (a: { key: string }, b: { key: string }) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);
  return { messages: messages.sort(byKey), skipped: skipped.sort(byKey) };
}
