import { simpleParser, type AddressObject, type Attachment, type EmailAddress, type ParsedMail } from 'mailparser';
import { Type } from '@sinclair/typebox';
import { safeFileName, typeOfFileName } from '@memex/contracts';
import {
  RejectedItem,
  type Address,
  type AttachmentItem,
  type EmailItem,
  type IngestHandler,
  type MailMeta,
  type ParsedItem,
} from '../handler.js';
import { collapseWhitespace, htmlToPlainText, sha256Hex } from '../text.js';
import { documentTypeFor, parseDocument } from '../document/document-handler.js';
import { parseCalendar } from '../calendar/calendar-handler.js';
import { base64Problem } from '../base64.js';
import { headerValue, leadingJunkLength, readMessage, walk, type MimeNode, type RawHeader } from './mime.js';
import { plausibleDate } from '../normalize.js';
import { repairForParsing, spelledOutAddresses } from './repair.js';
import { decodeUtf7, decodeUtf7Words, utf16Message } from './wide-charsets.js';
import { normaliseMessageId, outlookConversation, parseIdList, threadKey } from './threading.js';
import { gmailState, takeoutLabels } from './gmail-labels.js';
import { writtenDate } from '../dates.js';
import { extractUuencoded } from './uuencode.js';
import { TNEF_TYPES, isTnef, readTnef, type TnefContent } from './tnef.js';
import { openSmime } from './smime.js';
import { PGP_MIME_ENCRYPTED, isPgpMimeEncrypted, readInlineOpenPgp } from './openpgp.js';
import { clientMarks, OUTLOOK_MSG_TYPE } from '@memex/exports';
import { isOutlookMessage, outlookToMime } from './outlook.js';
import { APPLE_MAIL_TYPE, isAppleMailMessage, unwrapAppleMail } from './apple-mail.js';

/** The largest message taken, as in the seed's "As built": a message up to 25 MB. */
export const MAIL_LIMIT_BYTES = 25 * 1024 * 1024;

/** Forwarded messages inside messages are parsed this deep; deeper ones stay opaque attachments. */
const MAX_NESTED_MESSAGES = 3;

export const mailAttributesSchema = Type.Object(
  {
    folder: Type.Optional(
      Type.String({
        minLength: 1,
        description:
          'The folder the message was in; it becomes a label. A folder named Spam or Junk marks the message spam.',
      }),
    ),
    read: Type.Optional(Type.Boolean({ default: true, description: 'Whether the message has been read.' })),
    starred: Type.Optional(Type.Boolean({ default: false, description: 'Whether the message is starred (flagged).' })),
    received: Type.Optional(
      Type.String({
        format: 'date-time',
        description:
          'When the message arrived; used as its date when the Date header is missing, unreadable or implausible and no Received header has one.',
      }),
    ),
    modified: Type.Optional(
      Type.String({
        format: 'date-time',
        description: "The file's modification time (a single-message file); the date of last resort.",
      }),
    ),
  },
  { additionalProperties: false },
);

export interface MailAttributes {
  folder?: string;
  read?: boolean;
  starred?: boolean;
  received?: string;
  modified?: string;
}

/**
 * Header fields that only a message (or a MIME entity) has. Bytes whose header block has none of
 * them are not a message, even when their first line happens to look like `name: value`.
 */
const MESSAGE_FIELDS = new Set([
  'from',
  'sender',
  'reply-to',
  'to',
  'cc',
  'bcc',
  'subject',
  'date',
  'message-id',
  'in-reply-to',
  'references',
  'received',
  'return-path',
  'delivered-to',
  'mime-version',
  'content-type',
  'newsgroups',
  'resent-from',
  'resent-date',
  'resent-message-id',
  'x-mailer',
  'user-agent',
]);

const HEADER_FIELD_START = /^[\x21-\x39\x3b-\x7e]+[ \t]*:/;

/**
 * The rule for "is this a message at all" (the rest is kept, however broken):
 * the bytes are not empty, the first line is a header field (`Name: value`), the header block has
 * no NUL bytes (binary data), and at least one header field is one that messages have.
 * A message whose body is truncated or malformed is kept with what was readable.
 */
