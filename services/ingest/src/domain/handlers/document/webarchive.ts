import { RejectedItem, type HtmlFields } from '../handler.js';
import type { FormatResult } from './format.js';
import { parseHtml } from './html.js';

/**
 * A web page Safari saved as a Web Archive (`.webarchive`): a binary property list whose
 * `WebMainResource` holds the page's bytes (`WebResourceData`), its address, type and text
 * encoding; its images and styles are `WebSubresources` beside it. Read as the page it holds, at
 * the address it was saved from.
 */
export function parseWebArchive(bytes: Buffer): FormatResult<HtmlFields> {
  let archive: unknown;
  try {
    archive = readBinaryPlist(bytes);
  } catch (error) {
    throw new RejectedItem(`not a readable web archive: ${(error as Error).message}`);
  }
  const main = (archive as Record<string, unknown> | null)?.['WebMainResource'] as Record<string, unknown> | undefined;
  const data = main?.['WebResourceData'];
  if (!Buffer.isBuffer(data)) throw new RejectedItem('not a readable web archive: it holds no page (WebMainResource)');
  const type =
    typeof main!['WebResourceMIMEType'] === 'string' ? (main!['WebResourceMIMEType'] as string) : 'text/html';
  if (!/^(text\/html|application\/xhtml\+xml)$/i.test(type))
    throw new RejectedItem(
      `a web archive of a ${type} file, not of a page: open it in Safari and save the file itself`,
    );
  const charset =
    typeof main!['WebResourceTextEncodingName'] === 'string' ? main!['WebResourceTextEncodingName'] : null;
  const url = typeof main!['WebResourceURL'] === 'string' ? main!['WebResourceURL'] : null;
  const result = parseHtml(data, charset as string | null, url as string | null);
  return {
    ...result,
    fields: { ...result.fields, canonicalUrl: result.fields.canonicalUrl ?? (url as string | null) },
  };
}

/** Safari's type for a web archive (`.webarchive`). */
export const WEBARCHIVE_TYPE = 'application/x-webarchive';

/** Whether bytes are a Safari web archive: a binary property list naming a `WebMainResource`. */
export function looksLikeWebArchive(bytes: Buffer): boolean {
  return bytes.subarray(0, 8).toString('latin1') === 'bplist00' && bytes.includes('WebMainResource');
}

/** At most this many objects: a property list claiming more is damaged or hostile. */
const MAX_OBJECTS = 1_000_000;

/**
 * A binary property list (`bplist00`, Apple's CoreFoundation format) as plain values: dicts as
 * objects, arrays, strings (ASCII or UTF-16), numbers, booleans, dates, data as Buffers. The
 * trailer at its end gives the sizes of offsets and object references, the object count, the top
 * object and where the offset table is; each object starts with a marker byte (type, size).
 */
export function readBinaryPlist(bytes: Buffer): unknown {
  if (bytes.length < 40 || bytes.subarray(0, 8).toString('latin1') !== 'bplist00')
    throw new Error('it is not a binary property list');
  const trailer = bytes.subarray(bytes.length - 32);
  const offsetSize = trailer[6]!;
  const refSize = trailer[7]!;
  const count = Number(trailer.readBigUInt64BE(8));
  const top = Number(trailer.readBigUInt64BE(16));
  const table = Number(trailer.readBigUInt64BE(24));
  if (count > MAX_OBJECTS || top >= count || table + count * offsetSize > bytes.length - 32 || !offsetSize || !refSize)
    throw new Error('its trailer is damaged');
  const unsigned = (at: number, size: number) => {
    let value = 0;
    for (let i = 0; i < size; i++) value = value * 256 + bytes[at + i]!;
    return value;
  };
  const offsetOf = (ref: number) => {
    if (ref >= count) throw new Error(`an object reference (${ref}) past its ${count} objects`);
    return unsigned(table + ref * offsetSize, offsetSize);
  };
  const reading = new Set<number>();
  const object = (ref: number): unknown => {
    // A container that holds itself (a damaged or hostile file) would never end.
    if (reading.has(ref)) throw new Error('an object that holds itself');
    reading.add(ref);
    try {
      return read(offsetOf(ref));
    } finally {
      reading.delete(ref);
    }
  };
  /** A size: the marker's low nibble, or (0xF) the integer object after it. */
  const sized = (at: number): [size: number, start: number] => {
    const info = bytes[at]! & 0x0f;
    if (info !== 0x0f) return [info, at + 1];
    const marker = bytes[at + 1]!;
    if (marker >> 4 !== 0x1) throw new Error('a size that is no integer');
    const width = 1 << (marker & 0x0f);
    return [unsigned(at + 2, width), at + 2 + width];
  };
  const read = (at: number): unknown => {
    if (at >= bytes.length - 32) throw new Error('an object past its end');
    const marker = bytes[at]!;
    const info = marker & 0x0f;
    switch (marker >> 4) {
      case 0x0:
        return info === 0x8 ? false : info === 0x9 ? true : null;
      case 0x1:
        return info <= 2 ? unsigned(at + 1, 1 << info) : Number(bytes.readBigInt64BE(at + 1));
      case 0x2:
        return info === 2 ? bytes.readFloatBE(at + 1) : bytes.readDoubleBE(at + 1);
      case 0x3:
        // Seconds since 2001-01-01.
        return new Date(Date.UTC(2001, 0, 1) + bytes.readDoubleBE(at + 1) * 1000);
      case 0x4: {
        const [length, start] = sized(at);
        return Buffer.from(bytes.subarray(start, start + length));
      }
      case 0x5: {
        const [length, start] = sized(at);
        return bytes.subarray(start, start + length).toString('latin1');
      }
      case 0x6: {
        const [length, start] = sized(at);
        const utf16 = Buffer.from(bytes.subarray(start, start + length * 2));
        return utf16.swap16().toString('utf16le');
      }
      case 0x8:
        return unsigned(at + 1, info + 1);
      case 0xa: {
        const [length, start] = sized(at);
        return Array.from({ length }, (_, i) => object(unsigned(start + i * refSize, refSize)));
      }
      case 0xd: {
        const [length, start] = sized(at);
        // No prototype: a key named `__proto__` is a key like any other.
        const dict: Record<string, unknown> = Object.create(null);
        for (let i = 0; i < length; i++) {
          const key = object(unsigned(start + i * refSize, refSize));
          dict[String(key)] = object(unsigned(start + (length + i) * refSize, refSize));
        }
        return dict;
      }
      default:
        throw new Error(`an object of an unknown kind (0x${marker.toString(16)})`);
    }
  };
  return object(top);
}
