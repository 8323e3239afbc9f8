import { Type } from '@sinclair/typebox';
import { defineEvent, ULID_PATTERN } from './envelope.js';

const MailLabel = Type.String({ minLength: 1, maxLength: 200 });

/**
 * The owner (or an agent allowed to see the message) changed a message's state in the memex.
 * For imported mail these changes stay in the memex (there is no provider to tell). Only the
 * fields that changed are present. Subject item:<id>, so it is erased with the message.
 */
export const MailFlagsChanged = defineEvent({
  type: 'mail.flags_changed',
  owner: 'ingest',
  v: 1,
  description:
    'A message was marked read/unread, starred, labelled, archived or trashed (only the changed fields are present).',
  data: Type.Object(
    {
      id: Type.String({ pattern: ULID_PATTERN }),
      read: Type.Optional(Type.Boolean()),
      starred: Type.Optional(Type.Boolean()),
      labels_added: Type.Optional(Type.Array(MailLabel)),
      labels_removed: Type.Optional(Type.Array(MailLabel)),
      archived: Type.Optional(Type.Boolean({ description: 'true: out of the inbox; false: back in it' })),
      trashed: Type.Optional(Type.Boolean()),
    },
    { additionalProperties: false },
  ),
});

/**
 * A stored message is spam after all: a copy of it turned up in a spam folder (Junk, Spam, Bulk…).
 * Every read model that keeps the message's visibility marks it spam, so no agent sees it from
 * then on. Subject item:<id>.
 */
export const MailSpamMarked = defineEvent({
  type: 'mail.spam_marked',
  owner: 'ingest',
  v: 1,
  description: 'A stored message was found to be spam (a copy of it was in a spam folder): it is hidden from agents.',
  data: Type.Object(
    {
      id: Type.String({ pattern: ULID_PATTERN }),
      /** Why, in words: 'a copy in folder "Junk"'. */
      reason: Type.String({ minLength: 1, maxLength: 500 }),
    },
    { additionalProperties: false },
  ),
});

const ThreadKey = Type.String({ minLength: 1, maxLength: 1000 });

/**
 * Threads that are one conversation (JWZ threading in ingest: a message naming ids of several
 * threads joins them, the oldest thread wins). Keys are the thread keys messages carry in
 * item.ingested's meta (`threadKey`): every message whose key is in `merged` belongs to the
 * thread `key` from then on, as do later messages carrying one of those keys. Subject item:<id>
 * of the message that joined them, so the join is erased with it (a replay without it leaves
 * the threads apart, as ingest's own threads are).
 */
export const ThreadJoined = defineEvent({
  type: 'thread.joined',
  owner: 'ingest',
  v: 1,
  description:
    "Mail threads were joined into one (a message named ids of several): the merged keys are the surviving key's.",
  data: Type.Object(
    {
      /** The surviving thread key (the oldest thread's). */
      key: ThreadKey,
      /** The thread keys that are `key` from now on. */
      merged: Type.Array(ThreadKey, { minItems: 1, maxItems: 10_000 }),
      /** The message whose arrival joined them. */
      id: Type.String({ pattern: ULID_PATTERN }),
    },
    { additionalProperties: false },
  ),
});

/** Events owned by the mail area. Add each definition here and to this list. */
export const mailEvents = [MailFlagsChanged, MailSpamMarked, ThreadJoined];