function rejectUnlessMessage(raw: string, root: MimeNode): void {
  const notMessage = (why: string) => new RejectedItem(`not an RFC 822 message: ${why}`);
  if (raw.trim().length === 0) throw notMessage('it is empty');
  if (!HEADER_FIELD_START.test(raw.slice(0, 1000)))
    throw notMessage('no headers (the first line is not a header field)');
  if (raw.slice(0, root.bodyStart).includes('\0')) throw notMessage('binary data in the header section');
  if (!root.headers.some((h) => MESSAGE_FIELDS.has(h.name))) {
    const seen = [...new Set(root.headers.map((h) => h.name))].slice(0, 5).map((n) => `"${n}"`);
    throw notMessage(`no message header fields (only ${seen.join(', ')})`);
  }
}

/**
 * An address an archive has hidden part of: Google Groups' `j...@gmail.com`, MHonArc's
 * `alice@xxxxxxx.xxx`, a `…` in place of letters. Many people share each such form.
 */
export function isHiddenAddress(address: string): boolean {
  const at = address.lastIndexOf('@');
  if (at < 0) return false;
  const local = address.slice(0, at);
  const domain = address.slice(at + 1);
  return /\.\.\.$|…/.test(local) || domain.includes('…') || /^x+(\.x+)*$/.test(domain);
}

function addresses(field: AddressObject | AddressObject[] | undefined): Address[] {
  const out: Address[] = [];
  const add = (entry: EmailAddress) => {
    if (entry.group) {
      entry.group.forEach(add);
      return;
    }
    const written = (entry.address ?? '').trim().toLowerCase();
    const hidden = isHiddenAddress(written);
    const address = hidden ? '' : written;
    // A hidden address is no one's identity (every j...@gmail.com would be one person); it still says who wrote.
    const name = collapseWhitespace(entry.name ?? '') || (hidden ? written : '');
    if (address || name) out.push({ name, address });
  };
  for (const object of Array.isArray(field) ? field : field ? [field] : []) object.value.forEach(add);
  return out;
}

/**
 * A folder that is Spam or Junk, or inside one ("[Gmail]/Spam", "INBOX.Junk", ".Junk", "Junk E-mail",
 * "Bulk Mail", "Spam/2009"): any segment of its path names it.
 */
export function isSpamFolder(folder: string): boolean {
  return folder
    .split(/[/\\.]/)
    .some((segment) => /^(spam|junk|bulk)([ _-]?(e-?mail|mail|folder))?$/i.test(segment.trim()));
}

/**
 * Why an upstream filter marked a message spam (`X-Spam-Flag: YES`, or SpamAssassin's
 * `X-Spam-Status: Yes, score=…`), or null.
 */
function spamHeader(headers: RawHeader[]): string | null {
  if (/^\s*yes\b/i.test(headerValue(headers, 'x-spam-flag') ?? '')) return 'X-Spam-Flag: YES';
  if (/^\s*yes\b/i.test(headerValue(headers, 'x-spam-status') ?? '')) return 'X-Spam-Status: Yes';
  return null;
}

/** The mail account an imported message belongs to, named after its source: `import:mbox:archive-2009`. */
export function importedMailAccount(source: { kind: string; id?: string | null }): string {
  return source.id ? `import:${source.kind}:${source.id}` : `import:${source.kind}`;
}

/**
 * Identity of a message without Message-ID: sha256 over its normalised From and To addresses, Date,
 * Subject and body text. Normalised (parsed, lowercased, whitespace collapsed) so that the same
 * message from two archives (different mbox escaping, line endings, Received or X-Folder headers)
 * has one identity, while two different messages almost never share it.
 */
function contentIdentity(meta: Pick<MailMeta, 'from' | 'to' | 'subject'>, date: string, text: string): string {
  const key = JSON.stringify([
    meta.from.map((a) => a.address),
    meta.to.map((a) => a.address),
    date,
    collapseWhitespace(meta.subject),
    collapseWhitespace(text),
  ]);
  return `mail-sha256:${sha256Hex(key)}`;
}

/**
 * When the message arrived, from its Received headers: the topmost one (the last hop, added on
 * delivery) whose date after the `;` is readable and plausible. What the message is dated by when
 * its own Date header is missing or implausible (spam dated 3609, a client's epoch).
 */
