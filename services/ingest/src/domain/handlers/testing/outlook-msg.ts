import CFB from 'cfb';

/** What a generated Outlook .msg holds: the MAPI properties Outlook writes for a mail message. */
export interface OutlookMessage {
  messageClass?: string;
  subject: string;
  body: string;
  /** PR_HTML, stored as UTF-8 bytes (code page 65001). */
  html?: string;
  senderName: string;
  senderEmail: string;
  recipients: Array<{ name: string; email: string; type: 'to' | 'cc' | 'bcc' }>;
  submitted?: Date;
  messageId?: string;
  inReplyTo?: string;
  references?: string;
  /** PR_CONVERSATION_INDEX: Outlook's conversation (what it sends as Thread-Index). */
  conversationIndex?: Buffer;
  /** PR_RTF_COMPRESSED: an RTF body, stored compressed (LZFu, literals only). */
  rtf?: string;
  /** PR_TRANSPORT_MESSAGE_HEADERS: a received message's headers as they arrived. */
  transportHeaders?: string;
  attachments?: Array<{ filename: string; mimeType: string; content: Buffer }>;
}

const STRING = 0x001f;
const BINARY = 0x0102;
const INT32 = 0x0003;
const TIME = 0x0040;

type Property = { id: number; type: number; value: string | Buffer | number | Date };

/**
 * An Outlook .msg file (MS-OXMSG) written with `cfb`: a compound file whose property streams
 * hold the fixed-size values and whose `__substg1.0_` streams hold strings (UTF-16LE) and binary
 * values, with a storage per recipient and per attachment. Enough of the format for a reader to
 * take it as Outlook's own.
 */
export function outlookMsg(message: OutlookMessage): Buffer {
  const cfb = CFB.utils.cfb_new();
  const root: Property[] = [
    { id: 0x001a, type: STRING, value: message.messageClass ?? 'IPM.Note' },
    { id: 0x0037, type: STRING, value: message.subject },
    { id: 0x0c1a, type: STRING, value: message.senderName },
    { id: 0x0c1e, type: STRING, value: 'SMTP' },
    { id: 0x0c1f, type: STRING, value: message.senderEmail },
    { id: 0x5d01, type: STRING, value: message.senderEmail },
    { id: 0x1000, type: STRING, value: message.body },
    ...(message.html
      ? [
          { id: 0x1013, type: BINARY, value: Buffer.from(message.html, 'utf8') },
          { id: 0x3fde, type: INT32, value: 65001 },
        ]
      : []),
    ...(message.rtf ? [{ id: 0x1009, type: BINARY, value: compressedRtf(message.rtf) }] : []),
    ...(message.submitted ? [{ id: 0x0039, type: TIME, value: message.submitted }] : []),
    ...(message.messageId ? [{ id: 0x1035, type: STRING, value: message.messageId }] : []),
    ...(message.inReplyTo ? [{ id: 0x1042, type: STRING, value: message.inReplyTo }] : []),
    ...(message.references ? [{ id: 0x1039, type: STRING, value: message.references }] : []),
    ...(message.conversationIndex ? [{ id: 0x0071, type: BINARY, value: message.conversationIndex }] : []),
    ...(message.transportHeaders ? [{ id: 0x007d, type: STRING, value: message.transportHeaders }] : []),
  ];
  const recipients = message.recipients;
  const attachments = message.attachments ?? [];
  // The top-level header: reserved, next recipient and attachment ids, their counts, reserved.
  const header = Buffer.alloc(32);
  header.writeUInt32LE(recipients.length, 8);
  header.writeUInt32LE(attachments.length, 12);
  header.writeUInt32LE(recipients.length, 16);
  header.writeUInt32LE(attachments.length, 20);
  addProperties(cfb, '', header, root);
  recipients.forEach((recipient, i) =>
    addProperties(cfb, `__recip_version1.0_#${hex8(i)}/`, Buffer.alloc(8), [
      { id: 0x0c15, type: INT32, value: { to: 1, cc: 2, bcc: 3 }[recipient.type] },
      { id: 0x3001, type: STRING, value: recipient.name },
      { id: 0x3002, type: STRING, value: 'SMTP' },
      { id: 0x3003, type: STRING, value: recipient.email },
      { id: 0x39fe, type: STRING, value: recipient.email },
    ]),
  );
  attachments.forEach((attachment, i) =>
    addProperties(cfb, `__attach_version1.0_#${hex8(i)}/`, Buffer.alloc(8), [
      { id: 0x3705, type: INT32, value: 1 }, // ATTACH_BY_VALUE
      { id: 0x3707, type: STRING, value: attachment.filename },
      { id: 0x370e, type: STRING, value: attachment.mimeType },
      { id: 0x3701, type: BINARY, value: attachment.content },
    ]),
  );
  // Named properties: none, but the storage and its three streams are always there.
  for (const stream of ['00020102', '00030102', '00040102'])
    CFB.utils.cfb_add(cfb, `/__nameid_version1.0/__substg1.0_${stream}`, Buffer.alloc(0));
  return Buffer.from(CFB.write(cfb, { type: 'buffer' }) as Uint8Array);
}

/**
 * RTF in MS-OXRTFCP's compressed form, every byte a literal: a control byte of 0 before each
 * eight, after the header (size after its first field, raw size, "LZFu", CRC unchecked here).
 */
function compressedRtf(rtf: string): Buffer {
  const raw = Buffer.from(rtf, 'latin1');
  const runs: Buffer[] = [];
  for (let i = 0; i < raw.length; i += 8) runs.push(Buffer.from([0]), raw.subarray(i, i + 8));
  const body = Buffer.concat(runs);
  const header = Buffer.alloc(16);
  header.writeUInt32LE(body.length + 12, 0);
  header.writeUInt32LE(raw.length, 4);
  header.writeUInt32LE(0x75465a4c, 8);
  return Buffer.concat([header, body]);
}

const hex8 = (n: number) => n.toString(16).toUpperCase().padStart(8, '0');
const hex4 = (n: number) => n.toString(16).toUpperCase().padStart(4, '0');

/** One object's property stream (fixed values inline, sizes of the rest) and its value streams. */
function addProperties(cfb: CFB.CFB$Container, folder: string, header: Buffer, properties: Property[]): void {
  const entries = properties.map((property) => {
    const entry = Buffer.alloc(16);
    entry.writeUInt32LE(((property.id << 16) | property.type) >>> 0, 0);
    entry.writeUInt32LE(0x6, 4); // readable | writable
    const { value } = property;
    if (typeof value === 'number') entry.writeUInt32LE(value, 8);
    else if (value instanceof Date)
      entry.writeBigUInt64LE(BigInt(value.getTime()) * 10_000n + 116_444_736_000_000_000n, 8);
    else {
      const bytes = typeof value === 'string' ? Buffer.from(`${value}\0`, 'utf16le') : value;
      entry.writeUInt32LE(bytes.length, 8);
      const stream = typeof value === 'string' ? bytes.subarray(0, bytes.length - 2) : bytes;
      CFB.utils.cfb_add(cfb, `/${folder}__substg1.0_${hex4(property.id)}${hex4(property.type)}`, stream);
    }
    return entry;
  });
  CFB.utils.cfb_add(cfb, `/${folder}__properties_version1.0`, Buffer.concat([header, ...entries]));
}
