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

/** Events owned by the mail area. Add each definition here and to this list. */
export const mailEvents = [MailFlagsChanged];
