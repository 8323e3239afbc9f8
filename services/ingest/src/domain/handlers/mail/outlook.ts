import msgreader, { type FieldsData } from '@kenjiuno/msgreader';
import { decompressRTF } from '@kenjiuno/decompressrtf';
import { MAIL_CLASS, OUTLOOK_MSG_TYPE, outlookMime } from '@memex/exports';
import { RejectedItem } from '../handler.js';
import { rtfContent } from '../document/rtf.js';
import { codePageLabel } from '../text.js';

// A CommonJS module compiled from ES: its class is the namespace's `default`.
const MsgReader = msgreader.default;
type MsgReader = InstanceType<typeof MsgReader>;

/** The first bytes of every OLE compound file (MS-CFB 2.2). */
const OLE_SIGNATURE = Buffer.from('d0cf11e0a1b11ae1', 'hex');

/** MAPI properties msgreader does not name: PR_IN_REPLY_TO_ID and PR_INTERNET_REFERENCES (Unicode). */
const IN_REPLY_TO = '1042001f';
const REFERENCES = '1039001f';
/** PR_CONVERSATION_INDEX: Outlook's conversation, what it sends as the Thread-Index header. */
const CONVERSATION_INDEX = '00710102';

export function isOutlookMessage(bytes: Buffer): boolean {
  return bytes.subarray(0, OLE_SIGNATURE.length).equals(OLE_SIGNATURE);
}

/**
 * An Outlook .msg as the Internet message it stands for, so that it is read, identified and
 * threaded as the same message saved as .eml is. A received message keeps its transport headers
 * (Message-ID, Date, Received, List-Id… as they arrived); a draft or a message Outlook sent has
 * none, and gets its headers from the MAPI properties. The body and attachments come from the
 * properties either way (Outlook does not keep the MIME); an attached .msg stays a .msg
 * attachment, which the mail handler reads as a message in turn.
 */
export async function outlookToMime(bytes: Buffer): Promise<Buffer> {
  if (!isOutlookMessage(bytes))
    throw new RejectedItem('not an Outlook .msg file: it does not start with the OLE compound file signature');
  let reader: MsgReader;
  let fields: FieldsData;
  try {
    reader = new MsgReader(new Uint8Array(bytes).buffer);
    reader.parserConfig = { includeRawProps: true };
    fields = reader.getFileData();
  } catch (error) {
    throw new RejectedItem(`unreadable Outlook .msg file: ${error instanceof Error ? error.message : String(error)}`);
  }
  if ((fields as { error?: string }).error)
    throw new RejectedItem(`unreadable Outlook .msg file: ${(fields as { error?: string }).error}`);
  if (fields.messageClass && !MAIL_CLASS.test(fields.messageClass))
    throw new RejectedItem(`an Outlook ${fields.messageClass} item, not a message: only mail is read from .msg files`);

  const raw = (tag: string) => fields.rawProps?.find((p) => p.propertyTag?.toLowerCase() === tag)?.value;
  const text = (tag: string) => {
    const value = raw(tag);
    return typeof value === 'string' && value.trim() ? value.trim() : undefined;
  };
  // Outlook keeps a body as text, HTML or compressed RTF, not always all three: the RTF is read when it is the only one.
  const rtf =
    !fields.body?.trim() && !fields.bodyHtml && !fields.html && fields.compressedRtf
      ? rtfBody(fields.compressedRtf)
      : {};
  const html =
    fields.bodyHtml ??
    (fields.html ? new TextDecoder(codePageLabel(fields.internetCodepage, 'utf-8')).decode(fields.html) : rtf.html);
  const recipients = (type: 'to' | 'cc' | 'bcc') =>
    (fields.recipients ?? [])
      .filter((r) => (r.recipType ?? 'to') === type)
      .map((r) => ({ name: r.name ?? '', address: r.smtpAddress ?? r.email ?? '' }))
      .filter((r) => r.address.includes('@'));
  const sender = fields.senderSmtpAddress ?? fields.sentRepresentingSmtpAddress ?? fields.senderEmail;
  const date = fields.clientSubmitTime ?? fields.messageDeliveryTime;
  const index = raw(CONVERSATION_INDEX);
  return outlookMime({
    transportHeaders: fields.headers ?? null,
    ...(sender?.includes('@') ? { from: { name: fields.senderName ?? '', address: sender } } : {}),
    to: recipients('to'),
    cc: recipients('cc'),
    bcc: recipients('bcc'),
    subject: fields.subject ?? '',
    ...(date ? { date: new Date(date) } : {}),
    ...(fields.messageId ? { messageId: fields.messageId } : {}),
    ...(text(IN_REPLY_TO) ? { inReplyTo: text(IN_REPLY_TO) } : {}),
    ...(text(REFERENCES) ? { references: text(REFERENCES) } : {}),
    ...(index instanceof Uint8Array ? { threadIndex: Buffer.from(index).toString('base64') } : {}),
    text: fields.body?.trim() ? fields.body : (rtf.text ?? ''),
    ...(html ? { html } : {}),
    attachments: (fields.attachments ?? []).map((attachment) => {
      const data = reader.getAttachment(attachment);
      const embedded = attachment.innerMsgContent === true;
      const name = data.fileName || attachment.fileName || attachment.name || 'attachment';
      return {
        filename: embedded && !/\.msg$/i.test(name) ? `${name}.msg` : name,
        content: Buffer.from(data.content),
        contentType: embedded ? OUTLOOK_MSG_TYPE : attachment.attachMimeTag || undefined,
        ...(attachment.pidContentId ? { cid: attachment.pidContentId } : {}),
      };
    }),
  });
}

/**
 * A body Outlook kept only as compressed RTF: the HTML or text it encapsulates (MS-OXRTFEX, what
 * Outlook writes for mail that arrived as HTML or text), else the text of RTF written in Outlook.
 */
function rtfBody(compressed: Uint8Array): { text?: string; html?: string } {
  let rtf: Buffer;
  try {
    rtf = Buffer.from(decompressRTF([...compressed]));
  } catch (error) {
    throw new RejectedItem(
      `unreadable Outlook .msg file: its RTF body: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  try {
    return rtfContent(rtf);
  } catch (error) {
    throw new RejectedItem(
      `unreadable Outlook .msg file: its RTF body: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
}