function receivedHeaderDate(headers: RawHeader[]): string | null {
  for (const header of headers) {
    if (header.name !== 'received') continue;
    const stamp = header.value.slice(header.value.lastIndexOf(';') + 1);
    const date = plausibleDate(writtenDate(stamp));
    if (date) return date;
  }
  return null;
}

/** Warnings about the MIME structure itself: truncation and broken base64 parts. */
function structureWarnings(raw: string, root: MimeNode): { truncated: boolean; warnings: string[] } {
  let truncated = false;
  const warnings: string[] = [];
  for (const node of walk(root)) {
    if (node.contentType.startsWith('multipart/') && !node.closed) truncated = true;
    if (node.transferEncoding === 'base64' && node.children.length === 0) {
      const problem = base64Problem(raw.slice(node.bodyStart, node.bodyEnd));
      const name = node.params.get('name');
      if (problem)
        warnings.push(
          `a ${node.contentType} part${name ? ` ("${name}")` : ''} has invalid base64 (${problem}); what decoded is kept`,
        );
    }
  }
  if (truncated)
    warnings.unshift('the message ends before its closing MIME boundary (truncated); what was readable is kept');
  return { truncated, warnings };
}

async function parseStructure(
  bytes: Buffer,
): Promise<{ mail: ParsedMail; root: MimeNode; raw: string; warnings: string[]; truncated: boolean }> {
  const wide = utf16Message(bytes);
  if (wide) bytes = wide.bytes;
  let raw = bytes.toString('latin1');
  const skip = leadingJunkLength(raw);
  if (skip > 0) {
    raw = raw.slice(skip);
    bytes = bytes.subarray(skip);
  }
  const root = readMessage(raw);
  rejectUnlessMessage(raw, root);
  const repaired = repairForParsing(bytes, raw, root);
  const mail = await simpleParser(withUtf7WordsDecoded(repaired.bytes, root), {
    skipHtmlToText: true,
    skipTextToHtml: true,
    skipTextLinks: true,
    skipImageLinks: true,
  });
  const structure = structureWarnings(raw, root);
  const warnings = [...structure.warnings, ...repaired.repairs];
  if (wide) warnings.push(`the whole message was ${wide.charset} (saved as Unicode); read as text`);
  if (decodeUtf7Parts(mail, root)) warnings.push('a UTF-7 text part was decoded');
  return { mail, root, raw, truncated: structure.truncated, warnings };
}

/** The header section with UTF-7 encoded words decoded to UTF-8 (which mailparser keeps as is). */
function withUtf7WordsDecoded(bytes: Buffer, root: MimeNode): Buffer {
  const head = bytes.subarray(0, root.bodyStart).toString('utf8');
  if (!/=\?utf-?7/i.test(head)) return bytes;
  return Buffer.concat([Buffer.from(decodeUtf7Words(head), 'utf8'), bytes.subarray(root.bodyStart)]);
}

/**
 * Text parts declared UTF-7 come out of mailparser undecoded (UTF-7 is 7-bit ASCII, so the text
 * is the UTF-7 itself): decoded here. True when there was one.
 */
function decodeUtf7Parts(mail: ParsedMail, root: MimeNode): boolean {
  const utf7 = [...walk(root)].some(
    (node) => node.children.length === 0 && /^utf-?7$/i.test(node.params.get('charset') ?? ''),
  );
  if (!utf7) return false;
  if (mail.text) mail.text = decodeUtf7(mail.text);
  if (typeof mail.html === 'string') mail.html = decodeUtf7(mail.html);
  return true;
}

/**
 * A Google Takeout message's `X-Gmail-Labels` (read as Gmail's label ids) and `X-GM-THRID`, or
 * null for any other message.
 */
function takeoutGmail(headers: RawHeader[]): MailMeta['gmail'] | null {
  const value = headerValue(headers, 'x-gmail-labels');
  if (value === null) return null;
  return { labels: takeoutLabels(value), threadId: headerValue(headers, 'x-gm-thrid')?.trim() || null };
}

