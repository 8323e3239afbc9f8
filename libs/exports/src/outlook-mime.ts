import MailComposer from 'nodemailer/lib/mail-composer/index.js';
import type Mail from 'nodemailer/lib/mailer/index.js';

/** Outlook's saved message (MS-OXMSG): an OLE compound file; also how an attached message is sent on. */
export const OUTLOOK_MSG_TYPE = 'application/vnd.ms-outlook';

/** Message classes that are mail: notes (signed and encrypted too), meeting requests and answers, delivery reports. */
export const MAIL_CLASS = /^(ipm\.note|ipm\.schedule\.meeting|report\.)/i;

export interface OutlookAddress {
  name: string;
  address: string;
}

/** What Outlook keeps of a message (a .msg's or a .pst's properties), to write out as MIME. */
export interface OutlookMessage {
  /** The headers it arrived with (PR_TRANSPORT_MESSAGE_HEADERS); none for a draft or a message it sent. */
  transportHeaders: string | null;
  from?: OutlookAddress;
  to: OutlookAddress[];
  cc: OutlookAddress[];
  bcc: OutlookAddress[];
  subject: string;
  date?: Date;
  messageId?: string;
  inReplyTo?: string;
  references?: string;
  /** PR_CONVERSATION_INDEX, base64: what Outlook sends as Thread-Index. */
  threadIndex?: string;
  text: string;
  html?: string;
  attachments: Mail.Attachment[];
}

/**
 * An Outlook message as the Internet message it stands for, so that it is read, identified and
 * threaded as the same message saved as .eml is. A received message keeps its transport headers
 * (Message-ID, Date, Received, List-Id… as they arrived); a draft or a message Outlook sent has
 * none, and gets its headers from the properties. The body and attachments come from the
 * properties either way (Outlook does not keep the MIME).
 */
export async function outlookMime(message: OutlookMessage): Promise<Buffer> {
  const transport = message.transportHeaders?.trim() ? message.transportHeaders : null;
  const options: Mail.Options = {
    ...(message.from ? { from: message.from } : {}),
    to: message.to,
    cc: message.cc,
    bcc: message.bcc,
    subject: message.subject,
    ...(message.date ? { date: message.date } : {}),
    ...(message.messageId ? { messageId: message.messageId } : {}),
    ...(message.inReplyTo ? { inReplyTo: message.inReplyTo } : {}),
    ...(message.references ? { references: message.references } : {}),
    ...(message.threadIndex ? { headers: { 'Thread-Index': message.threadIndex } } : {}),
    text: message.text,
    ...(message.html ? { html: message.html } : {}),
    attachments: message.attachments,
  };
  const node = new MailComposer(options).compile();
  node.keepBcc = true;
  const composed = await node.build();
  const split = composed.indexOf('\r\n\r\n');
  const body = composed.subarray(split + 4);
  // Nodemailer invents a Message-ID and a Date when there is none: an unknown stays unknown.
  const invented = new Set([...(message.messageId ? [] : ['message-id']), ...(message.date ? [] : ['date'])]);
  // Thread-Index comes from the properties when the transport headers have none (a sent message's).
  const keepIndex = !transport || !/^thread-index\s*:/im.test(transport);
  const composedHeaders = headerFields(composed.subarray(0, split).toString('utf8')).filter((field) => {
    const name = fieldName(field);
    if (name === 'thread-index') return keepIndex;
    return transport ? isMimeField(name) : !invented.has(name);
  });
  const head = transport
    ? [...headerFields(transport).filter((field) => !isMimeField(fieldName(field))), ...composedHeaders]
    : composedHeaders;
  return Buffer.concat([Buffer.from(`${head.join('\r\n')}\r\n\r\n`, 'utf8'), body]);
}

/** A header block's fields, each with its continuation lines. */
function headerFields(block: string): string[] {
  const fields: string[] = [];
  for (const line of block.split(/\r?\n/)) {
    if (/^[ \t]/.test(line) && fields.length > 0) fields[fields.length - 1] += `\r\n${line}`;
    else if (line.trim()) fields.push(line);
  }
  return fields;
}

const fieldName = (field: string) => field.slice(0, field.indexOf(':')).trim().toLowerCase();

/** The fields that describe the MIME body: taken from the body as rebuilt, never from the transport headers. */
const isMimeField = (name: string) => name === 'mime-version' || name.startsWith('content-');
