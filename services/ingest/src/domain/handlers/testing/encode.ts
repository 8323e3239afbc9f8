/**
 * Encoding text into legacy charsets for tests, built only on TextDecoder (WHATWG/ICU), so that
 * what mailparser decodes (with iconv-lite) is checked against an independent implementation:
 * the char → bytes table is the inverse of decoding every 1- and 2-byte sequence.
 */
import { TextDecoder } from 'node:util';

const MULTI_BYTE = new Set(['shift_jis', 'euc-jp', 'gbk', 'gb18030', 'big5', 'euc-kr']);
const tables = new Map<string, Map<string, Buffer>>();

function table(charset: string): Map<string, Buffer> {
  const cached = tables.get(charset);
  if (cached) return cached;
  const decoder = new TextDecoder(charset, { fatal: true });
  const map = new Map<string, Buffer>();
  const add = (bytes: number[]) => {
    let char: string;
    try {
      char = decoder.decode(Uint8Array.from(bytes));
    } catch {
      return;
    }
    if ([...char].length === 1 && char !== '\uFFFD' && !map.has(char)) map.set(char, Buffer.from(bytes));
  };
  for (let b = 0; b < 256; b++) add([b]);
  if (MULTI_BYTE.has(decoder.encoding)) {
    for (let lead = 0x81; lead <= 0xfe; lead++) for (let trail = 0x40; trail <= 0xfe; trail++) add([lead, trail]);
  }
  tables.set(charset, map);
  return map;
}

/** ISO-2022-JP from EUC-JP: JIS X 0208 bytes are EUC bytes minus 0x80, switched in with ESC $ B. */
function encodeIso2022Jp(text: string): Buffer {
  const out: number[] = [];
  let jis = false;
  for (const char of text) {
    const euc = table('euc-jp').get(char);
    if (!euc) throw new Error(`no ISO-2022-JP for ${JSON.stringify(char)}`);
    const double = euc.length === 2;
    if (double !== jis) out.push(...(double ? [0x1b, 0x24, 0x42] : [0x1b, 0x28, 0x42]));
    jis = double;
    out.push(...(double ? [...euc].map((b) => b - 0x80) : euc));
  }
  if (jis) out.push(0x1b, 0x28, 0x42);
  return Buffer.from(out);
}

export function encode(text: string, charset: string): Buffer {
  if (charset.toLowerCase() === 'utf-8') return Buffer.from(text, 'utf8');
  if (charset.toLowerCase() === 'iso-2022-jp') return encodeIso2022Jp(text);
  const map = table(charset);
  return Buffer.concat(
    [...text].map((char) => {
      const bytes = map.get(char);
      if (!bytes) throw new Error(`${charset} cannot encode ${JSON.stringify(char)}`);
      return bytes;
    }),
  );
}

/**
 * An RFC 2047 encoded word: `=?charset?B?...?=` or `=?charset?Q?...?=`. Q leaves only the
 * characters RFC 2047 §5(3) allows in a phrase (letters, digits, ! * + - /) unencoded, so the
 * word is valid in a display name too.
 */
export function encodedWord(text: string, charset: string, encoding: 'B' | 'Q'): string {
  const bytes = encode(text, charset);
  const payload =
    encoding === 'B'
      ? bytes.toString('base64')
      : [...bytes]
          .map((b) =>
            b === 0x20
              ? '_'
              : /[A-Za-z0-9!*+\-/]/.test(String.fromCharCode(b))
                ? String.fromCharCode(b)
                : `=${b.toString(16).toUpperCase().padStart(2, '0')}`,
          )
          .join('');
  return `=?${charset}?${encoding}?${payload}?=`;
}