/**
 * A lone sender without a name named by X-From, where converted archives keep it: the Enron
 * corpus (`From: phillip.allen@enron.com`, `X-From: Phillip K Allen`), exported from Lotus Notes.
 * Only a plain name counts (no address in it); Notes' `<Name/Org@Domain>` tail is dropped.
 */
function namedByXFrom(from: Address[], xFrom: string | null): Address[] {
  if (from.length !== 1 || from[0]!.name || !xFrom) return from;
  const name = collapseWhitespace(xFrom.replace(/<[^>]*>/g, '')).replace(/^"(.*)"$/, '$1');
  return name && !name.includes('@') ? [{ ...from[0]!, name }] : from;
}

/** X-Original-From (where a list that rewrote From keeps the sender), read as mailparser reads From. */
async function originalSender(headers: RawHeader[]): Promise<Address[]> {
  const value = headerValue(headers, 'x-original-from');
  if (!value?.trim()) return [];
  const readable = spelledOutAddresses(value) ?? value;
  return addresses((await simpleParser(Buffer.from(`From: ${readable}\r\n\r\n`, 'latin1'))).from);
}

async function parseMail(bytes: Buffer, attributes: MailAttributes, depth: number): Promise<EmailItem> {
  const smime = openSmime(bytes);
  const { mail, root, truncated, warnings } = await parseStructure(smime.bytes);
  if (smime.warning) warnings.push(smime.warning);
  if (isPgpMimeEncrypted(root)) warnings.push(PGP_MIME_ENCRYPTED);
  // Files uuencoded into the text (mail before MIME) are attachments, not words.
  const uuencoded = extractUuencoded(mail.text ?? '');
  const openpgp = readInlineOpenPgp(uuencoded.text);
  if (openpgp.warning) warnings.push(openpgp.warning);
  const plain = openpgp.text.trim() ? openpgp.text : '';
  const text = plain || (mail.html ? htmlToPlainText(mail.html) : '');
  const textSource = plain ? 'plain' : text ? 'html' : 'none';
  // Read here, not from mailparser, which puts the current time in place of a date it cannot parse.
  const dateHeader = headerValue(root.headers, 'date');
  const written = writtenDate(dateHeader);
  const date = plausibleDate(written);
  const relayed = date ? null : receivedHeaderDate(root.headers);
  const received = plausibleDate(attributes.received ? new Date(attributes.received).toISOString() : null);
  const modified = plausibleDate(attributes.modified ? new Date(attributes.modified).toISOString() : null);
  const occurredAt = date ?? relayed ?? received ?? modified;
  if (written && !date)
    warnings.push(
      `the Date header (${written}) is implausible: ${occurredAt ? 'dated by when it was received' : 'undated'}`,
    );
  if (dateHeader?.trim() && !written)
    warnings.push(
      `the Date header ("${collapseWhitespace(dateHeader).slice(0, 80)}") cannot be read: ${occurredAt ? 'dated by when it was received' : 'undated'}`,
    );
  const messageId = normaliseMessageId(headerValue(root.headers, 'message-id'));
  const references = parseIdList(headerValue(root.headers, 'references'));
  const inReplyTo = parseIdList(headerValue(root.headers, 'in-reply-to'))[0] ?? null;
  const conversation = outlookConversation(headerValue(root.headers, 'thread-index'));
  const subject = collapseWhitespace(mail.subject ?? '');
  const from = namedByXFrom(addresses(mail.from), headerValue(root.headers, 'x-from'));
  const to = addresses(mail.to);
  const identity = messageId
    ? `message-id:${messageId}`
    : contentIdentity({ from, to, subject }, date ?? collapseWhitespace(dateHeader ?? ''), text);
  const folder = attributes.folder ?? null;
  const gmail = takeoutGmail(root.headers);
  const gmailFlags = gmail ? gmailState(gmail.labels) : null;
  // Read and starred as an mbox client marked them in the header, where the caller says nothing.
  const marked = clientMarks((name) => headerValue(root.headers, name) ?? undefined);
  const spamReason =
    folder && isSpamFolder(folder)
      ? `folder "${folder}"`
      : gmailFlags?.spam
        ? 'Gmail label Spam (X-Gmail-Labels)'
        : spamHeader(root.headers);
  const listId = headerValue(root.headers, 'list-id');
  const originalFrom = await originalSender(root.headers);
  const meta: MailMeta = {
    messageId,
    inReplyTo,
    references,
    threadKey: threadKey({ messageId, inReplyTo, references, identity }),
    ...(conversation ? { conversation } : {}),
    subject,
    from,
    to,
    cc: addresses(mail.cc),
    bcc: addresses(mail.bcc),
    replyTo: addresses(mail.replyTo),
    date,
    dateSource: date ? 'header' : relayed ? 'received-header' : received ? 'received' : modified ? 'file' : null,
    spam: spamReason !== null,
    spamReason,
    ...(originalFrom.length > 0 ? { originalFrom } : {}),
    mailingList: listId ? (parseIdList(listId)[0] ?? (collapseWhitespace(listId).toLowerCase() || null)) : null,
    flags: {
      read: attributes.read ?? gmailFlags?.read ?? marked.read ?? true,
      starred: attributes.starred ?? gmailFlags?.starred ?? marked.starred ?? false,
    },
    folder,
    labels: [...new Set([...(folder ? [folder] : []), ...(gmailFlags?.mail_labels ?? [])])],
    ...(gmail ? { gmail } : {}),
    truncated,
    textSource,
  };
  const children: ParsedItem[] = [];
  for (const attachment of mail.attachments) {
    const tnef = tnefFiles(attachment, warnings);
    for (const part of tnef ?? [attachment])
      children.push(await parseAttachment(part, children.length, depth, occurredAt));
  }
  for (const file of uuencoded.files) {
    if (file.problem)
      warnings.push(
        `a uuencoded file${file.filename ? ` ("${file.filename}")` : ''} is broken: ${file.problem}; what decoded is kept`,
      );
    children.push(await parseAttachment(filePart(file.bytes, file.filename), children.length, depth, occurredAt));
  }
  return {
    kind: 'email',
    identity,
    title: subject || '(no subject)',
    text,
    occurredAt,
    warnings,
    meta,
    ...(children.length > 0 ? { children } : {}),
  };
}

