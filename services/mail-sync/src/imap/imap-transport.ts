import { Injectable } from '@nestjs/common';
import type { ImapFlow } from 'imapflow';
import { simpleParser, type AddressObject } from 'mailparser';
import type { OutgoingTable } from '../projection/schema.js';
import { RefusedForGood, type MailTransport, type SentMail } from '../sync/transports.js';
import { ImapAccounts } from './imap-accounts.js';

/** How long the copy a mail sends to its own account (its receipt) may take to arrive, after which an attempt without one did not go. */
const receiptWaitMs = () => Number(process.env.MEMEX_SMTP_RECEIPT_WAIT_MS || 60_000);

/** The addresses of a parsed header. */
function addresses(field: AddressObject | AddressObject[] | undefined): string[] {
  return (field ? [field].flat() : []).flatMap((group) => group.value.flatMap((a) => (a.address ? [a.address] : [])));
}

/** The header block without its Bcc field (the envelope carries those recipients; the message must not name them). */
function withoutBcc(mime: Buffer): Buffer {
  const end = mime.indexOf('\r\n\r\n');
  const head = mime
    .subarray(0, end)
    .toString('utf8')
    .split(/\r\n(?![ \t])/);
  return Buffer.concat([Buffer.from(head.filter((field) => !/^bcc:/i.test(field)).join('\r\n')), mime.subarray(end)]);
}

async function folderWith(session: ImapFlow, use: '\\Sent' | '\\Drafts', fallback: string): Promise<string> {
  const folders = await session.list();
  const found = folders.find((f) => f.specialUse === use);
  if (found) return found.path;
  if (!folders.some((f) => f.path === fallback)) await session.mailboxCreate(fallback);
  return fallback;
}

/**
 * An IMAP account as the outbox's provider: SMTP (nodemailer's transport) to send, the Sent and
 * Drafts folders over IMAP. SMTP has no idempotency key, so every mail also goes to the account
 * itself: that copy (the receipt) arrives only if the server took the mail, and after a crash
 * around the send it is what tells a mail sent from one that never went. A receipt is deleted
 * once the send is confirmed (here, or by the sync when it comes later).
 */
@Injectable()
export class ImapTransport implements MailTransport {
  constructor(private readonly accounts: ImapAccounts) {}

  async findSent(mail: OutgoingTable, mime: Buffer): Promise<SentMail | 'not_sent' | 'not_yet'> {
    const session = await this.accounts.session(mail.account);
    try {
      const sentFolder = await folderWith(session, '\\Sent', 'Sent');
      const inSent = await this.search(session, sentFolder, mail.message_id);
      const receipt = await this.search(session, 'INBOX', mail.message_id);
      if (inSent.length === 0 && receipt.length === 0) {
        const attemptedAt = mail.attempted_at?.getTime() ?? 0;
        return Date.now() - attemptedAt < receiptWaitMs() ? 'not_yet' : 'not_sent';
      }
      const sent =
        inSent.length > 0
          ? await this.filed(session, sentFolder, inSent[0]!)
          : await this.fileSent(session, sentFolder, mime);
      if (receipt.length > 0) await this.remove(session, 'INBOX', receipt.join(','));
      return sent;
    } finally {
      await session.logout().catch(() => session.close());
    }
  }

  async send(mail: OutgoingTable, mime: Buffer): Promise<SentMail> {
    const parsed = await simpleParser(mime, { skipHtmlToText: true, skipTextToHtml: true, skipImageLinks: true });
    const recipients = [...addresses(parsed.to), ...addresses(parsed.cc), ...addresses(parsed.bcc)];
    const smtp = await this.accounts.smtp(mail.account);
    try {
      await smtp.sendMail({
        envelope: { from: mail.account, to: [...recipients, mail.account] },
        raw: withoutBcc(mime),
      });
    } catch (error) {
      const code = (error as { responseCode?: number }).responseCode;
      if (code !== undefined && code >= 500 && code < 600)
        throw new RefusedForGood(`the SMTP server refused it (${code}): ${(error as Error).message}`);
      throw error;
    } finally {
      smtp.close();
    }
    const session = await this.accounts.session(mail.account);
    try {
      const sent = await this.fileSent(session, await folderWith(session, '\\Sent', 'Sent'), withoutBcc(mime));
      // The receipt, when it came at once (a later one is deleted by the sync).
      const receipt = await this.search(session, 'INBOX', mail.message_id);
      if (receipt.length > 0) await this.remove(session, 'INBOX', receipt.join(','));
      return sent;
    } finally {
      await session.logout().catch(() => session.close());
    }
  }

  async saveDraft(mail: OutgoingTable, mime: Buffer): Promise<string> {
    const session = await this.accounts.session(mail.account);
    try {
      const drafts = await folderWith(session, '\\Drafts', 'Drafts');
      const saved = await session.append(drafts, mime, ['\\Draft', '\\Seen']);
      if (mail.gmail_draft_id) await this.remove(session, drafts, mail.gmail_draft_id);
      return String(saved ? saved.uid : 0);
    } finally {
      await session.logout().catch(() => session.close());
    }
  }

  async removeDraft(mail: OutgoingTable): Promise<void> {
    const session = await this.accounts.session(mail.account);
    try {
      await this.remove(session, await folderWith(session, '\\Drafts', 'Drafts'), mail.gmail_draft_id!);
    } finally {
      await session.logout().catch(() => session.close());
    }
  }

  /** The sent copy appended to the Sent folder, read. */
  private async fileSent(session: ImapFlow, folder: string, mime: Buffer): Promise<SentMail> {
    const appended = await session.append(folder, mime, ['\\Seen']);
    return { id: String(appended ? appended.uid : 0), threadId: String(appended ? appended.uidValidity : 0) };
  }

  private async filed(session: ImapFlow, folder: string, uid: number): Promise<SentMail> {
    const status = await session.status(folder, { uidValidity: true });
    return { id: String(uid), threadId: String(status ? status.uidValidity : 0) };
  }

  private async search(session: ImapFlow, folder: string, messageId: string): Promise<number[]> {
    const lock = await session.getMailboxLock(folder);
    try {
      return (await session.search({ header: { 'message-id': messageId } }, { uid: true })) || [];
    } finally {
      lock.release();
    }
  }

  private async remove(session: ImapFlow, folder: string, uid: string): Promise<void> {
    const lock = await session.getMailboxLock(folder);
    try {
      await session.messageDelete(uid, { uid: true });
    } finally {
      lock.release();
    }
  }
}
