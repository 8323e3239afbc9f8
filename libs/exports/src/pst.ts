import { PSTFile, type PSTFolder, type PSTMessage } from 'pst-extractor';
import type Mail from 'nodemailer/lib/mailer/index.js';
import { MAIL_CLASS, outlookMime, type OutlookAddress, type OutlookMessage } from './outlook-mime.js';

/** A message of an Outlook data file, as the Internet message it stands for. */
export interface PstMessage {
  /** Its folder's path and its node id in the file: the same on every read of that file. */
  key: string;
  /** Its folder below the store's top (`Inbox`, `Projects/2009`): a label. */
  folder: string | undefined;
  read: boolean;
  /** When it arrived (or was sent), ISO: its date where its Date header is unreadable. */
  received: string | undefined;
  bytes: Buffer;
}

/** An item of an Outlook data file not read, and why (a contact, an appointment, one it could not read). */
export interface PstSkipped {
  key: string;
  skipped: string;
}

/** Outlook's own folders above the mailbox's: a PST's `Top of Personal Folders`, an OST's `Root - Mailbox/IPM_SUBTREE`. */
const CONTAINER = /^(top of .*|root - .*|ipm_subtree)$/i;

/** MAPI properties pst-extractor does not name: PR_INTERNET_REFERENCES, PR_CONVERSATION_INDEX, PR_SENDER_SMTP_ADDRESS. */
const REFERENCES = 0x1039;
const CONVERSATION_INDEX = 0x0071;
const SENDER_SMTP_ADDRESS = 0x5d01;

/** The properties pst-extractor reads but keeps protected. */
interface Properties {
  getStringItem(id: number): string;
  getBinaryItem(id: number): Buffer | null;
}

/** What a message class is, for a skip reason (`IPM.Contact` → a contact). */
const KINDS: Array<[RegExp, string]> = [
  [/^ipm\.contact/i, 'a contact'],
  [/^ipm\.distlist/i, 'a contact group'],
  [/^ipm\.appointment/i, 'a calendar entry'],
  [/^ipm\.task/i, 'a task'],
  [/^ipm\.stickynote/i, 'a note'],
  [/^ipm\.activity/i, 'a journal entry'],
];

/**
 * Every item of an Outlook data file (`.pst`, or an `.ost` Outlook keeps offline), folder by
 * folder: mail as MIME (see `outlookMime`), with its folder and read mark; the rest (contacts,
 * calendar entries, tasks, notes) and what cannot be read are skipped, each with why.
 */
export async function* readPst(file: string): AsyncGenerator<PstMessage | PstSkipped> {
  let pst: PSTFile;
  try {
    pst = new PSTFile(file);
  } catch (error) {
    throw new Error(`${file}: not an Outlook data file it can read (${(error as Error).message})`);
  }
  try {
    yield* folderItems(pst.getRootFolder(), []);
  } finally {
    pst.close();
  }
}

/** How many items an Outlook data file holds, mail or not: what `readPst` goes through. */
export function pstItemCount(file: string): number {
  const pst = new PSTFile(file);
  try {
    const count = (folder: PSTFolder): number =>
      folder.contentCount + (folder.hasSubfolders ? folder.getSubFolders().reduce((n, f) => n + count(f), 0) : 0);
    return count(pst.getRootFolder());
  } finally {
    pst.close();
  }
}

async function* folderItems(folder: PSTFolder, path: string[]): AsyncGenerator<PstMessage | PstSkipped> {
  if (folder.hasSubfolders) {
    for (const child of folder.getSubFolders()) yield* folderItems(child, [...path, child.displayName]);
  }
  if (folder.contentCount === 0) return;
  const label = path.filter((name) => !CONTAINER.test(name));
  for (let item = folder.getNextChild() as PSTMessage | null; item; item = folder.getNextChild() as PSTMessage | null) {
    const key = `${path.join('/')}#${item.descriptorNodeId.toString()}`;
    const kind = KINDS.find(([pattern]) => pattern.test(item!.messageClass))?.[1];
    if (kind || !MAIL_CLASS.test(item.messageClass)) {
      yield { key, skipped: `${kind ?? 'an item'} (${item.messageClass}): only mail is read from Outlook data files` };
      continue;
    }
    try {
      const bytes = await outlookMime(await messageOf(item));
      const received = (item.messageDeliveryTime ?? item.clientSubmitTime)?.toISOString();
      yield { key, folder: label.length > 0 ? label.join('/') : undefined, read: item.isRead, received, bytes };
    } catch (error) {
      yield { key, skipped: `an unreadable message: ${(error as Error).message}` };
    }
  }
}

