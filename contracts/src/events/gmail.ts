import { Type } from '@sinclair/typebox';
import { defineEvent, ULID_PATTERN } from './envelope.js';

const GmailId = Type.String({ minLength: 1, maxLength: 64 });

/**
 * A message's state in Gmail, as the sync last saw or wrote it: which item mirrors which Gmail
 * message, and its labels (INBOX, UNREAD, STARRED, IMPORTANT, TRASH, SPAM, user labels by name).
 * State, not a delta, so applying it twice changes nothing. Subject item:<id>, so it is erased
 * with the message.
 */
export const GmailMessageSynced = defineEvent({
  type: 'gmail.message_synced',
  owner: 'mail-sync',
  v: 1,
  description: 'A Gmail message and the item that mirrors it, with its labels as Gmail has them now.',
  data: Type.Object(
    {
      id: Type.String({ pattern: ULID_PATTERN }),
      account: Type.String({ minLength: 3 }),
      gmail_id: GmailId,
      thread_id: GmailId,
      /** System label ids as Gmail names them, user labels by their name. */
      labels: Type.Array(Type.String({ minLength: 1, maxLength: 200 })),
      history_id: Type.String({ pattern: '^[0-9]+$' }),
      /** Set when this state was written to Gmail by the memex: the id of the mail.flags_changed it carries out. */
      pushed: Type.Optional(Type.String({ pattern: ULID_PATTERN })),
    },
    { additionalProperties: false },
  ),
});

/**
 * How far an account's sync has come, so a restarted mail-sync resumes from the log: during the
 * first (or a fallback full) sync the next page of messages.list, then the history id to poll from.
 */
export const GmailSyncProgressed = defineEvent({
  type: 'gmail.sync_progressed',
  owner: 'mail-sync',
  v: 1,
  description: 'An account’s sync reached a point it can resume from: a page of the full sync, or a history id.',
  data: Type.Object(
    {
      account: Type.String({ minLength: 3 }),
      phase: Type.Union([Type.Literal('full'), Type.Literal('incremental')]),
      /** Full sync: Gmail’s history id when it began (incremental sync starts there); incremental: the one reached. */
      history_id: Type.String({ pattern: '^[0-9]+$' }),
      /** Full sync: the messages.list page to fetch next; null once the full sync is done. */
      page_token: Type.Union([Type.String(), Type.Null()]),
      messages: Type.Integer({ minimum: 0, description: 'messages synced in this step' }),
    },
    { additionalProperties: false },
  ),
});

export const gmailEvents = [GmailMessageSynced, GmailSyncProgressed];
