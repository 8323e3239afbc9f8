import { createHash } from 'node:crypto';
import { TextDecoder } from 'node:util';
import { convert } from 'html-to-text';
import { analyse } from 'chardet';
import jschardet from 'jschardet';

export function sha256Hex(data: Buffer | string): string {
  return createHash('sha256').update(data).digest('hex');
}

/** East Asian and other Windows code pages by the label TextDecoder knows them. */
const CODE_PAGES: Readonly<Record<number, string>> = {
  932: 'shift_jis',
  936: 'gbk',
  949: 'euc-kr',
  950: 'big5',
  1200: 'utf-16le',
  10000: 'macintosh',
  20127: 'us-ascii',
  28591: 'iso-8859-1',
  65001: 'utf-8',
};

/**
 * A Windows code page number (Outlook's PR_INTERNET_CPID, an OLE property set's PID_CODEPAGE) as
 * the label TextDecoder knows, or `fallback` for one it does not.
 */
export function codePageLabel(codepage: number | undefined, fallback: string): string {
  if (codepage !== undefined && ((codepage >= 1250 && codepage <= 1258) || codepage === 874))
    return `windows-${codepage}`;
  return (codepage !== undefined && CODE_PAGES[codepage]) || fallback;
}

/** The `charset` parameter of a MIME type, lowercase, or null. */
export function charsetParam(type: string): string | null {
  const match = /;\s*charset\s*=\s*"?([^";\s]+)"?/i.exec(type);
  return match?.[1]?.toLowerCase() ?? null;
}

/** A TextDecoder for a charset label, or null when the label is unknown or maps to WHATWG's "replacement". */
function decoderFor(label: string, fatal: boolean): TextDecoder | null {
  try {
    const decoder = new TextDecoder(label, { fatal, ignoreBOM: false });
    return decoder.encoding === 'replacement' ? null : decoder;
  } catch {
    return null;
  }
}

export function isValidUtf8(bytes: Uint8Array): boolean {
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    return true;
  } catch {
    return false;
  }
}

const BOMS: Array<[number[], string]> = [
  // UTF-32's before UTF-16's: a little-endian UTF-32 mark starts with UTF-16's.
  [[0xff, 0xfe, 0x00, 0x00], 'utf-32le'],
  [[0x00, 0x00, 0xfe, 0xff], 'utf-32be'],
  [[0xef, 0xbb, 0xbf], 'utf-8'],
  [[0xfe, 0xff], 'utf-16be'],
  [[0xff, 0xfe], 'utf-16le'],
];

function bomCharset(bytes: Uint8Array): string | null {
  for (const [bom, charset] of BOMS) {
    if (bom.every((b, i) => bytes[i] === b)) return charset;
  }
  return utf32WithoutBom(bytes) ?? utf16WithoutBom(bytes);
}

/** UTF-32 without a byte-order mark: text below U+10000 has a NUL in the two high bytes of every unit. */
function utf32WithoutBom(bytes: Uint8Array): string | null {
  const sample = bytes.subarray(0, 4096 - (Math.min(bytes.length, 4096) % 4));
  if (sample.length < 16) return null;
  let little = 0;
  let big = 0;
  for (let i = 0; i < sample.length; i += 4) {
    if (sample[i + 2] === 0 && sample[i + 3] === 0 && sample[i] !== 0) little++;
    if (sample[i] === 0 && sample[i + 1] === 0 && sample[i + 3] !== 0) big++;
  }
  const units = sample.length / 4;
  if (little > 0.9 * units) return 'utf-32le';
  if (big > 0.9 * units) return 'utf-32be';
  return null;
}

/**
 * UTF-32 (which TextDecoder does not read: WHATWG left it out), code point by code point; a unit
 * that is no code point becomes U+FFFD, its byte-order mark goes. Null for any other label.
 */
function decodeUtf32(bytes: Uint8Array, label: string): string | null {
  const little = label === 'utf-32le' || label === 'utf32le';
  if (!little && !['utf-32', 'utf-32be', 'utf32', 'utf32be'].includes(label)) return null;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const points: number[] = [];
  for (let at = 0; at + 4 <= bytes.length; at += 4) {
    const point = view.getUint32(at, little);
    if (at === 0 && point === 0xfeff) continue;
    points.push(point <= 0x10ffff && (point < 0xd800 || point > 0xdfff) ? point : 0xfffd);
  }
  let text = '';
  for (let i = 0; i < points.length; i += 8192) text += String.fromCodePoint(...points.slice(i, i + 8192));
  return text;
}

/**
 * UTF-16 without a byte-order mark (some Windows exports): text mostly of Latin letters has a NUL
 * in every other byte, odd ones for little-endian, even ones for big-endian, and almost none in
 * the others, which no 8-bit text has.
 */