async function messageOf(message: PSTMessage): Promise<OutlookMessage> {
  const properties = message as unknown as Properties;
  const recipients = (type: number): OutlookAddress[] => {
    const found: OutlookAddress[] = [];
    for (let i = 0; i < message.numberOfRecipients; i++) {
      const recipient = message.getRecipient(i);
      if (!recipient || recipient.recipientType !== type) continue;
      const address = smtpOf(recipient.addrType, recipient.emailAddress, recipient.smtpAddress);
      if (address) found.push({ name: recipient.displayName, address });
    }
    return found;
  };
  const sender = smtpOf(
    message.senderAddrtype,
    message.senderEmailAddress,
    properties.getStringItem(SENDER_SMTP_ADDRESS),
  );
  const date = message.clientSubmitTime ?? message.messageDeliveryTime;
  const index = properties.getBinaryItem(CONVERSATION_INDEX);
  const references = properties.getStringItem(REFERENCES);
  // Outlook keeps a body as text, HTML or RTF; one kept only as RTF comes as the message's RTF file.
  const rtf = !message.body.trim() && !message.bodyHTML ? message.bodyRTF : '';
  return {
    transportHeaders: message.transportMessageHeaders || null,
    ...(sender ? { from: { name: message.senderName, address: sender } } : {}),
    to: recipients(1),
    cc: recipients(2),
    bcc: recipients(3),
    subject: message.subject,
    ...(date ? { date } : {}),
    ...(message.internetMessageId ? { messageId: message.internetMessageId } : {}),
    ...(message.inReplyToId ? { inReplyTo: message.inReplyToId } : {}),
    ...(references ? { references } : {}),
    ...(index && index.length > 0 ? { threadIndex: index.toString('base64') } : {}),
    text: message.body,
    ...(message.bodyHTML ? { html: message.bodyHTML } : {}),
    attachments: [
      ...(await attachmentsOf(message)),
      ...(rtf
        ? [{ filename: 'message.rtf', content: Buffer.from(rtf, 'latin1'), contentType: 'application/rtf' }]
        : []),
    ],
  };
}

/** An address as SMTP: an Exchange one (`/O=ENRON/OU=NA/CN=RECIPIENTS/CN=DLEE`) only by its SMTP property. */
function smtpOf(type: string, address: string, smtp: string): string | undefined {
  if (smtp?.includes('@')) return smtp;
  return type.toUpperCase() !== 'EX' && address.includes('@') ? address : undefined;
}

/** ATTACH_EMBEDDED_MSG: a message attached to a message (a forward as attachment). */
const EMBEDDED = 5;

/** Its files, and the messages attached to it as messages (.eml) in turn. */
async function attachmentsOf(message: PSTMessage): Promise<Mail.Attachment[]> {
  const attachments: Mail.Attachment[] = [];
  for (let i = 0; i < message.numberOfAttachments; i++) {
    const attachment = message.getAttachment(i);
    const embedded = attachment.attachMethod === EMBEDDED ? attachment.embeddedPSTMessage : null;
    if (embedded) {
      const name = (embedded.subject || `message-${i + 1}`).replace(/[\\/:*?"<>|]+/g, ' ').trim();
      attachments.push({
        filename: `${name}.eml`,
        content: await outlookMime(await messageOf(embedded)),
        contentType: 'message/rfc822',
      });
      continue;
    }
    const stream = attachment.fileInputStream;
    if (!stream) continue;
    const content = Buffer.alloc(attachment.filesize);
    stream.readCompletely(content);
    attachments.push({
      filename: attachment.longFilename || attachment.filename || `attachment-${i + 1}`,
      content,
      ...(attachment.mimeTag ? { contentType: attachment.mimeTag } : {}),
      ...(attachment.contentId ? { cid: attachment.contentId } : {}),
    });
  }
  return attachments;
}
