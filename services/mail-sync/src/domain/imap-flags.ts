import type { LabelDelta } from './labels.js';

/** An IMAP folder as LIST names it: its path and special use (RFC 6154), if any. */
export interface FolderInfo {
  path: string;
  specialUse?: string;
}

/** Gmail's words for the special-use folders, which the mail views read for both kinds of account. */
const SPECIAL: Record<string, string> = { '\\Trash': 'TRASH', '\\Junk': 'SPAM', '\\Sent': 'SENT', '\\Drafts': 'DRAFT' };

export const isInbox = (folder: FolderInfo) => /^inbox$/i.test(folder.path);

/** The state of a message in Gmail's words: its folder (INBOX, TRASH, SPAM, SENT, DRAFT or the folder's path), UNREAD, STARRED. */
export function labelsOf(folder: FolderInfo, flags: Iterable<string>): string[] {
  const set = new Set(flags);
  const place = isInbox(folder) ? 'INBOX' : (SPECIAL[folder.specialUse ?? ''] ?? folder.path);
  return [place, ...(set.has('\\Seen') ? [] : ['UNREAD']), ...(set.has('\\Flagged') ? ['STARRED'] : [])].sort();
}

/** What a memex change asks of an IMAP server: flags to add and remove, and a folder to move to. */
export interface ImapChange {
  add: string[];
  remove: string[];
  /** The special use of the folder to move to, or INBOX. */
  moveTo: '\\Trash' | '\\Archive' | 'INBOX' | null;
  /** What IMAP cannot do (a message is in one folder: no labels); said, not dropped silently. */
  unsupported: string[];
}

/** A Gmail-words delta (deltaOf of the pushes) as IMAP flags and a move. */
export function imapChange(delta: LabelDelta): ImapChange {
  const change: ImapChange = { add: [], remove: [], moveTo: null, unsupported: [] };
  const flag = { UNREAD: '\\Seen', STARRED: '\\Flagged' } as const;
  for (const [label, added] of [
    ...delta.add.map((l) => [l, true] as const),
    ...delta.remove.map((l) => [l, false] as const),
  ]) {
    if (label === 'UNREAD') (added ? change.remove : change.add).push(flag.UNREAD);
    else if (label === 'STARRED') (added ? change.add : change.remove).push(flag.STARRED);
    else if (label === 'TRASH') change.moveTo = added ? '\\Trash' : 'INBOX';
    else if (label === 'INBOX') change.moveTo ??= added ? 'INBOX' : '\\Archive';
    else change.unsupported.push(`${added ? '+' : '-'}${label}`);
  }
  return change;
}