/**
 * The files inside Outlook's `winmail.dat` (TNEF), each an attachment of the message as it was
 * for Outlook, or null for any other part. A stream that cannot be read stays the one attachment
 * it was, with a warning.
 */
function tnefFiles(attachment: AttachmentPart, warnings: string[]): AttachmentPart[] | null {
  const named = /^winmail\.dat$/i.test(attachment.filename ?? '');
  // mailparser leaves the type out of a part whose Content-Type it cannot read.
  if (!TNEF_TYPES.includes((attachment.contentType || '').toLowerCase()) && !named) return null;
  if (named && !isTnef(attachment.content)) return null;
  let content: TnefContent;
  try {
    content = readTnef(attachment.content);
  } catch (error) {
    warnings.push(
      `${attachment.filename ?? 'a TNEF part'} cannot be read (${(error as Error).message}): kept as it is`,
    );
    return null;
  }
  for (const name of content.unread)
    warnings.push(`${name} in ${attachment.filename ?? 'a TNEF part'} is an Outlook item, not a file: not read`);
  return content.files.map((file) => filePart(file.bytes, file.filename, file.contentType));
}

/** What an attachment item is made of: a MIME part as mailparser gives it, or a file uuencoded into the text. */
type AttachmentPart = Pick<
  Attachment,
  'content' | 'contentType' | 'filename' | 'cid' | 'contentDisposition' | 'related' | 'headers'
>;

/** A file found inside a part (uuencoded into the text, packed in winmail.dat), as mailparser gives a MIME part. */
function filePart(bytes: Buffer, filename: string | null, contentType: string | null = null): AttachmentPart {
  return {
    content: bytes,
    contentType: contentType ?? ((filename && typeOfFileName(filename)) || 'application/octet-stream'),
    filename: filename ?? undefined,
    contentDisposition: 'attachment',
    related: false,
    headers: new Map(),
  };
}

/**
 * An attachment becomes an attachment item: parsed by the document handler when its type (or, for
 * a generic octet-stream, its file name) is one it reads; a forwarded message is parsed as mail;
 * anything else is kept with its file name, type and size and no text.
 */
