import type { OutgoingTable } from '../projection/schema.js';

/** Where the provider keeps a mail it took: its id there, and the conversation it joined. */
export interface SentMail {
  id: string;
  threadId: string;
}

/** The provider refused the mail for good (a bad address, too large): trying again would be refused again. */
export class RefusedForGood extends Error {}

/**
 * What the outbox needs of a provider to send exactly once and keep drafts there. The outbox
 * logs `outgoing.attempted` before each `send`; a mail with an earlier attempt is first looked
 * for with `findSent`, so a crash after the provider took it never sends it twice.
 */
export interface MailTransport {
  /**
   * After an attempt whose outcome was not logged: the mail as the provider has it, `not_sent`
   * when it surely did not take it, or `not_yet` while it cannot tell yet (look again later).
   */
  findSent(mail: OutgoingTable, mime: Buffer): Promise<SentMail | 'not_sent' | 'not_yet'>;
  /** Hands the mail over once (no retry inside: a retry goes through findSent). */
  send(mail: OutgoingTable, mime: Buffer): Promise<SentMail>;
  /** Saves the draft's current version there (replacing `mail.gmail_draft_id`'s, if any): its draft id. */
  saveDraft(mail: OutgoingTable, mime: Buffer): Promise<string>;
  /** Removes the draft there (already gone is as good). */
  removeDraft(mail: OutgoingTable): Promise<void>;
}
