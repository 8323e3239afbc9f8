import { gunzipSync } from 'node:zlib';
import JSZip from 'jszip';
import { RejectedItem, type OfficeFields } from '../handler.js';
import { collapseWhitespace, htmlToPlainText } from '../text.js';
import type { FormatResult } from './format.js';

/**
 * Apple's Pages, Numbers and Keynote documents. Since iWork '13 a document is a zip (or a bundle
 * whose `Index.zip` holds them) of `.iwa` archives: Snappy-compressed chunks (a 4-byte header:
 * 0, then a 24-bit length) of protobuf objects, each an `ArchiveInfo` (its id, and the type and
 * length of each message) followed by its messages. Text lives in `TSWP.StorageArchive` objects
 * (type 2001, its runs in field 3); a Pages document names its body among them (type 10000,
 * field 4), read first; a Numbers table's strings are in its data lists (type 6005). iWork '09
 * documents are zips of one XML file (`index.xml`, perhaps gzipped). Layout as documented by
 * obriensp/iWorkFileFormat; type numbers as public readers of the format use them.
 */
export type IworkFormat = 'pages' | 'numbers' | 'keynote';

const NAMES: Record<IworkFormat, string> = {
  pages: 'Pages document',
  numbers: 'Numbers spreadsheet',
  keynote: 'Keynote presentation',
};

/** Message types: a text storage, Pages' document (its body in field 4), a table's data list. */
const TEXT_STORAGE = 2001;
const PAGES_DOCUMENT = 10000;
const DATA_LIST = 6005;

/** How much an archive may decompress to in all: a zip or Snappy bomb stops here. */
const INFLATED_AT_MOST = 256 * 1024 * 1024;

export async function parseIwork(bytes: Buffer, format: IworkFormat): Promise<FormatResult<OfficeFields>> {
  const what = NAMES[format];
  let archives: Buffer[];
  try {
    archives = await iwaArchives(await JSZip.loadAsync(bytes));
  } catch (error) {
    throw new RejectedItem(`not a readable ${what}: ${(error as Error).message}`);
  }
  let text: string;
  if (archives.length === 0) {
    // iWork '09 (or a file that is not iWork at all).
    const xml = await legacyXml(bytes);
    if (xml === null) throw new RejectedItem(`not a readable ${what}: it holds no Index/*.iwa and no index.xml`);
    // Its paragraphs and line breaks as HTML's, so they stay lines; every other element is markup.
    text = htmlToPlainText(
      xml
        .replace(/<sf:p\b[^>]*>/g, '<p>')
        .replace(/<\/sf:p>/g, '</p>')
        .replace(/<sf:(br|lnbr|pgbr)\b[^>]*\/?>/g, '<br>'),
    );
  } else {
    try {
      text = textOf(archives.map(readObjects).flat(), format);
    } catch (error) {
      throw new RejectedItem(`not a readable ${what}: it is damaged (${(error as Error).message})`);
    }
  }
  if (!text.trim()) throw new RejectedItem(`an empty ${what}: it holds no text`);
  return {
    title: null,
    text: text.trim(),
    occurredAt: null,
    fields: { format: 'iwork', headings: [] },
    warnings: [],
  };
}

/**
 * The document's `.iwa` archives, Document.iwa first: in the zip itself (`Index/…`, or at its top
 * when the zip is a package's Index.zip), or in an Index.zip it holds.
 */
async function iwaArchives(zip: JSZip): Promise<Buffer[]> {
  let entries = Object.keys(zip.files).filter((name) => /\.iwa$/.test(name));
  let holder = zip;
  const index = zip.file(/(^|\/)Index\.zip$/)[0];
  if (entries.length === 0 && index) {
    holder = await JSZip.loadAsync(await index.async('nodebuffer'));
    entries = Object.keys(holder.files).filter((name) => /\.iwa$/.test(name));
  }
  entries.sort((a, b) => Number(!/Document\.iwa$/.test(a)) - Number(!/Document\.iwa$/.test(b)) || a.localeCompare(b));
  const archives: Buffer[] = [];
  let size = 0;
  for (const name of entries) {
    const archive = await holder.file(name)!.async('nodebuffer');
    size += archive.length;
    if (size > INFLATED_AT_MOST) break;
    archives.push(archive);
  }
  return archives;
}