function utf16WithoutBom(bytes: Uint8Array): string | null {
  const sample = bytes.subarray(0, 4096);
  if (sample.length < 8) return null;
  let even = 0;
  let odd = 0;
  for (let i = 0; i < sample.length; i++) {
    if (sample[i] !== 0) continue;
    if (i % 2) odd++;
    else even++;
  }
  const half = sample.length / 2;
  if (odd > 0.6 * half && even < 0.05 * half) return 'utf-16le';
  if (even > 0.6 * half && odd < 0.05 * half) return 'utf-16be';
  return null;
}

/**
 * Bytes to text, the way real files need it: a byte-order mark wins, then the declared charset
 * (when the decoder knows it), then UTF-8 if the bytes are valid UTF-8, else the legacy charset
 * they are in (`legacyCharset`: windows-1252 unless a detector is sure). Returns the charset used.
 */
export function decodeText(bytes: Uint8Array, declared: string | null): { text: string; charset: string } {
  const bom = bomCharset(bytes);
  const candidates = [bom, declared].filter((c): c is string => c !== null);
  for (const label of candidates) {
    const utf32 = decodeUtf32(bytes, label.toLowerCase());
    if (utf32 !== null) return { text: utf32, charset: label.toLowerCase() };
    const decoder = decoderFor(label, false);
    // A declared UTF-8 that is not valid UTF-8 is a lie; fall through to the sniffing below.
    if (decoder && !(decoder.encoding === 'utf-8' && !bom && !isValidUtf8(bytes))) {
      return { text: decoder.decode(bytes), charset: decoder.encoding };
    }
  }
  if (isValidUtf8(bytes)) return { text: new TextDecoder('utf-8').decode(bytes), charset: 'utf-8' };
  const decoder = decoderFor(legacyCharset(bytes), false) ?? new TextDecoder('windows-1252');
  return { text: decoder.decode(bytes), charset: decoder.encoding };
}

/** Multi-byte East Asian charsets: their byte patterns are distinctive, so a detector sure of one is right. */
const EAST_ASIAN = new Set([
  'Shift_JIS',
  'EUC-JP',
  'GB18030',
  'Big5',
  'EUC-KR',
  'ISO-2022-JP',
  'ISO-2022-KR',
  'ISO-2022-CN',
]);
/** jschardet's names of multi-byte East Asian charsets, as ICU's recognisers name them. */
const DISTRIBUTION_CHARSETS: Readonly<Record<string, string>> = {
  SHIFT_JIS: 'Shift_JIS',
  'EUC-JP': 'EUC-JP',
  GB2312: 'GB18030',
  Big5: 'Big5',
  'EUC-KR': 'EUC-KR',
};

/**
 * A short East Asian text (a spreadsheet's CSV of names and places, a subject line) gives ICU's
 * recognisers too few characters to be sure of; jschardet's analysis of how the characters are
 * distributed (Mozilla's universal detector: which are the common ones of each charset) still
 * ranks its charset well ahead. Taken when it is twice as sure as of its next guess and the bytes
 * are valid in it.
 */
function eastAsianByDistribution(sample: Uint8Array): string | null {
  const bytes = Buffer.from(sample.buffer, sample.byteOffset, sample.byteLength);
  const [first, second] = jschardet.detectAll(bytes, { minimumThreshold: 0 });
  const charset = first && DISTRIBUTION_CHARSETS[first.encoding];
  if (!charset || first.confidence < 0.15 || (second && first.confidence < 2 * second.confidence)) return null;
  const decoder = decoderFor(charset, true);
  try {
    // Streaming: a character the sample cuts in two is no error.
    decoder?.decode(sample, { stream: true });
    return decoder ? charset : null;
  } catch {
    return null;
  }
}

/**
 * Whether bytes read as Windows' Shift_JIS (code page 932, Excel's CSVs in Japan) by their shape,
 * where the detectors are unsure or thrown by an extension character (髙, 﨑): valid in it, with
 * at least four two-byte characters, most of them punctuation, kana or the common (level 1)
 * kanji, and many with a second byte of 0x80 or more. Western text whose curly quotes happen to
 * pair with the letter after them has second bytes below 0x80 only.
 */
function looksLikeShiftJis(sample: Uint8Array): boolean {
  let pairs = 0;
  let common = 0;
  let highTrail = 0;
  for (let i = 0; i < sample.length; i++) {
    const lead = sample[i]!;
    if (lead < 0x80 || (lead >= 0xa1 && lead <= 0xdf)) continue; // ASCII, half-width katakana
    const trail = sample[i + 1];
    if (trail === undefined) break; // cut by the sample
    if (trail < 0x40 || trail === 0x7f || trail > 0xfc) return false;
    pairs++;
    if (lead <= 0x84 || (lead >= 0x88 && lead <= 0x98)) common++;
    if (trail >= 0x80) highTrail++;
    i++;
  }
  if (pairs < 4 || common < 0.8 * pairs || highTrail < 0.3 * pairs) return false;
  try {
    new TextDecoder('shift_jis', { fatal: true }).decode(sample, { stream: true });
    return true;
  } catch {
    return false;
  }
}

