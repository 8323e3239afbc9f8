import { inflateSync } from 'node:zlib';
import { MAX_XMP_BYTES, mergeXmp, readXmp, uniqueIgnoringCase, type XmpReading } from '@memex/exports';
import { heifXmp, isoBoxes, webpXmp } from './containers.js';
import { readIim, photoshopIptc, type IptcReading } from './iptc.js';
import { jxlXmp } from './jxl.js';
import { fujiPreview, type ImageFormat } from './sniff.js';

/**
 * What the photographer wrote into the photo: its XMP packet (and a JPEG's Extended XMP) and its
 * IPTC-IIM, found where each format keeps them and read by us (exifr only ever reads TIFF here: its
 * readers of other containers have hung on damaged files). A damaged block is a problem to warn
 * of; the rest of the photo is still read.
 *
 * Where both say a thing, XMP wins (the Metadata Working Group's guidelines prefer it; they also
 * compare the IIM's digest to tell an IIM edited since, which is left out here): IIM only fills
 * what the XMP does not say, its keywords only when the XMP has none.
 */
export type EmbeddedMetadata = Omit<XmpReading, 'dates' | 'extendedXmp'> & {
  /** Capture times as written, best first, each with where it was read. */
  dates: Array<{ value: string; source: 'xmp' | 'iptc' }>;
};

const XMP_APP1 = 'http://ns.adobe.com/xap/1.0/\0';
const EXTENDED_APP1 = 'http://ns.adobe.com/xmp/extension/\0';
const PHOTOSHOP_APP13 = 'Photoshop 3.0\0';
/** A CR3's XMP box (Canon's `uuid`). */
const CR3_XMP_UUID = 'be7acfcb97a942e89c71999491e3afac';
const TIFF_XMP_TAG = 700;
const TIFF_IPTC_TAG = 33723;

/** The blocks a file holds: its XMP packet, a JPEG's Extended XMP chunks, its IIM. */
interface Blocks {
  xmp: Buffer | null;
  extended: Array<{ guid: string; total: number; offset: number; data: Buffer }>;
  iim: Buffer | null;
  problems: string[];
}

const none = (): Blocks => ({ xmp: null, extended: [], iim: null, problems: [] });

/** A JPEG's marker segments before its scan (APPn and the rest; a segment cut short ends the walk). */
function* jpegSegments(bytes: Buffer): Generator<{ marker: number; payload: Buffer }> {
  let at = 2;
  while (at + 4 <= bytes.length) {
    if (bytes[at] !== 0xff) return;
    const marker = bytes[at + 1]!;
    if (marker === 0xff) {
      at++; // fill byte
      continue;
    }
    if (marker === 0xda || marker === 0xd9) return; // the scan, or the end
    if (marker === 0x01 || (marker >= 0xd0 && marker <= 0xd8)) {
      at += 2;
      continue;
    }
    const length = bytes.readUInt16BE(at + 2);
    if (length < 2 || at + 2 + length > bytes.length) return;
    yield { marker, payload: bytes.subarray(at + 4, at + 2 + length) };
    at += 2 + length;
  }
}

function jpegBlocks(bytes: Buffer): Blocks {
  const found = none();
  const resources: Buffer[] = [];
  for (const { marker, payload } of jpegSegments(bytes)) {
    const head = (text: string) => payload.length >= text.length && payload.toString('latin1', 0, text.length) === text;
    if (marker === 0xe1 && head(XMP_APP1)) found.xmp ??= payload.subarray(XMP_APP1.length);
    else if (marker === 0xe1 && head(EXTENDED_APP1)) {
      const at = EXTENDED_APP1.length;
      if (payload.length < at + 40) found.problems.push('Extended XMP chunk cut short');
      else
        found.extended.push({
          guid: payload.toString('latin1', at, at + 32),
          total: payload.readUInt32BE(at + 32),
          offset: payload.readUInt32BE(at + 36),
          data: payload.subarray(at + 40),
        });
    } else if (marker === 0xed && head(PHOTOSHOP_APP13)) resources.push(payload.subarray(PHOTOSHOP_APP13.length));
  }
  // Photoshop splits a large resource block over several APP13 segments.
  if (resources.length > 0) {
    const { iim, problem } = photoshopIptc(Buffer.concat(resources));
    found.iim = iim;
    if (problem) found.problems.push(`IPTC unreadable (${problem})`);
  }
  return found;
}