/** iWork '09's `index.xml` (or `index.xml.gz`), or null. */
async function legacyXml(bytes: Buffer): Promise<string | null> {
  const zip = await JSZip.loadAsync(bytes).catch(() => null);
  const file = zip?.file(/(^|\/)index\.(apxl|xml)(\.gz)?$/)[0];
  if (!file) return null;
  const data = await file.async('nodebuffer');
  return (file.name.endsWith('.gz') ? gunzipSync(data, { maxOutputLength: INFLATED_AT_MOST }) : data).toString('utf8');
}

/** One object of an archive: its id and its messages, each with its type. */
interface IwaObject {
  id: number;
  messages: Array<{ type: number; payload: Buffer }>;
}

/** The objects of one `.iwa`: its chunks decompressed, then ArchiveInfo and messages in turn. */
function readObjects(archive: Buffer): IwaObject[] {
  const chunks: Buffer[] = [];
  for (let at = 0; at < archive.length;) {
    if (archive[at] !== 0) throw new Error(`a chunk of an unknown kind (${archive[at]})`);
    const length = archive.readUIntLE(at + 1, 3);
    chunks.push(unsnappy(archive.subarray(at + 4, at + 4 + length)));
    at += 4 + length;
  }
  const stream = Buffer.concat(chunks);
  const objects: IwaObject[] = [];
  for (let at = 0; at < stream.length;) {
    const [infoLength, infoStart] = varint(stream, at);
    const info = fields(stream.subarray(infoStart, infoStart + infoLength));
    at = infoStart + infoLength;
    const object: IwaObject = { id: Number(info.find((f) => f.field === 1)?.value ?? 0), messages: [] };
    for (const { field, value } of info) {
      if (field !== 2 || !Buffer.isBuffer(value)) continue;
      const messageInfo = fields(value);
      const type = Number(messageInfo.find((f) => f.field === 1)?.value ?? 0);
      const length = Number(messageInfo.find((f) => f.field === 3)?.value ?? 0);
      if (at + length > stream.length) throw new Error('a message past the end of its archive');
      object.messages.push({ type, payload: stream.subarray(at, at + length) });
      at += length;
    }
    objects.push(object);
  }
  return objects;
}

/** The words of a document's objects: Pages' body first, then every other text (text boxes, slides, notes), then a table's strings. */
function textOf(objects: IwaObject[], format: IworkFormat): string {
  const body =
    format === 'pages'
      ? objects
          .flatMap((o) => o.messages.filter((m) => m.type === PAGES_DOCUMENT))
          .map((m) => fields(m.payload).find((f) => f.field === 4)?.value)
          .map((reference) =>
            Buffer.isBuffer(reference) ? Number(fields(reference).find((f) => f.field === 1)?.value) : NaN,
          )
          .find((id) => !Number.isNaN(id))
      : undefined;
  const storages = objects
    .filter((o) => o.messages.some((m) => m.type === TEXT_STORAGE))
    .sort((a, b) => Number(b.id === body) - Number(a.id === body));
  const texts = storages.map((o) => storageText(o.messages.find((m) => m.type === TEXT_STORAGE)!.payload));
  const strings =
    format === 'numbers'
      ? objects.flatMap((o) => o.messages.filter((m) => m.type === DATA_LIST)).flatMap((m) => listStrings(m.payload))
      : [];
  return [...new Set([...texts, ...strings].map((t) => t.trim()).filter(Boolean))].join('\n\n');
}

