import { Type } from '@sinclair/typebox';
import type { MethodDefinition } from './method.js';
import { defineMethod, Seq } from './method.js';

export const OutgoingState = Type.Union(
  (['scheduled', 'draft', 'sending', 'sent', 'cancelled', 'failed', 'deleted'] as const).map((s) => Type.Literal(s)),
);

export const MailCompose = defineMethod({
  name: 'memex.mail.compose',
  service: 'mail-sync',
  kind: 'command',
  access: 'owner',
  summary:
    'Write a mail from a connected Gmail account: new, reply, reply-all or forward (threading headers and quoting done), with memex items as attachments. It is sent after the undo window (default 10 s), or at send_at, or kept as a draft (also in Gmail drafts). Sent exactly once, across crashes.',
  params: Type.Object({
    account: Type.String({ minLength: 3 }),
    mode: Type.Optional(
      Type.Union(
        (['new', 'reply', 'reply_all', 'forward'] as const).map((m) => Type.Literal(m)),
        { default: 'new' },
      ),
    ),
    /** reply, reply_all, forward: the message answered (a memex item id). */
    message: Type.Optional(Type.String({ minLength: 1 })),
    to: Type.Optional(Type.Array(Type.String({ minLength: 3 }), { maxItems: 100 })),
    cc: Type.Optional(Type.Array(Type.String({ minLength: 3 }), { maxItems: 100 })),
    bcc: Type.Optional(Type.Array(Type.String({ minLength: 3 }), { maxItems: 100 })),
    subject: Type.Optional(Type.String({ maxLength: 998 })),
    text: Type.String(),
    attachments: Type.Optional(
      Type.Array(Type.String({ minLength: 1 }), { maxItems: 50, description: 'memex item ids' }),
    ),
    send_at: Type.Optional(Type.String({ format: 'date-time', description: 'send later: not before this time' })),
    undo_seconds: Type.Optional(Type.Integer({ minimum: 0, maximum: 120, description: 'the undo window; default 10' })),
    draft: Type.Optional(Type.Boolean({ description: 'keep it as a draft instead of sending' })),
  }),
  result: Type.Object({
    id: Type.String(),
    message_id: Type.String(),
    state: OutgoingState,
    send_at: Type.Union([Type.String(), Type.Null()]),
    seq: Seq,
  }),
});

export const MailCancel = defineMethod({
  name: 'memex.mail.cancel',
  service: 'mail-sync',
  kind: 'command',
  access: 'owner',
  summary: 'Undo send: cancel a scheduled mail before it goes (a conflict once it is being sent or sent).',
  params: Type.Object({ id: Type.String({ minLength: 1 }) }),
  result: Type.Object({ seq: Seq }),
});

export const MailDraftUpdate = defineMethod({
  name: 'memex.mail.drafts.update',
  service: 'mail-sync',
  kind: 'command',
  access: 'owner',
  summary:
    'Edit a draft written in the memex: the fields given replace its own (attachments: memex item ids, replacing the draft’s); the Gmail draft is updated too.',
  params: Type.Object({
    id: Type.String({ minLength: 1 }),
    to: Type.Optional(Type.Array(Type.String({ minLength: 3 }), { maxItems: 100 })),
    cc: Type.Optional(Type.Array(Type.String({ minLength: 3 }), { maxItems: 100 })),
    bcc: Type.Optional(Type.Array(Type.String({ minLength: 3 }), { maxItems: 100 })),
    subject: Type.Optional(Type.String({ maxLength: 998 })),
    text: Type.Optional(Type.String()),
    attachments: Type.Optional(
      Type.Array(Type.String({ minLength: 1 }), { maxItems: 50, description: 'memex item ids' }),
    ),
  }),
  result: Type.Object({ seq: Seq }),
});

export const MailDraftDelete = defineMethod({
  name: 'memex.mail.drafts.delete',
  service: 'mail-sync',
  kind: 'command',
  access: 'owner',
  summary: 'Delete a draft written in the memex (and its Gmail draft); it is never sent.',
  params: Type.Object({ id: Type.String({ minLength: 1 }) }),
  result: Type.Object({ seq: Seq }),
});

export const OutgoingSummary = Type.Object({
  id: Type.String(),
  account: Type.String(),
  state: OutgoingState,
  subject: Type.String(),
  to: Type.Array(Type.String()),
  message_id: Type.String(),
  send_at: Type.Union([Type.String(), Type.Null()]),
  gmail_id: Type.Union([Type.String(), Type.Null()]),
  created_at: Type.String(),
  error: Type.Union([Type.String(), Type.Null()], { description: 'why Gmail refused it (failed)' }),
});

export const MailOutgoing = defineMethod({
  name: 'memex.mail.outgoing',
  service: 'mail-sync',
  kind: 'query',
  access: 'owner',
  summary:
    'Mail written in the memex by state: scheduled (undo window or send later), draft, sending, sent, cancelled, failed (Gmail refused it; the reason is given), deleted (a draft); newest first.',
  params: Type.Object({
    state: Type.Optional(OutgoingState),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 50 })),
  }),
  result: Type.Object({ outgoing: Type.Array(OutgoingSummary) }),
});

export const outgoingMethods: MethodDefinition[] = [
  MailCompose,
  MailCancel,
  MailDraftUpdate,
  MailDraftDelete,
  MailOutgoing,
];
