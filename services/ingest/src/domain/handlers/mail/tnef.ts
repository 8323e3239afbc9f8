/**
 * Outlook's TNEF (`winmail.dat`, `application/ms-tnef`): what Outlook sends beside the MIME parts
 * when it keeps rich formatting, and what other mail clients show as one opaque attachment. The
 * files attached to the message are inside it (MS-OXTNEF); this reads them out. (The body is in
 * the MIME parts beside it, as text or HTML; the stream's copy is compressed RTF.)
 */

/** A file attached inside a TNEF stream. */
export interface TnefFile {
  /** The long file name (MAPI `PR_ATTACH_LONG_FILENAME`), else the short one; null when it has none. */
  filename: string | null;
  /** The MIME type Outlook recorded (`PR_ATTACH_MIME_TAG`), if any. */
  contentType: string | null;
  bytes: Buffer;
}

export interface TnefContent {
  files: TnefFile[];
  /** Attachments that are not files (an embedded Outlook item): named, not read. */
  unread: string[];
}

export const TNEF_TYPES = ['application/ms-tnef', 'application/vnd.ms-tnef'];
const SIGNATURE = 0x223e9f78;
const LEVEL_ATTACHMENT = 2;
/** Attribute ids (type in the high word, as the stream writes them). */
const ATT_ATTACH_REND_DATA = 0x00069002;
const ATT_ATTACH_TITLE = 0x00018010;
const ATT_ATTACH_DATA = 0x0006800f;
const ATT_ATTACHMENT = 0x00069005;
/** MAPI property ids read from the property lists. */
const PR_ATTACH_DATA = 0x3701;
const PR_ATTACH_LONG_FILENAME = 0x3707;
const PR_ATTACH_MIME_TAG = 0x370e;
const PT_STRING8 = 0x001e;
const PT_UNICODE = 0x001f;
const PT_BINARY = 0x0102;
const PT_OBJECT = 0x000d;

export function isTnef(bytes: Buffer): boolean {
  return bytes.length >= 6 && bytes.readUInt32LE(0) === SIGNATURE;
}

/** Reads a TNEF stream; throws an Error saying where it broke when it is not one or is cut short. */
export function readTnef(bytes: Buffer): TnefContent {
  if (!isTnef(bytes)) throw new Error('it does not start with the TNEF signature');
  const content: TnefContent = { files: [], unread: [] };
  let attachment: { title: string | null; long: string | null; type: string | null; data: Buffer | null } | null = null;
  const finish = () => {
    if (!attachment) return;
    const filename = attachment.long ?? attachment.title;
    if (attachment.data) content.files.push({ filename, contentType: attachment.type, bytes: attachment.data });
    else content.unread.push(filename ?? 'an attachment with no name');
    attachment = null;
  };
  let at = 6;
  while (at < bytes.length) {
    if (at + 9 > bytes.length) throw new Error(`an attribute is cut short at byte ${at}`);
    const level = bytes[at]!;
    const id = bytes.readUInt32LE(at + 1);
    const length = bytes.readUInt32LE(at + 5);
    const start = at + 9;
    if (start + length + 2 > bytes.length)
      throw new Error(`an attribute of ${length} bytes at byte ${at} runs past the end`);
    const data = bytes.subarray(start, start + length);
    at = start + length + 2; // the checksum after it
    if (level !== LEVEL_ATTACHMENT) continue;
    if (id === ATT_ATTACH_REND_DATA) {
      finish();
      attachment = { title: null, long: null, type: null, data: null };
    }
    if (!attachment) continue;
    if (id === ATT_ATTACH_TITLE) attachment.title = cString(data) || null;
    if (id === ATT_ATTACH_DATA) attachment.data = data;
    if (id === ATT_ATTACHMENT) {
      attachment.long = mapiString(data, PR_ATTACH_LONG_FILENAME) ?? attachment.long;
      attachment.type = mapiString(data, PR_ATTACH_MIME_TAG) ?? attachment.type;
      // An embedded message or OLE object: its data is a MAPI object, not a file's bytes.
      if (mapiHas(data, PR_ATTACH_DATA, PT_OBJECT)) attachment.data = null;
    }
  }
  finish();
  return content;
}

