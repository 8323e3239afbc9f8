import { Injectable } from '@nestjs/common';
import { httpStatus, isRetryable } from '@memex/google';
import type { OutgoingTable } from '../projection/schema.js';
import { GoogleAccounts } from './google-accounts.js';
import { RefusedForGood, type MailTransport, type SentMail } from './transports.js';

/** Gmail as the outbox's provider: messages.send, found again by `rfc822msgid:`, drafts as Gmail drafts. */
@Injectable()
export class GmailTransport implements MailTransport {
  constructor(private readonly google: GoogleAccounts) {}

  async findSent(mail: OutgoingTable): Promise<SentMail | 'not_sent'> {
    const found = await this.google.call(mail.account, (g) =>
      g.users.messages.list({ userId: 'me', q: `rfc822msgid:${mail.message_id}`, includeSpamTrash: true }),
    );
    const sent = found.messages?.[0];
    return sent ? { id: sent.id!, threadId: sent.threadId! } : 'not_sent';
  }

  async send(mail: OutgoingTable, mime: Buffer): Promise<SentMail> {
    try {
      const answer = await this.google.call(
        mail.account,
        (g) =>
          g.users.messages.send({
            userId: 'me',
            requestBody: { raw: mime.toString('base64url'), ...(mail.thread_id ? { threadId: mail.thread_id } : {}) },
          }),
        { units: 100, once: true },
      );
      return { id: answer.id!, threadId: answer.threadId! };
    } catch (error) {
      const status = httpStatus(error);
      if (status === undefined || status < 400 || status >= 500 || status === 401 || isRetryable(error)) throw error;
      throw new RefusedForGood(`Gmail refused it (${status}): ${(error as Error).message}`);
    }
  }

  /** Creates the Gmail draft, or writes the new version over it (a draft deleted in Gmail meanwhile is created again). */
  async saveDraft(mail: OutgoingTable, mime: Buffer): Promise<string> {
    const requestBody = {
      message: { raw: mime.toString('base64url'), ...(mail.thread_id ? { threadId: mail.thread_id } : {}) },
    };
    const create = () => this.google.call(mail.account, (g) => g.users.drafts.create({ userId: 'me', requestBody }));
    const draft = mail.gmail_draft_id
      ? await this.google
          .call(mail.account, (g) => g.users.drafts.update({ userId: 'me', id: mail.gmail_draft_id!, requestBody }))
          .catch((error: unknown) => {
            if (httpStatus(error) !== 404) throw error;
            return create();
          })
      : await create();
    return draft.id!;
  }

  async removeDraft(mail: OutgoingTable): Promise<void> {
    await this.google
      .call(mail.account, (g) => g.users.drafts.delete({ userId: 'me', id: mail.gmail_draft_id! }))
      .catch((error: unknown) => {
        if (httpStatus(error) !== 404) throw error;
      });
  }
}
