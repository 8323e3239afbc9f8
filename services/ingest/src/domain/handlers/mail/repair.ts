/**
 * Repairs applied to a message's bytes before mailparser sees them, for what real archives
 * contain and mailparser decodes wrongly (verified in repair.test.ts):
 *
 * 1. Raw 8-bit header values that are not UTF-8 (old mailers wrote Subject and names in the local
 *    charset without RFC 2047): decoded with the part's declared charset, else the first non-UTF-8
 *    charset the message declares anywhere, else the one they are in (`legacyCharset`), and
 *    rewritten as UTF-8 (which mailparser reads as RFC 6532 headers).
 * 2. Raw ISO-2022-JP in header values (escape sequences, 7-bit, no RFC 2047): decoded as ISO-2022-JP.
 * 3. Body text parts whose charset is missing, us-ascii, utf-8 or one no decoder knows (Mutt's
 *    `unknown-8bit`) while the bytes are not valid UTF-8: relabelled with the charset they are in
 *    (`legacyCharset`: Shift_JIS, windows-1251… when a detector is sure, else windows-1252; an
 *    unknown one whose bytes are UTF-8: utf-8). An HTML part without a charset takes its
 *    <meta charset>.
 * 4. Addresses a list archive wrote as `alice at example.com` (Mailman's pipermail, which has
 *    archived mailing lists since 1998, and the archives downloaded from it): read as
 *    alice@example.com, in an address field that has no `@` at all, so nothing real is touched.
 *
 * The stored blob keeps the original bytes; only the parse input changes.
 */
import iconv from 'iconv-lite';
import { decodeText, isValidUtf8, legacyCharset, sniffHtmlCharset } from '../text.js';
import { partBytes, walk, type MimeNode, type RawHeader } from './mime.js';

interface Replacement {
  start: number;
  end: number;
  text: string;
  /** What was done, for the item's warnings. */
  note: string;
}

const ESC = '\x1b';

function nonUtf8Charset(charset: string | undefined): string | null {
  if (!charset || !knownCharset(charset)) return null;
  const c = charset.toLowerCase();
  return c === 'utf-8' || c === 'utf8' || c === 'us-ascii' || c === 'ascii' ? null : c;
}

/**
 * Whether a decoder knows the charset. One none knows (Mutt's and sendmail's `unknown-8bit`,
 * `x-unknown`, a typo) says nothing about the bytes: they are read as if none were declared.
 */
function knownCharset(charset: string): boolean {
  const name = charset.trim();
  if (iconv.encodingExists(name)) return true;
  try {
    new TextDecoder(name); // the WHATWG labels (iso-2022-jp, ks_c_5601-1987…)
    return true;
  } catch {
    return false;
  }
}

/**
 * The best guess for raw 8-bit headers: the first charset the message declares that is not UTF-8
 * or ASCII, else the one its first 8-bit text body is in when that is not Western (a header is
 * too short to tell by itself; the body, written by the same mailer, is not).
 */
function messageCharset(root: MimeNode, raw: string): string | null {
  for (const node of walk(root)) {
    const charset = nonUtf8Charset(node.params.get('charset'));
    if (charset) return charset;
  }
  for (const node of walk(root)) {
    if (node.children.length > 0 || !node.contentType.startsWith('text/')) continue;
    const body = partBytes(raw, node);
    if (isValidUtf8(body)) continue;
    const charset = legacyCharset(body).toLowerCase();
    return charset === 'windows-1252' ? null : charset;
  }
  return null;
}

function hasRawHeaderBytes(value: string): boolean {
  return /[\x80-\xff]/.test(value) || value.includes(ESC);
}

/** Whether the bytes are text in that charset without a single undecodable sequence. */
function decodesCleanly(bytes: Buffer, charset: string): boolean {
  try {
    new TextDecoder(charset, { fatal: true }).decode(bytes);
    return true;
  } catch {
    return false;
  }
}

/** Mostly well-formed UTF-8 (a cut multi-byte character at most every few characters). */
function mostlyUtf8(bytes: Buffer): boolean {
  const text = new TextDecoder('utf-8').decode(bytes);
  const bad = text.match(/\uFFFD/g)?.length ?? 0;
  const good = text.match(/[^\x00-\x7f\uFFFD]/g)?.length ?? 0;
  return good >= 4 * bad;
}

/**
 * Raw header bytes to text: ISO-2022-JP when they carry its escape sequences; UTF-8 when valid;
 * the guessed charset when they decode in it without error; UTF-8 when they are UTF-8 but for a
 * cut character or two; else the guess (or windows-1252), lossy.
 */
function repairHeader(header: RawHeader, raw: string, guess: string | null): Replacement | null {
  const value = raw.slice(header.valueStart, header.valueEnd);
  if (!hasRawHeaderBytes(value)) return null;
  const bytes = Buffer.from(value, 'latin1');
  if (isValidUtf8(bytes) && !value.includes(ESC)) return null;
  let charset: string;
  if (value.includes(`${ESC}$`) || value.includes(`${ESC}(`)) charset = 'iso-2022-jp';
  else if (guess && decodesCleanly(bytes, guess)) charset = guess;
  else if (mostlyUtf8(bytes)) charset = 'utf-8';
  else charset = guess ?? legacyCharset(bytes);
  // decodeText would not take a declared UTF-8 that is not valid UTF-8; here that is the point.
  const decoded =
    charset === 'utf-8' ? { text: new TextDecoder('utf-8').decode(bytes), charset } : decodeText(bytes, charset);
  const note = `raw 8-bit header "${header.name}" read as ${decoded.charset}`;
  return { start: header.valueStart, end: header.valueEnd, text: decoded.text, note };
}