/**
 * A PNG's XMP: its `iTXt` chunk of keyword `XML:com.adobe.xmp` (compressed or not), as the XMP
 * specification puts it; or a `zTXt` or `tEXt` chunk of that keyword, as libvips and ImageMagick do.
 */
function pngBlocks(bytes: Buffer): Blocks {
  const found = none();
  const keyword = 'XML:com.adobe.xmp\0';
  for (let at = 8; at + 8 <= bytes.length;) {
    const length = bytes.readUInt32BE(at);
    const type = bytes.toString('latin1', at + 4, at + 8);
    const data = bytes.subarray(at + 8, Math.min(at + 8 + length, bytes.length));
    if (type === 'IEND') break;
    at += 12 + length;
    if (!['iTXt', 'zTXt', 'tEXt'].includes(type) || data.toString('latin1', 0, keyword.length) !== keyword) continue;
    let text: Buffer;
    let compressed: boolean;
    if (type === 'iTXt') {
      compressed = data[keyword.length] === 1;
      // The language tag and translated keyword, each NUL-terminated, come before the text.
      const language = data.indexOf(0, keyword.length + 2);
      const translated = language < 0 ? -1 : data.indexOf(0, language + 1);
      if (translated < 0) {
        found.problems.push('XMP unreadable (its PNG iTXt chunk is cut short)');
        break;
      }
      text = data.subarray(translated + 1);
    } else {
      compressed = type === 'zTXt';
      text = data.subarray(keyword.length + (compressed ? 1 : 0));
    }
    try {
      found.xmp = compressed ? inflateSync(text, { maxOutputLength: MAX_XMP_BYTES }) : text;
    } catch (error) {
      found.problems.push(`XMP unreadable (its PNG ${type} chunk does not inflate: ${message(error)})`);
    }
    break;
  }
  return found;
}

/** Tags 700 (XMP) and 33723 (IPTC) of a TIFF's (a TIFF-based RAW's) first IFD. */
function tiffBlocks(bytes: Buffer): Blocks {
  const found = none();
  const order = bytes.toString('latin1', 0, 2);
  if (order !== 'II' && order !== 'MM') return found;
  const little = order === 'II';
  const u16 = (at: number) => (little ? bytes.readUInt16LE(at) : bytes.readUInt16BE(at));
  const u32 = (at: number) => (little ? bytes.readUInt32LE(at) : bytes.readUInt32BE(at));
  const ifd = u32(4);
  if (ifd + 2 > bytes.length) return found;
  const count = u16(ifd);
  const TYPE_SIZE: Record<number, number> = { 1: 1, 2: 1, 4: 4, 7: 1 };
  for (let i = 0; i < count && ifd + 2 + i * 12 + 12 <= bytes.length; i++) {
    const entry = ifd + 2 + i * 12;
    const tag = u16(entry);
    if (tag !== TIFF_XMP_TAG && tag !== TIFF_IPTC_TAG) continue;
    const size = (TYPE_SIZE[u16(entry + 2)] ?? 0) * u32(entry + 4);
    const start = size <= 4 ? entry + 8 : u32(entry + 8);
    if (size === 0 || start + size > bytes.length) {
      found.problems.push(`${tag === TIFF_XMP_TAG ? 'XMP' : 'IPTC'} unreadable (TIFF tag ${tag} runs past the end)`);
      continue;
    }
    if (tag === TIFF_XMP_TAG) found.xmp = bytes.subarray(start, start + size);
    else found.iim = bytes.subarray(start, start + size);
  }
  return found;
}

/** A CR3's XMP: the payload of its top-level `uuid` box of Canon's XMP UUID. */
function cr3Xmp(bytes: Buffer): Buffer | null {
  for (const box of isoBoxes(bytes))
    if (box.type === 'uuid' && bytes.toString('hex', box.start, box.start + 16) === CR3_XMP_UUID)
      return bytes.subarray(box.start + 16, box.end);
  return null;
}

function blocksOf(bytes: Buffer, format: ImageFormat): Blocks {
  const only = (xmp: Buffer | null): Blocks => ({ ...none(), xmp });
  switch (format) {
    case 'jpeg':
      return jpegBlocks(bytes);
    case 'png':
      return pngBlocks(bytes);
    case 'webp':
      return only(webpXmp(bytes));
    case 'avif':
    case 'heic':
      return only(heifXmp(bytes));
    case 'jxl':
      return only(jxlXmp(bytes));
    case 'tiff':
      return tiffBlocks(bytes);
    case 'raw': {
      if (bytes.toString('latin1', 4, 12) === 'ftypcrx ') return only(cr3Xmp(bytes));
      const preview = fujiPreview(bytes);
      return preview ? jpegBlocks(preview) : tiffBlocks(bytes);
    }
    case 'gif':
    case 'bmp':
      return none();
  }
}