async function parseAttachment(
  attachment: AttachmentPart,
  index: number,
  depth: number,
  occurredAt: string | null,
): Promise<AttachmentItem> {
  const filename = attachment.filename ?? null;
  const contentType = (attachment.contentType || 'application/octet-stream').toLowerCase();
  const bytes = attachment.content;
  const item: AttachmentItem = {
    kind: 'attachment',
    identity: `sha256:${sha256Hex(bytes)}`,
    title: safeFileName(filename) ?? `attachment ${index + 1} (${contentType})`,
    text: '',
    occurredAt,
    warnings: [],
    contentBytes: bytes,
    meta: {
      filename,
      contentType,
      size: bytes.length,
      contentId: attachment.cid ?? null,
      inline: attachment.contentDisposition === 'inline' || attachment.related === true,
      parsedAs: null,
      document: null,
      email: null,
      unreadable: null,
    },
  };
  try {
    const outlook = contentType === OUTLOOK_MSG_TYPE || (/\.msg$/i.test(filename ?? '') && isOutlookMessage(bytes));
    if ((contentType === 'message/rfc822' || outlook) && depth < MAX_NESTED_MESSAGES) {
      const email = await parseMail(outlook ? await outlookToMime(bytes) : bytes, {}, depth + 1);
      Object.assign(item, { text: email.text, warnings: email.warnings, children: email.children });
      if (!filename) item.title = email.title;
      item.meta.parsedAs = 'email';
      item.meta.email = email.meta;
      return item;
    }
    if (contentType === 'text/calendar' || contentType === 'application/ics' || /\.ics$/i.test(filename ?? '')) {
      // An invitation or its answer: calendar-sync matches it to its event by UID.
      const calendar = await parseCalendar({ bytes, type: contentType, attributes: filename ? { filename } : {} });
      Object.assign(item, { text: calendar.text, warnings: calendar.warnings });
      if (!filename) item.title = calendar.title;
      item.meta.parsedAs = 'calendar';
      item.meta.calendar = calendar.meta;
      return item;
    }
    const documentType = documentTypeFor(contentType, filename, bytes);
    if (documentType) {
      const charset = (attachment.headers.get('content-type') as { params?: Record<string, string> } | undefined)
        ?.params?.charset;
      const document = await parseDocument({
        bytes,
        type: charset ? `${documentType}; charset=${charset}` : documentType,
        attributes: filename ? { filename } : {},
      });
      Object.assign(item, { text: document.text, warnings: document.warnings });
      if (!filename) item.title = document.title;
      item.meta.parsedAs = 'document';
      item.meta.document = document.meta;
    }
  } catch (error) {
    if (!(error instanceof RejectedItem) || error.unexpected) throw error;
    item.meta.unreadable = error.reason;
  }
  return item;
}

export const mailHandler: IngestHandler = {
  name: 'mail',
  types: ['message/rfc822', OUTLOOK_MSG_TYPE, APPLE_MAIL_TYPE],
  attributesSchema: mailAttributesSchema,
  identityRule:
    'Message-ID (normalised: without <>, lowercase); a message without one: sha256 of its From and To addresses, Date, Subject and body text. ' +
    'The same message from two sources is one item (an Outlook .msg, an Apple Mail .emlx and the same message saved as .eml too).',
  limitBytes: MAIL_LIMIT_BYTES,
  produces: ['email', 'attachment'],
  updatable: false,
  parse: async ({ bytes, type, attributes }) => {
    const declared = type.toLowerCase();
    // A .msg or an .emlx sent as message/rfc822 is still read as one: no RFC 822 message starts
    // with OLE's signature, nor with a line that is only a number.
    if (declared.startsWith(OUTLOOK_MSG_TYPE) || isOutlookMessage(bytes))
      return parseMail(await outlookToMime(bytes), attributes as MailAttributes, 0);
    if (declared.startsWith(APPLE_MAIL_TYPE) || isAppleMailMessage(bytes)) {
      const unwrapped = unwrapAppleMail(bytes, attributes as MailAttributes);
      return parseMail(unwrapped.message, unwrapped.attributes, 0);
    }
    return parseMail(bytes, attributes as MailAttributes, 0);
  },
};
