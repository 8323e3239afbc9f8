import { Type } from '@sinclair/typebox';
import { defineEvent, ULID_PATTERN } from './envelope.js';

const Sha256 = Type.String({ pattern: '^[0-9a-f]{64}$' });
const OutgoingId = Type.String({ pattern: ULID_PATTERN });

/**
 * A mail written in the memex, to send at `send_at` (the end of the undo window, or a time the
 * user chose) or to keep as a draft. Its MIME bytes are a blob (content stays off the log). Its
 * own Message-ID is the idempotency key of the send: before any retry, Gmail is asked whether a
 * message with it was already sent. Subject outgoing:<id>.
 */
export const OutgoingQueued = defineEvent({
  type: 'outgoing.queued',
  owner: 'mail-sync',
  v: 1,
  description: 'A mail was written in the memex: to send at a time (undo window or send later), or kept as a draft.',
  data: Type.Object(
    {
      id: OutgoingId,
      account: Type.String({ minLength: 3 }),
      mime_sha256: Sha256,
      message_id: Type.String({ minLength: 3, description: 'its Message-ID, <…>' }),
      thread_id: Type.Union([Type.String(), Type.Null()], { description: 'the Gmail thread it replies in' }),
      subject: Type.String(),
      to: Type.Array(Type.String()),
      send_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'null for a draft' }),
    },
    { additionalProperties: false },
  ),
});

export const OutgoingCancelled = defineEvent({
  type: 'outgoing.cancelled',
  owner: 'mail-sync',
  v: 1,
  description: 'A queued mail was cancelled before it was sent (undo): nothing is sent.',
  data: Type.Object({ id: OutgoingId }, { additionalProperties: false }),
});

/** Logged before each messages.send: after a crash, a mail with an attempt is looked up in Gmail by its Message-ID before it is sent again. */
export const OutgoingAttempted = defineEvent({
  type: 'outgoing.attempted',
  owner: 'mail-sync',
  v: 1,
  description: 'mail-sync is about to hand a queued mail to Gmail (attempt n).',
  data: Type.Object({ id: OutgoingId, attempt: Type.Integer({ minimum: 1 }) }, { additionalProperties: false }),
});

export const OutgoingSent = defineEvent({
  type: 'outgoing.sent',
  owner: 'mail-sync',
  v: 1,
  description: 'Gmail has the mail as sent (by this attempt, or found by its Message-ID after a crash).',
  data: Type.Object(
    { id: OutgoingId, gmail_id: Type.String(), thread_id: Type.String(), found_after_crash: Type.Boolean() },
    { additionalProperties: false },
  ),
});

/** A draft written in the memex is in Gmail's drafts too. */
export const OutgoingDraftSaved = defineEvent({
  type: 'outgoing.draft_saved',
  owner: 'mail-sync',
  v: 1,
  description: 'A memex draft was saved to the account’s Gmail drafts.',
  data: Type.Object(
    {
      id: OutgoingId,
      gmail_draft_id: Type.String(),
      /** The version saved (the draft's MIME blob); absent in events from before drafts could be edited. */
      mime_sha256: Type.Optional(Sha256),
    },
    { additionalProperties: false },
  ),
});

/** A draft edited in the memex: its new MIME (same Message-ID), to be written over the Gmail draft. */
export const OutgoingDraftUpdated = defineEvent({
  type: 'outgoing.draft_updated',
  owner: 'mail-sync',
  v: 1,
  description: 'A draft written in the memex was edited: new recipients, subject, text or attachments.',
  data: Type.Object(
    { id: OutgoingId, mime_sha256: Sha256, subject: Type.String(), to: Type.Array(Type.String()) },
    { additionalProperties: false },
  ),
});

/** A draft deleted in the memex; the Gmail draft goes next (outgoing.draft_removed). */
export const OutgoingDraftDeleted = defineEvent({
  type: 'outgoing.draft_deleted',
  owner: 'mail-sync',
  v: 1,
  description: 'A draft written in the memex was deleted (it is never sent).',
  data: Type.Object({ id: OutgoingId }, { additionalProperties: false }),
});

export const OutgoingDraftRemoved = defineEvent({
  type: 'outgoing.draft_removed',
  owner: 'mail-sync',
  v: 1,
  description: 'A deleted draft is gone from the account’s Gmail drafts too.',
  data: Type.Object({ id: OutgoingId }, { additionalProperties: false }),
});

/** Gmail refused the mail for good (a 4xx other than a rate limit: a bad address, a message too large): it is not tried again. */
export const OutgoingFailed = defineEvent({
  type: 'outgoing.failed',
  owner: 'mail-sync',
  v: 1,
  description: 'Gmail refused a queued mail for good; it is not sent and not tried again.',
  data: Type.Object({ id: OutgoingId, reason: Type.String() }, { additionalProperties: false }),
});

export const outgoingEvents = [
  OutgoingQueued,
  OutgoingCancelled,
  OutgoingAttempted,
  OutgoingSent,
  OutgoingDraftSaved,
  OutgoingDraftUpdated,
  OutgoingDraftDeleted,
  OutgoingDraftRemoved,
  OutgoingFailed,
];