const message = (error: unknown) => (error instanceof Error ? error.message : String(error));

/** An XMP packet's text: UTF-8, or UTF-16 when it starts with a byte-order mark. */
function packetText(bytes: Buffer): string {
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return new TextDecoder('utf-16be').decode(bytes);
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return new TextDecoder('utf-16le').decode(bytes);
  return bytes.toString('utf8');
}

/** The Extended XMP whose GUID the main packet names, put together from its chunks; null when absent. */
function extendedXmp(blocks: Blocks, guid: string, problems: string[]): Buffer | null {
  const chunks = blocks.extended.filter((chunk) => chunk.guid === guid);
  if (chunks.length === 0) return null;
  const total = chunks[0]!.total;
  if (total > MAX_XMP_BYTES) {
    problems.push(`Extended XMP unread (${total} bytes, over the ${MAX_XMP_BYTES} read)`);
    return null;
  }
  const whole = Buffer.alloc(total);
  let filled = 0;
  for (const { offset, data } of chunks) {
    if (offset + data.length > total) {
      problems.push('Extended XMP unread (a chunk lies past its stated length)');
      return null;
    }
    data.copy(whole, offset);
    filled += data.length;
  }
  if (filled < total) {
    problems.push(`Extended XMP unread (${filled} of its ${total} bytes found)`);
    return null;
  }
  return whole;
}

function readPackets(blocks: Blocks, problems: string[]): XmpReading | null {
  if (!blocks.xmp) return null;
  let reading: XmpReading;
  try {
    reading = readXmp(packetText(blocks.xmp));
  } catch (error) {
    problems.push(`XMP unreadable (${message(error)})`);
    return null;
  }
  const extended = reading.extendedXmp ? extendedXmp(blocks, reading.extendedXmp, problems) : null;
  if (!extended) return reading;
  try {
    return mergeXmp(reading, readXmp(packetText(extended)));
  } catch (error) {
    problems.push(`Extended XMP unreadable (${message(error)})`);
    return reading;
  }
}

/** XMP first, IIM where the XMP says nothing. */
function merged(xmp: XmpReading | null, iptc: IptcReading | null): EmbeddedMetadata {
  const out: EmbeddedMetadata = {
    keywords: uniqueIgnoringCase(xmp?.keywords.length ? xmp.keywords : (iptc?.keywords ?? [])),
    people: xmp?.people ?? [],
    regions: xmp?.regions ?? [],
    dates: [
      ...(xmp?.dates ?? []).map((value) => ({ value, source: 'xmp' as const })),
      ...(iptc?.date ? [{ value: iptc.date, source: 'iptc' as const }] : []),
    ],
  };
  const title = xmp?.title ?? iptc?.title;
  const description = xmp?.description ?? iptc?.description;
  const creator = xmp?.creator ?? iptc?.creator;
  if (title) out.title = title;
  if (description) out.description = description;
  if (creator) out.creator = creator;
  if (xmp?.latitude !== undefined && xmp.longitude !== undefined) {
    out.latitude = xmp.latitude;
    out.longitude = xmp.longitude;
  }
  return out;
}

/** The XMP and IPTC-IIM a photo carries, and the problems met reading them (warnings; never a throw). */
export function readEmbedded(bytes: Buffer, format: ImageFormat): { metadata: EmbeddedMetadata; problems: string[] } {
  const problems: string[] = [];
  let blocks: Blocks;
  try {
    blocks = blocksOf(bytes, format);
  } catch (error) {
    return { metadata: merged(null, null), problems: [`XMP and IPTC unreadable (${message(error)})`] };
  }
  problems.push(...blocks.problems);
  const xmp = readPackets(blocks, problems);
  let iptc: IptcReading | null = null;
  if (blocks.iim) {
    const read = readIim(blocks.iim);
    iptc = read.reading;
    if (read.problem) problems.push(`IPTC damaged (${read.problem}); what came before it is kept`);
  }
  return { metadata: merged(xmp, iptc), problems };
}
