import { createHash } from 'node:crypto';
import { PSTFile, type PSTFolder, type PSTMessage } from 'pst-extractor';
// Not exported from the package's index, but what it gives for IPM.Appointment and IPM.Contact items.
import type { PSTAppointment } from 'pst-extractor/dist/PSTAppointment.class.js';
import type { PSTContact } from 'pst-extractor/dist/PSTContact.class.js';
import type Mail from 'nodemailer/lib/mailer/index.js';
import { appointmentIcs, contactVcf, type OutlookAppointment, type OutlookContact } from './outlook-calendar.js';
import { MAIL_CLASS, outlookMime, type OutlookAddress, type OutlookMessage } from './outlook-mime.js';

/** An item of an Outlook data file as the file it stands for: a message as MIME, a calendar entry as iCalendar, a contact as vCard. */
export interface PstMessage {
  /** Its folder's path and its node id in the file: the same on every read of that file. */
  key: string;
  type: 'message/rfc822' | 'text/calendar' | 'text/vcard';
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

const CONTACT_CLASS = /^ipm\.contact/i;
const APPOINTMENT_CLASS = /^ipm\.appointment/i;

/** What a message class not read is, for a skip reason (`IPM.Task` → a task). */
const KINDS: Array<[RegExp, string]> = [
  [/^ipm\.distlist/i, 'a contact group'],
  [/^ipm\.task/i, 'a task'],
  [/^ipm\.stickynote/i, 'a note'],
  [/^ipm\.activity/i, 'a journal entry'],
];

/**
 * Every item of an Outlook data file (`.pst`, or an `.ost` Outlook keeps offline), folder by
 * folder: mail as MIME (see `outlookMime`), with its folder and read mark; calendar entries as
 * iCalendar and contacts as vCard (see outlook-calendar.ts); the rest (tasks, notes, contact
 * groups) and what cannot be read are skipped, each with why.
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

/** Why an Outlook data file cannot be read at all (not one, or damaged where it starts), or null. */
export function pstOpenProblem(file: string): string | null {
  try {
    openPst(file).close();
    return null;
  } catch (error) {
    return `an Outlook data file that cannot be read (${(error as Error).message.replace(`${file}: `, '')})`;
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
    const type = APPOINTMENT_CLASS.test(item.messageClass)
      ? 'text/calendar'
      : CONTACT_CLASS.test(item.messageClass)
        ? 'text/vcard'
        : 'message/rfc822';
    if (kind || (type === 'message/rfc822' && !MAIL_CLASS.test(item.messageClass))) {
      yield {
        key,
        skipped: `${kind ?? 'an item'} (${item.messageClass}): only mail, calendar entries and contacts are read from Outlook data files`,
      };
      continue;
    }
    try {
      const bytes =
        type === 'text/calendar'
          ? Buffer.from(appointmentIcs(appointmentOf(item as PSTAppointment, key)))
          : type === 'text/vcard'
            ? Buffer.from(contactVcf(contactOf(item as PSTContact)))
            : await outlookMime(await messageOf(item));
      const received = (item.messageDeliveryTime ?? item.clientSubmitTime)?.toISOString();
      const folder = label.length > 0 ? label.join('/') : undefined;
      yield { key, type, folder, read: item.isRead, received, bytes };
    } catch (error) {
      const what = type === 'text/calendar' ? 'calendar entry' : type === 'text/vcard' ? 'contact' : 'message';
      yield { key, skipped: `an unreadable ${what}: ${(error as Error).message}` };
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
  const recipients = (type: number) => recipientsOf(message, type);
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

/** Named properties pst-extractor does not name (MS-OXPROPS): PidLidGlobalObjectId, PidLidTimeZoneDescription, PidLidAppointmentRecur. */
const GLOBAL_OBJECT_ID = 0x0003;
const TIME_ZONE_DESCRIPTION = 0x8234;
const APPOINTMENT_RECUR = 0x8216;
/** Their property sets, as pst-extractor numbers them (OutlookProperties). */
const PSETID_APPOINTMENT = 4;
const PSETID_MEETING = 5;

/** Reading a named property: its id in this file, then its value. */
interface NamedProperties {
  pstFile: PSTFile;
  getStringItem(id: number): string;
  getBinaryItem(id: number): Buffer | null;
}

/** The recipients of a message or appointment of one type (1 to, 2 cc, 3 bcc: required, optional, resource attendees). */
function recipientsOf(message: PSTMessage, type: number): OutlookAddress[] {
  const found: OutlookAddress[] = [];
  for (let i = 0; i < message.numberOfRecipients; i++) {
    const recipient = message.getRecipient(i);
    if (!recipient || recipient.recipientType !== type) continue;
    const address = smtpOf(recipient.addrType, recipient.emailAddress, recipient.smtpAddress);
    if (address) found.push({ name: recipient.displayName, address });
  }
  return found;
}

/** Where PidLidGlobalObjectId keeps the UID of a meeting Outlook was invited to from elsewhere ([MS-OXOCAL] 2.2.1.27). */
const VCAL_UID = Buffer.from('vCal-Uid\x01\x00\x00\x00', 'latin1');

/**
 * The iCalendar UID of a meeting: the one its invitation came with (Google's `…@google.com`,
 * kept inside the global object id), else the id in hex, as Outlook writes it in the invitations
 * it sends. Null for an empty id.
 */
function uidOfGlobalId(id: Buffer): string | null {
  if (id.length === 0) return null;
  const data = id.subarray(40);
  if (data.subarray(0, VCAL_UID.length).equals(VCAL_UID)) {
    const uid = data.subarray(VCAL_UID.length);
    const end = uid.indexOf(0);
    return uid.subarray(0, end >= 0 ? end : uid.length).toString('utf8');
  }
  return id.toString('hex').toUpperCase();
}

/** An appointment's fields; its UID the one Outlook puts in its invitations (the global object id), else one from its place. */
function appointmentOf(item: PSTAppointment, key: string): OutlookAppointment {
  const named = item as unknown as NamedProperties;
  const property = (id: number, set: number) => named.pstFile.getNameToIdMapItem(id, set);
  const globalId = named.getBinaryItem(property(GLOBAL_OBJECT_ID, PSETID_MEETING));
  const start = item.startTime ?? item.clientSubmitTime ?? item.creationTime;
  if (!start) throw new Error('it has no start time');
  const attendees = (
    [
      [1, 'required'],
      [2, 'optional'],
      [3, 'resource'],
    ] as const
  ).flatMap(([type, role]) => recipientsOf(item, type).map((address) => ({ ...address, role })));
  const organizer = smtpOf(item.senderAddrtype, item.senderEmailAddress, named.getStringItem(SENDER_SMTP_ADDRESS));
  return {
    uid:
      (globalId && uidOfGlobalId(globalId)) ??
      `${createHash('sha256').update(`${key}\n${item.subject}\n${start.toISOString()}`).digest('hex').slice(0, 32)}@outlook`,
    subject: item.subject,
    location: item.location,
    description: item.body,
    start,
    end: item.endTime ?? start,
    allDay: item.subType,
    organizer: organizer && attendees.length > 0 ? { name: item.senderName, address: organizer } : null,
    attendees,
    categories: item.colorCategories,
    recurrence: item.isRecurring ? named.getBinaryItem(property(APPOINTMENT_RECUR, PSETID_APPOINTMENT)) : null,
    timeZone: item.timezone,
    timeZoneName: named.getStringItem(property(TIME_ZONE_DESCRIPTION, PSETID_APPOINTMENT)),
    recurrenceText: item.recurrencePattern,
    created: item.creationTime,
    modified: item.modificationTime,
  };
}

/** A contact's fields: its SMTP addresses, phones and addresses by kind. */
function contactOf(item: PSTContact): OutlookContact {
  const emails = [
    [item.email1AddressType, item.email1EmailAddress, item.email1OriginalDisplayName],
    [item.email2AddressType, item.email2EmailAddress, item.email2OriginalDisplayName],
    [item.email3AddressType, item.email3EmailAddress, item.email3OriginalDisplayName],
  ].flatMap(([type, address, shown]) => smtpOf(type!, address!, shown!) ?? []);
  const phones = (
    [
      [item.primaryTelephoneNumber, ['PREF', 'VOICE']],
      [item.businessTelephoneNumber, ['WORK', 'VOICE']],
      [item.business2TelephoneNumber, ['WORK', 'VOICE']],
      [item.companyMainPhoneNumber, ['WORK', 'VOICE']],
      [item.homeTelephoneNumber, ['HOME', 'VOICE']],
      [item.home2TelephoneNumber, ['HOME', 'VOICE']],
      [item.mobileTelephoneNumber, ['CELL', 'VOICE']],
      [item.carTelephoneNumber, ['CAR', 'VOICE']],
      [item.otherTelephoneNumber, ['VOICE']],
      [item.assistantTelephoneNumber, ['VOICE']],
      [item.callbackTelephoneNumber, ['VOICE']],
      [item.radioTelephoneNumber, ['VOICE']],
      [item.pagerTelephoneNumber, ['PAGER']],
      [item.isdnNumber, ['ISDN']],
      [item.ttytddPhoneNumber, ['TEXTPHONE']],
      [item.primaryFaxNumber, ['FAX']],
      [item.businessFaxNumber, ['WORK', 'FAX']],
      [item.homeFaxNumber, ['HOME', 'FAX']],
    ] as Array<[string, string[]]>
  ).flatMap(([number, types]) => (number?.trim() ? [{ number: number.trim(), types }] : []));
  const address = (
    types: string[],
    poBox: string,
    street: string,
    city: string,
    region: string,
    postalCode: string,
    country: string,
  ) =>
    [poBox, street, city, region, postalCode, country].some((part) => part?.trim())
      ? [{ types, poBox, street, city, region, postalCode, country }]
      : [];
  // Outlook keeps a birthday at local midnight in UTC: its date is the nearest midnight's.
  const birthday = item.birthday ? new Date(Math.round(item.birthday.getTime() / 86_400_000) * 86_400_000) : null;
  return {
    displayName: item.displayName,
    givenName: item.givenName,
    middleName: item.middleName,
    surname: item.surname,
    prefix: item.displayNamePrefix,
    suffix: item.generation,
    nickname: item.nickname,
    company: item.companyName,
    department: item.departmentName,
    title: item.title,
    emails: [...new Set(emails)],
    phones,
    addresses: [
      ...address(
        ['WORK'],
        item.workAddressPostOfficeBox || item.businessPoBox,
        item.workAddressStreet || item.businessAddressStreet,
        item.workAddressCity || item.businessAddressCity,
        item.workAddressState || item.businessAddressStateOrProvince,
        item.workAddressPostalCode || item.businessPostalCode,
        item.workAddressCountry || item.businessAddressCountry,
      ),
      ...address(
        ['HOME'],
        item.homeAddressPostOfficeBox,
        item.homeAddressStreet,
        item.homeAddressCity,
        item.homeAddressStateOrProvince,
        item.homeAddressPostalCode,
        item.homeAddressCountry,
      ),
      ...address(
        [],
        item.otherAddressPostOfficeBox,
        item.otherAddressStreet,
        item.otherAddressCity,
        item.otherAddressStateOrProvince,
        item.otherAddressPostalCode,
        item.otherAddressCountry,
      ),
    ],
    urls: [item.businessHomePage, item.personalHomePage].filter((url) => url?.trim()),
    birthday,
    note: item.body,
    categories: item.colorCategories,
    modified: item.modificationTime,
  };
}
