import fs from 'node:fs/promises';
import path from 'node:path';

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

/**
 * The folder a maildir directory stands for: the root is INBOX; Maildir++ subfolders (`.Sent`,
 * `.Work.2009`) and nested maildirs (`Work/2009`) keep their names with `/` between levels.
 */
export function folderName(relative: string): string {
  if (relative === '') return 'INBOX';
  return relative
    .split(path.sep)
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

/** Every message under a Maildir root, in a stable order (folder, then name). */
export async function listMaildir(root: string): Promise<MaildirMessage[]> {
  const messages: MaildirMessage[] = [];
  const visit = async (dir: string) => {
    const entries = await fs.readdir(dir, { withFileTypes: true });
    const names = new Set(entries.filter((e) => e.isDirectory()).map((e) => e.name));
    const relative = path.relative(root, dir);
    for (const sub of ['new', 'cur'] as const) {
      if (!names.has(sub)) continue;
      for (const file of await fs.readdir(path.join(dir, sub), { withFileTypes: true })) {
        if (!file.isFile() || file.name.startsWith('.')) continue;
        const { unique, flags } = parseMaildirName(file.name);
        const folder = folderName(relative);
        messages.push({
          key: `${folder}/${unique}`,
          file: path.join(dir, sub, file.name),
          folder,
          // Mail in new/ has not been seen by any client yet.
          read: sub === 'cur' && flags.includes('S'),
          starred: flags.includes('F'),
          received: deliveryTime(unique),
        });
      }
    }
    for (const name of [...names].sort()) {
      if (name === 'new' || name === 'cur' || name === 'tmp') continue;
      await visit(path.join(dir, name));
    }
  };
  await visit(root);
  return messages.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}