/** A text storage's runs (field 3), without the characters that stand for attachments and breaks. */
function storageText(payload: Buffer): string {
  return fields(payload)
    .filter((f) => f.field === 3 && Buffer.isBuffer(f.value))
    .map((f) => (f.value as Buffer).toString('utf8'))
    .join('')
    .replace(/[\uFFFC\uFFFB]/g, '')
    .replace(/[\u2028\u2029\r]/g, '\n')
    .split('\n')
    .map(collapseWhitespace)
    .join('\n');
}

/** A data list's entries (field 3) and each one's string (field 3), where it has one. */
function listStrings(payload: Buffer): string[] {
  return fields(payload)
    .filter((f) => f.field === 3 && Buffer.isBuffer(f.value))
    .flatMap((entry) => fields(entry.value as Buffer).filter((f) => f.field === 3 && Buffer.isBuffer(f.value)))
    .map((f) => (f.value as Buffer).toString('utf8'));
}

/** A protobuf message's fields in order: varints as numbers, length-delimited ones as bytes. */
function fields(message: Buffer): Array<{ field: number; value: number | Buffer }> {
  const out: Array<{ field: number; value: number | Buffer }> = [];
  for (let at = 0; at < message.length;) {
    const [key, next] = varint(message, at);
    at = next;
    const field = Math.floor(key / 8);
    switch (key % 8) {
      case 0: {
        const [value, after] = varint(message, at);
        out.push({ field, value });
        at = after;
        break;
      }
      case 1:
        at += 8;
        break;
      case 2: {
        const [length, start] = varint(message, at);
        if (start + length > message.length) throw new Error('a field past the end of its message');
        out.push({ field, value: message.subarray(start, start + length) });
        at = start + length;
        break;
      }
      case 5:
        at += 4;
        break;
      default:
        throw new Error(`a field of an unknown wire type (${key % 8})`);
    }
  }
  return out;
}

/** A base-128 varint at `at`: its value and where what follows starts. */
function varint(bytes: Buffer, at: number): [number, number] {
  let value = 0;
  let scale = 1;
  for (let i = at; i < bytes.length && i < at + 10; i++) {
    value += (bytes[i]! & 0x7f) * scale;
    scale *= 128;
    if ((bytes[i]! & 0x80) === 0) return [value, i + 1];
  }
  throw new Error('a number cut short');
}

/** Snappy's raw format: the length it decompresses to, then literals and copies of what came before. */
export function unsnappy(input: Buffer): Buffer {
  const [length, start] = varint(input, 0);
  if (length > INFLATED_AT_MOST) throw new Error('a chunk that decompresses past what a document holds');
  const out = Buffer.alloc(length);
  let o = 0;
  for (let at = start; at < input.length;) {
    const tag = input[at++]!;
    if ((tag & 3) === 0) {
      let size = tag >> 2;
      if (size >= 60) {
        const bytes = size - 59;
        size = input.readUIntLE(at, bytes);
        at += bytes;
      }
      size += 1;
      if (o + size > length || at + size > input.length) throw new Error('a literal past its chunk');
      input.copy(out, o, at, at + size);
      at += size;
      o += size;
      continue;
    }
    let size: number;
    let offset: number;
    if ((tag & 3) === 1) {
      size = ((tag >> 2) & 7) + 4;
      offset = ((tag >> 5) << 8) | input[at++]!;
    } else if ((tag & 3) === 2) {
      size = (tag >> 2) + 1;
      offset = input.readUInt16LE(at);
      at += 2;
    } else {
      size = (tag >> 2) + 1;
      offset = input.readUInt32LE(at);
      at += 4;
    }
    if (offset === 0 || offset > o || o + size > length) throw new Error('a copy from outside what came before');
    // Byte by byte: a copy may overlap what it writes (a run).
    for (let i = 0; i < size; i++) out[o + i] = out[o - offset + i]!;
    o += size;
  }
  if (o !== length) throw new Error('a chunk shorter than it says');
  return out;
}