/** Single-byte charsets of other scripts (Cyrillic, Greek, Hebrew, Arabic): read as Western, every letter is wrong. */
const OTHER_SCRIPTS = new Set([
  'windows-1251',
  'KOI8-R',
  'ISO-8859-5',
  'ISO-8859-7',
  'windows-1253',
  'ISO-8859-8',
  'windows-1255',
  'ISO-8859-6',
  'windows-1256',
]);
/** Latin charsets besides Western (Central European, Turkish): they differ from it in a few letters, so must win clearly. */
const OTHER_LATIN = new Set(['ISO-8859-2', 'windows-1250', 'ISO-8859-9', 'windows-1254']);
/** What the detector reads: enough for its statistics, bounded for a large file. */
const SAMPLE_BYTES = 16 * 1024;
/**
 * Fewer 8-bit bytes than this and a single-byte charset cannot be told from Western (a name); fewer
 * than three times this (a subject line) and another Latin one must be surer.
 */
const MIN_EIGHT_BIT_BYTES = 16;

/**
 * The charset of text that is not UTF-8 and says none (or a false one): what a detector (chardet,
 * ICU's recognisers) is sure of among East Asian charsets, or a single-byte one (Cyrillic, Greek,
 * Central European…) that clearly beats Western over enough letters, else windows-1252, what
 * unlabelled 8-bit text from Western mailers and editors almost always is. Old Japanese, Chinese,
 * Korean and Russian mail and files otherwise come out as accented gibberish.
 */
export function legacyCharset(bytes: Uint8Array): string {
  const sample = bytes.subarray(0, SAMPLE_BYTES);
  const matches = analyse(sample);
  const best = matches[0];
  if (!best) return 'windows-1252';
  if (EAST_ASIAN.has(best.name) && best.confidence >= 50) return best.name;
  const eastAsian = eastAsianByDistribution(sample) ?? (looksLikeShiftJis(sample) ? 'Shift_JIS' : null);
  if (eastAsian) return eastAsian;
  const eightBit = sample.reduce((n, byte) => n + (byte >= 0x80 ? 1 : 0), 0);
  if (eightBit < MIN_EIGHT_BIT_BYTES) return 'windows-1252';
  const western = Math.max(
    0,
    ...matches.filter((m) => m.name === 'ISO-8859-1' || m.name === 'windows-1252').map((m) => m.confidence),
  );
  if (best.confidence < 2 * western) return 'windows-1252';
  if (OTHER_SCRIPTS.has(best.name) && best.confidence >= 20) return best.name;
  if (OTHER_LATIN.has(best.name) && best.confidence >= (eightBit < 3 * MIN_EIGHT_BIT_BYTES ? 40 : 20)) return best.name;
  return 'windows-1252';
}

/**
 * HTML to searchable text: no image alt noise, no link targets, no wrapping; a table's cells
 * apart and its rows on lines (html-to-text's default runs a row's cells into one word).
 */
export function htmlToPlainText(html: string): string {
  return convert(html, {
    wordwrap: false,
    formatters: {
      // A cell's words, then a space: cells stay apart, each cell's text whole (a layout table's columns are not interleaved).
      tableCell: (element, walk, builder) => {
        walk(element.children, builder);
        builder.addInline(' ');
      },
    },
    selectors: [
      { selector: 'a', options: { ignoreHref: true } },
      { selector: 'img', format: 'skip' },
      { selector: 'tr', format: 'block', options: { leadingLineBreaks: 1, trailingLineBreaks: 1 } },
      { selector: 'td', format: 'tableCell' },
      { selector: 'th', format: 'tableCell' },
      { selector: 'h1', options: { uppercase: false } },
      { selector: 'h2', options: { uppercase: false } },
      { selector: 'h3', options: { uppercase: false } },
      { selector: 'h4', options: { uppercase: false } },
      { selector: 'h5', options: { uppercase: false } },
      { selector: 'h6', options: { uppercase: false } },
    ],
  })
    .split('\n')
    .map((line) => line.replace(/[ \t\u00a0]+/g, ' ').trim())
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

/** Whitespace runs to one space, trimmed: for titles and hashing, never for body text. */
export function collapseWhitespace(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/** The first non-empty line, shortened to a title. */
export function firstLine(text: string, max = 120): string | null {
  const line = text
    .split('\n')
    .map((l) => collapseWhitespace(l))
    .find((l) => l.length > 0);
  if (!line) return null;
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

/**
 * The charset an HTML document declares in its first 1024 bytes (`<meta charset>` or the
 * http-equiv Content-Type form), lowercase, or null.
 */
export function sniffHtmlCharset(bytes: Uint8Array): string | null {
  const head = Buffer.from(bytes.subarray(0, 1024)).toString('latin1');
  // Also matches <meta http-equiv="Content-Type" content="text/html; charset=x">.
  const match = /<meta[^>]+charset\s*=\s*["']?\s*([\w:.-]+)/i.exec(head);
  return match?.[1]?.toLowerCase() ?? null;
}
