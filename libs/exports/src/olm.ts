import path from 'node:path';
import { XMLValidator } from 'fast-xml-parser';
import type Mail from 'nodemailer/lib/mailer/index.js';
import { files } from './files.js';
import { walkFolder } from './folder.js';
import { olmDate, readOlmEntries, type OlmEntry } from './olm-calendar.js';
import { elementText, xmlParser } from './xml.js';
import { outlookMime, type OutlookAddress, type OutlookMessage } from './outlook-mime.js';
import type { PstMessage, PstSkipped } from './pst.js';

/**
 * Outlook for Mac's archive (`.olm`): a zip holding, per account,
 * `Accounts/<account>/com.microsoft.__Messages/<folder>/message_00000.xml`, one message each
 * (`<emails><email>` with `OPFMessageCopy…` fields), the files its attachments name
 * (`OPFAttachmentURL`), and its calendars' and address books' XML files (see olm-calendar.ts).
 * Read mounted as a folder (see zip.ts); each message becomes the Internet message it stands for
 * (see `outlookMime`), with its folder as a label and its read mark.
 */

const MESSAGE_FILE = /(^|\/)com\.microsoft\.__Messages\/(.+)\/message_\d+\.xml$/;

const parser = xmlParser(['emailAddress', 'messageAttachment', 'email']);

/** An `<emailAddress OPFContactEmailAddressAddress=… OPFContactEmailAddressName=…/>` list. */
interface AddressList {
  emailAddress?: Array<{ OPFContactEmailAddressAddress?: string; OPFContactEmailAddressName?: string }>;
}

interface OlmEmail {
  OPFMessageCopySubject?: string;
  OPFMessageCopySenderAddress?: AddressList;
  OPFMessageCopyFromAddresses?: AddressList;
  OPFMessageCopyToAddresses?: AddressList;
  OPFMessageCopyCCAddresses?: AddressList;
  OPFMessageCopyBCCAddresses?: AddressList;
  OPFMessageCopySentTime?: string;
  OPFMessageCopyReceivedTime?: string;
  OPFMessageCopyMessageID?: string;
  OPFMessageCopyInReplyTo?: string;
  OPFMessageCopyReferences?: string;
  OPFMessageCopyThreadIndex?: string;
  OPFMessageCopyBody?: string;
  OPFMessageCopyHTMLBody?: string;
  OPFMessageGetIsRead?: string;
  OPFMessageCopyAttachmentList?: {
    messageAttachment?: Array<{
      OPFAttachmentName?: string;
      OPFAttachmentContentType?: string;
      OPFAttachmentContentID?: string;
      OPFAttachmentURL?: string;
    }>;
  };
}

const text = elementText;

const addresses = (list: AddressList | undefined): OutlookAddress[] =>
  (list?.emailAddress ?? []).flatMap((entry) => {
    const address = entry.OPFContactEmailAddressAddress?.trim();
    return address ? [{ name: entry.OPFContactEmailAddressName?.trim() ?? '', address }] : [];
  });

const olmTime = (value: unknown): Date | undefined => olmDate(text(value).trim()) ?? undefined;

const bracketed = (id: string) => `<${id.trim().replace(/^<|>$/g, '')}>`;

