import type { MailFlagsChanged, EventOf } from '@memex/contracts';

/**
 * Google Takeout writes a message's Gmail labels in `X-Gmail-Labels` by their display names
 * (`Inbox,Important,Opened,Starred,Category Promotions,Work/Acme`); Gmail's API (mail-sync) names
 * the system ones by id. Takeout's names are read as the API's ids, so a message imported from a
 * Takeout and one synced from Gmail carry the same labels.
 */
const SYSTEM_NAMES: Record<string, string> = {
  inbox: 'INBOX',
  sent: 'SENT',
  draft: 'DRAFT',
  drafts: 'DRAFT',
  important: 'IMPORTANT',
  starred: 'STARRED',
  unread: 'UNREAD',
  spam: 'SPAM',
  trash: 'TRASH',
  chat: 'CHAT',
  chats: 'CHAT',
};

/** Takeout's own markers: `Opened` is the absence of UNREAD, `Archived` the absence of INBOX. */
const MARKERS = new Set(['opened', 'archived']);

/** RFC 2047 encoded words (`=?UTF-8?Q?Fam=C3=ADlia?=`), as Takeout writes non-ASCII label names. */
function decodeWords(value: string): string {
  return value.replace(
    /=\?([^?]+)\?([bq])\?([^?]*)\?=(\s+(?==\?))?/gi,
    (word, charset: string, encoding: string, text: string) => {
      const bytes =
        encoding.toLowerCase() === 'b'
          ? Buffer.from(text, 'base64')
          : Buffer.from(
              text
                .replace(/_/g, ' ')
                .replace(/=([0-9a-f]{2})/gi, (_, hex: string) => String.fromCharCode(parseInt(hex, 16))),
              'latin1',
            );
      try {
        return new TextDecoder(charset.split('*')[0]).decode(bytes);
      } catch {
        return word; // a charset nobody knows: the word as written
      }
    },
  );
}

/**
 * The labels of an `X-Gmail-Labels` value, as Gmail ids for system labels and names for the
 * user's (sorted, each once). Labels are comma-separated; one with a comma in its name is quoted.
 */
export function takeoutLabels(value: string): string[] {
  const labels = new Set<string>();
  for (const match of decodeWords(value).matchAll(/"((?:[^"\\]|\\.)*)"|([^,]+)/g)) {
    const name = (match[1] !== undefined ? match[1].replace(/\\(.)/g, '$1') : match[2]!).trim();
    if (!name || MARKERS.has(name.toLowerCase())) continue;
    const category = /^category\s+(\S.*)$/i.exec(name);
    labels.add(SYSTEM_NAMES[name.toLowerCase()] ?? (category ? `CATEGORY_${category[1]!.toUpperCase()}` : name));
  }
  return [...labels].sort();
}

/** Gmail labels that are flags of a message rather than mail labels. */
const GMAIL_FLAG_LABELS = new Set(['INBOX', 'UNREAD', 'STARRED', 'TRASH', 'SPAM']);

/** What a message's Gmail labels make it in the mail views (CATEGORY_* tabs are not labels here). */
export interface GmailState {
  read: boolean;
  starred: boolean;
  inbox: boolean;
  trashed: boolean;
  spam: boolean;
  mail_labels: string[];
}

/** A message's flags and mail labels from its Gmail labels. */
export function gmailState(labels: readonly string[]): GmailState {
  return {
    read: !labels.includes('UNREAD'),
    starred: labels.includes('STARRED'),
    inbox: labels.includes('INBOX'),
    trashed: labels.includes('TRASH'),
    spam: labels.includes('SPAM'),
    mail_labels: labels.filter((label) => !GMAIL_FLAG_LABELS.has(label) && !label.startsWith('CATEGORY_')),
  };
}

type FlagsChange = Omit<EventOf<typeof MailFlagsChanged>['data'], 'id'>;

/**
 * The change that brings a stored message to what a newer export's labels say (read, starred,
 * inbox, trash, mail labels), or null when it already is. Spam is the item's, not a flag, and
 * is left as it was first imported.
 */
export function changeTo(current: Omit<GmailState, 'spam'>, labels: readonly string[]): FlagsChange | null {
  const wanted = gmailState(labels);
  const change: FlagsChange = {};
  if (wanted.read !== current.read) change.read = wanted.read;
  if (wanted.starred !== current.starred) change.starred = wanted.starred;
  if (wanted.inbox !== current.inbox) change.archived = !wanted.inbox;
  if (wanted.trashed !== current.trashed) change.trashed = wanted.trashed;
  const added = wanted.mail_labels.filter((label) => !current.mail_labels.includes(label));
  const removed = current.mail_labels.filter((label) => !wanted.mail_labels.includes(label));
  if (added.length > 0) change.labels_added = added;
  if (removed.length > 0) change.labels_removed = removed;
  return Object.keys(change).length > 0 ? change : null;
}