/** A null-terminated string in the sender's code page (read as Latin-1, which never fails). */
function cString(data: Buffer): string {
  const end = data.indexOf(0);
  return data.subarray(0, end < 0 ? data.length : end).toString('latin1');
}

interface MapiValue {
  type: number;
  id: number;
  value: Buffer | null;
}

/** A string property of a MAPI property list, or null (absent, another type, or a list it cannot read). */
function mapiString(data: Buffer, id: number): string | null {
  const found = mapiProperties(data).find((p) => p.id === id && (p.type === PT_STRING8 || p.type === PT_UNICODE));
  if (!found?.value) return null;
  const text = found.type === PT_UNICODE ? found.value.toString('utf16le') : found.value.toString('latin1');
  return text.replace(/\0+$/, '') || null;
}

function mapiHas(data: Buffer, id: number, type: number): boolean {
  return mapiProperties(data).some((p) => p.id === id && p.type === type);
}

/** Sizes of MAPI's fixed-size types in a property list (each padded to four bytes). */
const FIXED_SIZES: Readonly<Record<number, number>> = {
  0x0001: 4, // null
  0x0002: 4, // 16-bit integer, padded
  0x0003: 4, // 32-bit integer
  0x0004: 4, // float
  0x0005: 8, // double
  0x0006: 8, // currency
  0x0007: 8, // application time
  0x000a: 4, // error code
  0x000b: 4, // boolean, padded
  0x0014: 8, // 64-bit integer
  0x0040: 8, // time
  0x0048: 16, // GUID
};

/**
 * The properties of a MAPI property list as far as it can be read (MS-OXTNEF 2.1.3.4): a count,
 * then each property's type and id, a name for a named property, and its value (variable-size and
 * multi-valued ones as a count of values, each with its length, padded to four bytes). Only a
 * single value is kept; reading stops at the first property it cannot size.
 */
function mapiProperties(data: Buffer): MapiValue[] {
  const out: MapiValue[] = [];
  if (data.length < 4) return out;
  const count = data.readUInt32LE(0);
  let at = 4;
  const fits = (n: number) => at + n <= data.length;
  for (let i = 0; i < count && fits(4); i++) {
    const type = data.readUInt16LE(at);
    const id = data.readUInt16LE(at + 2);
    at += 4;
    if (id >= 0x8000) {
      if (!fits(20)) return out;
      const kind = data.readUInt32LE(at + 16);
      at += 20;
      if (kind === 0) at += 4;
      else {
        if (!fits(4)) return out;
        at += 4 + pad4(data.readUInt32LE(at));
      }
    }
    const base = type & 0x0fff;
    const variable = base === PT_STRING8 || base === PT_UNICODE || base === PT_BINARY || base === PT_OBJECT;
    if (variable || type & 0x1000) {
      if (!fits(4)) return out;
      const values = data.readUInt32LE(at);
      at += 4;
      let first: Buffer | null = null;
      for (let v = 0; v < values; v++) {
        const size = variable ? (fits(4) ? data.readUInt32LE(at) : -1) : (FIXED_SIZES[base] ?? -1);
        if (size < 0) return out;
        if (variable) at += 4;
        if (!fits(size)) return out;
        first ??= data.subarray(at, at + size);
        at += variable ? pad4(size) : size;
      }
      out.push({ type: base, id, value: first });
    } else {
      const size = FIXED_SIZES[base];
      if (size === undefined || !fits(size)) return out;
      out.push({ type: base, id, value: data.subarray(at, at + size) });
      at += size;
    }
  }
  return out;
}

const pad4 = (n: number) => (n + 3) & ~3;
