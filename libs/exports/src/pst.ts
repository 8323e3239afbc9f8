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
  const pst = openPst(file);
  try {
    yield* folderItems(pst.getRootFolder(), []);
  } finally {
    pst.close();
  }
}

/** How many items an Outlook data file holds, mail or not: what `readPst` goes through. */
export function pstItemCount(file: string): number {
  const pst = openPst(file);
  try {
    const count = (folder: PSTFolder): number =>
      isSearchFolder(folder)
        ? 0
        : folder.contentCount + (folder.hasSubfolders ? folder.getSubFolders().reduce((n, f) => n + count(f), 0) : 0);
    return count(pst.getRootFolder());
  } finally {
    pst.close();
  }
}

function openPst(file: string): PSTFile {
  try {
    return new PSTFile(file);
  } catch (error) {
    throw new Error(`${file}: not an Outlook data file it can read (${(error as Error).message})`);
  }
}

/** Where pst-extractor's cursor through a folder's items stands (a field it keeps public in JS only). */
interface ItemCursor {
  currentEmailIndex: number;
}

const UNREADABLE_ITEM = 'an item its folder lists that could not be read from the file';

/** NID_TYPE_SEARCH_FOLDER (MS-PST 2.2.2.1): a saved search (Outlook's Reminders), whose items other folders hold. */
const SEARCH_FOLDER = 0x03;
const isSearchFolder = (folder: PSTFolder) => (folder.descriptorNodeId.toNumber() & 0x1f) === SEARCH_FOLDER;

async function* folderItems(folder: PSTFolder, path: string[]): AsyncGenerator<PstMessage | PstSkipped> {
  if (isSearchFolder(folder)) return;
  let subfolders: PSTFolder[] = [];
  try {
    if (folder.hasSubfolders) subfolders = folder.getSubFolders();
  } catch (error) {
    yield { key: path.join('/'), skipped: `its subfolders could not be read (${(error as Error).message})` };
  }
  for (const child of subfolders) yield* folderItems(child, [...path, child.displayName]);
  if (folder.contentCount === 0) return;
  const label = path.filter((name) => !CONTAINER.test(name));
  const cursor = folder as unknown as ItemCursor;
  const unreadable = (from: number, to: number) =>
    Array.from({ length: to - from }, (_, i) => ({
      key: `${path.join('/')}#item${from + i + 1}`,
      skipped: UNREADABLE_ITEM,
    }));
  for (;;) {
    const before = cursor.currentEmailIndex;
    const item = nextItem(folder);
    // pst-extractor passes over an item it cannot load: each one passed over is counted, not lost.
    yield* unreadable(before, cursor.currentEmailIndex - (item ? 1 : 0));
    if (!item) break;
    const key = `${path.join('/')}#${item.descriptorNodeId.toString()}`;
    const kind = KINDS.find(([pattern]) => pattern.test(item.messageClass))?.[1];
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
  // Items the folder counts that its table of items ended before.
  yield* unreadable(cursor.currentEmailIndex, folder.contentCount);
}

/**
 * The folder's next item, or null after the last. pst-extractor says on stdout (console.log) when
 * it passes over one it cannot load, which would garble `memex import --json`: silenced here, and
 * the cursor tells what was passed over.
 */
function nextItem(folder: PSTFolder): PSTMessage | null {
  const log = console.log;
  console.log = () => undefined;
  try {
    return folder.getNextChild() as PSTMessage | null;
  } finally {
    console.log = log;
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
