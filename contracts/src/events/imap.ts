import { Type } from '@sinclair/typebox';
import { defineEvent, ULID_PATTERN } from './envelope.js';

const AccountName = Type.String({ minLength: 3, maxLength: 320 });
const Folder = Type.String({
  minLength: 1,
  maxLength: 1000,
  description: 'the mailbox path, e.g. INBOX or Archive/2024',
});
/** IMAP's 32-bit UIDVALIDITY and 63-bit MODSEQ, as decimal strings. */
const Digits = Type.String({ pattern: '^[0-9]+$' });

/**
 * A plain IMAP/SMTP account (Fastmail, a company server) was connected. Its password never
 * appears here: mail-sync keeps it in its encrypted store (or asks the credentials provider).
 */
export const ImapAccountConnected = defineEvent({
  type: 'imap.account_connected',
  owner: 'mail-sync',
  v: 1,
  description: 'An IMAP/SMTP account was connected (servers and user; the password stays in the encrypted store).',
  data: Type.Object(
    {
      account: AccountName,
      host: Type.String({ minLength: 1 }),
      port: Type.Integer({ minimum: 1, maximum: 65535 }),
      tls: Type.Boolean({ description: 'TLS from the start (993); false: plain, upgraded by STARTTLS when offered' }),
      user: Type.String({ minLength: 1 }),
      smtp_host: Type.String({ minLength: 1 }),
      smtp_port: Type.Integer({ minimum: 1, maximum: 65535 }),
      smtp_tls: Type.Boolean(),
    },
    { additionalProperties: false },
  ),
});

/**
 * How far a folder's sync has come: its UIDVALIDITY (a change means every UID is new: the folder
 * is read again and matched by content), the next UID to expect, and CONDSTORE's HIGHESTMODSEQ
 * when the server offers it (flag changes since then are all that is read).
 */
export const ImapFolderSynced = defineEvent({
  type: 'imap.folder_synced',
  owner: 'mail-sync',
  v: 1,
  description: 'An IMAP folder was read up to a point the next cycle resumes from.',
  data: Type.Object(
    {
      account: AccountName,
      folder: Folder,
      uidvalidity: Digits,
      uidnext: Type.Integer({ minimum: 1 }),
      highestmodseq: Type.Union([Digits, Type.Null()]),
    },
    { additionalProperties: false },
  ),
});

/**
 * A message's place and flags on the IMAP server as the sync last saw or wrote them, with the
 * state they mean in Gmail's words (INBOX, UNREAD, STARRED, TRASH, SPAM, SENT, DRAFT, other
 * folders by name) so the mail views read both kinds alike. State, not a delta.
 */
export const ImapMessageSynced = defineEvent({
  type: 'imap.message_synced',
  owner: 'mail-sync',
  v: 1,
  description: 'An IMAP message and the item that mirrors it, with its folder and flags as the server has them now.',
  data: Type.Object(
    {
      id: Type.String({ pattern: ULID_PATTERN }),
      account: AccountName,
      folder: Folder,
      uidvalidity: Digits,
      uid: Type.Integer({ minimum: 1 }),
      flags: Type.Array(Type.String({ maxLength: 200 }), {
        description: 'IMAP flags and keywords (\\Seen, \\Flagged…)',
      }),
      labels: Type.Array(Type.String({ minLength: 1, maxLength: 1000 })),
      /** Set when this state was written to the server by the memex: the mail.flags_changed it carries out. */
      pushed: Type.Optional(Type.String({ pattern: ULID_PATTERN })),
    },
    { additionalProperties: false },
  ),
});

export const imapEvents = [ImapAccountConnected, ImapFolderSynced, ImapMessageSynced];