/** What an archive's files are when they are not messages, for the summary. */
function notAMessage(key: string, attachments: ReadonlySet<string>): string {
  if (attachments.has(key)) return 'an attachment of a message, sent inside it';
  if (/com\.microsoft\.__Attachments\//.test(key)) return 'an attachment no message of the archive names';
  if (/(Tasks|Notes)\b/i.test(key)) return 'tasks and notes are not read from .olm archives yet';
  return 'not a message of the archive (Outlook for Mac keeps its settings and categories here)';
}

/** How many entries `readOlm` goes through in an archive mounted at `root`: its files, each appointment and contact counted. */
export async function olmFileCount(root: string): Promise<number> {
  const keys: string[] = [];
  const skipped = await walkFolder(root, ({ key }) => void keys.push(key));
  let count = skipped.length;
  for (const key of keys) {
    const entries = MESSAGE_FILE.test(key) ? null : await calendarOrContacts(root, key).catch(() => null);
    count += Math.max(1, entries?.length ?? 1);
  }
  return count;
}

/** The appointments or contacts in an XML file of the archive, or null for any other file. */
async function calendarOrContacts(root: string, key: string): Promise<OlmEntry[] | null> {
  if (!key.toLowerCase().endsWith('.xml')) return null;
  const xml = (await files.readFile(path.join(root, key))).toString('utf8');
  const valid = XMLValidator.validate(xml);
  if (valid !== true) throw new Error(`its XML is broken at line ${valid.err.line} (${valid.err.msg})`);
  const read = readOlmEntries(xml);
  return read.kind === 'other' ? null : read.entries;
}

/**
 * Every message of an Outlook for Mac archive mounted at `root`, in a stable order: as MIME, with
 * its folder and read mark; then its appointments and contacts as iCalendar events and vCards (see
 * olm-calendar.ts); every other file accounted for, skipped with why (an attachment sent inside
 * its message, tasks and notes not read yet), and a message or entry that cannot be read too.
 */
export async function* readOlm(root: string): AsyncGenerator<PstMessage | PstSkipped> {
  const messages: string[] = [];
  const others: string[] = [];
  const walked = await walkFolder(root, ({ key }) => void (MESSAGE_FILE.test(key) ? messages : others).push(key));
  for (const { key, reason } of walked) yield { key, skipped: reason };
  const attachments = new Set<string>();
  for (const key of messages) {
    const folder = MESSAGE_FILE.exec(key)![2]!;
    try {
      const xml = (await files.readFile(path.join(root, key))).toString('utf8');
      // The parser reads what it can of a file cut short; such a message is not sent half-read.
      const valid = XMLValidator.validate(xml);
      if (valid !== true) throw new Error(`its XML is broken at line ${valid.err.line} (${valid.err.msg})`);
      const parsed = parser.parse(xml) as { emails?: { email?: OlmEmail[] } };
      const email = parsed.emails?.email?.[0];
      if (!email) throw new Error('no <emails><email> in it');
      const attached: Mail.Attachment[] = [];
      const missing: PstSkipped[] = [];
      for (const attachment of email.OPFMessageCopyAttachmentList?.messageAttachment ?? []) {
        const url = attachment.OPFAttachmentURL?.trim();
        if (!url) continue;
        attachments.add(url);
        // A path out of the archive (`../`, absolute) names nothing in it: never a file of the disk.
        const inside = path.posix.normalize(url);
        const content =
          inside.startsWith('../') || path.posix.isAbsolute(inside)
            ? null
            : await files.readFile(path.join(root, inside)).catch(() => null);
        if (!content) {
          // The message comes without it; the summary says which.
          missing.push({ key: url, skipped: `an attachment of ${key}, missing from the archive: sent without it` });
          continue;
        }
        attached.push({
          filename: attachment.OPFAttachmentName || path.posix.basename(url),
          content,
          ...(attachment.OPFAttachmentContentType ? { contentType: attachment.OPFAttachmentContentType } : {}),
          ...(attachment.OPFAttachmentContentID ? { cid: attachment.OPFAttachmentContentID } : {}),
        });
      }
      const from = addresses(email.OPFMessageCopyFromAddresses)[0] ?? addresses(email.OPFMessageCopySenderAddress)[0];
      const date = olmTime(email.OPFMessageCopySentTime) ?? olmTime(email.OPFMessageCopyReceivedTime);
      const id = text(email.OPFMessageCopyMessageID);
      const message: OutlookMessage = {
        transportHeaders: null,
        ...(from ? { from } : {}),
        to: addresses(email.OPFMessageCopyToAddresses),
        cc: addresses(email.OPFMessageCopyCCAddresses),
        bcc: addresses(email.OPFMessageCopyBCCAddresses),
        subject: text(email.OPFMessageCopySubject),
        ...(date ? { date } : {}),
        ...(id.trim() ? { messageId: bracketed(id) } : {}),
        ...(text(email.OPFMessageCopyInReplyTo).trim()
          ? { inReplyTo: bracketed(text(email.OPFMessageCopyInReplyTo)) }
          : {}),
        ...(text(email.OPFMessageCopyReferences).trim()
          ? { references: text(email.OPFMessageCopyReferences).trim() }
          : {}),
        ...(text(email.OPFMessageCopyThreadIndex).trim()
          ? { threadIndex: text(email.OPFMessageCopyThreadIndex).trim() }
          : {}),
        text: text(email.OPFMessageCopyBody),
        ...(text(email.OPFMessageCopyHTMLBody).trim() ? { html: text(email.OPFMessageCopyHTMLBody) } : {}),
        attachments: attached,
      };
      yield* missing;
      yield {
        key,
        type: 'message/rfc822',
        folder,
        read: /^(1|true|yes)$/i.test(text(email.OPFMessageGetIsRead).trim()),
        received: olmTime(email.OPFMessageCopyReceivedTime)?.toISOString(),
        bytes: await outlookMime(message),
      };
    } catch (error) {
      yield { key, skipped: `an unreadable message: ${(error as Error).message}` };
    }
  }
  for (const key of others) {
    let entries: OlmEntry[] | null;
    try {
      entries = await calendarOrContacts(root, key);
    } catch (error) {
      yield { key, skipped: `an unreadable file: ${(error as Error).message}` };
      continue;
    }
    if (!entries) {
      yield { key, skipped: notAMessage(key, attachments) };
      continue;
    }
    for (const entry of entries) {
      // One entry a file (as Outlook 2016 and later write them) is known by the file.
      const entryKey = entries.length === 1 ? key : `${key}#${entry.id.replace(/^#/, '')}`;
      if (!entry.bytes) yield { key: entryKey, skipped: entry.skipped ?? 'an entry that cannot be read' };
      else
        yield {
          key: entryKey,
          type: entry.type,
          folder: undefined,
          read: false,
          received: undefined,
          bytes: entry.bytes,
        };
    }
  }
}