function withCharset(contentType: string, charset: string): string {
  return /charset\s*=/i.test(contentType)
    ? contentType.replace(/charset\s*=\s*("[^"]*"|[^;\s]*)/i, `charset=${charset}`)
    : `${contentType.replace(/[;\s]+$/, '')}; charset=${charset}`;
}

/**
 * The charset a body text part must be read as instead of its declared one, or null when it is
 * right; `header` is its Content-Type, or null when it has none (plain text by default, as old
 * mailers and list servers sent it, 8-bit bytes and all).
 */
function bodyCharsetFix(
  node: MimeNode,
  raw: string,
): { header: RawHeader | null; charset: string; note: string } | null {
  if (node.children.length > 0 || node.disposition === 'attachment') return null;
  if (node.contentType !== 'text/plain' && node.contentType !== 'text/html') return null;
  const header = node.headers.find((h) => h.name === 'content-type') ?? null;
  const declared = node.params.get('charset')?.toLowerCase();
  const unknown = declared !== undefined && !knownCharset(declared);
  if (nonUtf8Charset(declared)) return null;
  const body = partBytes(raw, node);
  let charset =
    node.contentType === 'text/html' && declared === undefined
      ? nonUtf8Charset(sniffHtmlCharset(body) ?? undefined)
      : null;
  if (charset === null && !isValidUtf8(body)) charset = legacyCharset(body).toLowerCase();
  if (charset === null && unknown) charset = 'utf-8';
  if (charset === null) return null;
  return {
    header,
    charset,
    note: `a ${node.contentType} part declared ${declared ?? 'no charset'} and was read as ${charset}`,
  };
}

/** A Content-Type header line for a part that has none, after its last header (or as its only one). */
function contentTypeAdded(node: MimeNode, raw: string, charset: string, note: string): Replacement {
  const last = node.headers[node.headers.length - 1];
  const at = last ? last.valueEnd : node.bodyStart - (raw.startsWith('\r\n', node.bodyStart - 2) ? 2 : 1);
  const eol = raw.startsWith('\r\n', at) ? '\r\n' : '\n';
  const header = `Content-Type: ${node.contentType}; charset=${charset}`;
  return { start: at, end: at, text: last ? `${eol}${header}` : `${header}${eol}`, note };
}

/** Header fields that hold addresses (RFC 5322 3.6.2–3.6.3) and that mailparser reads. */
const ADDRESS_FIELDS = new Set(['from', 'sender', 'reply-to', 'to', 'cc', 'bcc']);
/** `local at domain.tld` as pipermail writes an address: the `@` spelled out, a dotted domain after it. */
const SPELLED_OUT_AT = /(?<=^|[\s<(,"])([\w.!#$%&'*+/=?^`{|}~-]+) at ((?:[a-z0-9-]+\.)+[a-z]{2,})(?=$|[\s>),"])/gi;

/**
 * An address field's value with its spelled-out `at`s made `@` (repair 4), or undefined when it
 * needs none: one with an `@` anywhere has real addresses, and a name like "Dinner at Joe.com" stays.
 */
export function spelledOutAddresses(value: string): string | undefined {
  if (value.includes('@')) return undefined;
  const repaired = value.replace(SPELLED_OUT_AT, '$1@$2');
  return repaired === value ? undefined : repaired;
}

function repairAddresses(header: RawHeader, value: string): Replacement | null {
  if (!ADDRESS_FIELDS.has(header.name)) return null;
  const text = spelledOutAddresses(value);
  if (text === undefined) return null;
  const note = 'addresses written "name at domain" (a list archive hides them so) read as name@domain';
  return { start: header.valueStart, end: header.valueEnd, text, note };
}

/** The repaired bytes (the same Buffer when nothing needed repair) and what was repaired. */
export function repairForParsing(bytes: Buffer, raw: string, root: MimeNode): { bytes: Buffer; repairs: string[] } {
  const guess = messageCharset(root, raw);
  const replacements: Replacement[] = [];
  for (const node of walk(root)) {
    const nodeGuess = nonUtf8Charset(node.params.get('charset')) ?? guess;
    const fixed = new Map<RawHeader, Replacement>();
    for (const header of node.headers) {
      const charsetFix = repairHeader(header, raw, nodeGuess);
      const value = charsetFix?.text ?? raw.slice(header.valueStart, header.valueEnd);
      const addressFix = repairAddresses(header, value);
      const fix =
        addressFix && charsetFix
          ? { ...addressFix, note: `${charsetFix.note}; ${addressFix.note}` }
          : (addressFix ?? charsetFix);
      if (fix) fixed.set(header, fix);
    }
    const bodyFix = bodyCharsetFix(node, raw);
    if (bodyFix && !bodyFix.header) replacements.push(contentTypeAdded(node, raw, bodyFix.charset, bodyFix.note));
    else if (bodyFix?.header) {
      // The Content-Type value may itself have been repaired (a raw 8-bit name=): relabel that text.
      const earlier = fixed.get(bodyFix.header);
      const text = withCharset(earlier?.text ?? bodyFix.header.value, bodyFix.charset);
      const note = earlier ? `${earlier.note}; ${bodyFix.note}` : bodyFix.note;
      fixed.set(bodyFix.header, { start: bodyFix.header.valueStart, end: bodyFix.header.valueEnd, text, note });
    }
    replacements.push(...fixed.values());
  }
  if (replacements.length === 0) return { bytes, repairs: [] };
  replacements.sort((a, b) => a.start - b.start);
  const chunks: Buffer[] = [];
  let at = 0;
  for (const r of replacements) {
    chunks.push(bytes.subarray(at, r.start), Buffer.from(r.text, 'utf8'));
    at = r.end;
  }
  chunks.push(bytes.subarray(at));
  return { bytes: Buffer.concat(chunks), repairs: [...new Set(replacements.map((r) => r.note))] };
}
