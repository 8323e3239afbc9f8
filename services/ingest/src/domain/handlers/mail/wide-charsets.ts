/**
 * Charsets mailparser does not read, as real archives have them:
 * - UTF-7 (RFC 2152): Outlook and old IMAP servers sent text parts and encoded words in it
 *   (`Fr+APY-sche`); mailparser passes it through undecoded.
 * - A whole message saved as UTF-16 (Outlook's "Save as Unicode", Windows tools writing .eml):
 *   every byte of the headers has a NUL beside it, so it reads as binary.
 */

const BASE64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

/** UTF-7 text to Unicode: `+<modified base64 of UTF-16BE>-`, `+-` for `+`; anything else is itself. */
export function decodeUtf7(text: string): string {
  return text.replace(/\+([A-Za-z0-9+/]*)-?/g, (whole, run: string) => {
    if (run === '') return whole === '+-' ? '+' : whole;
    let bits = 0;
    let value = 0;
    const bytes: number[] = [];
    for (const c of run) {
      value = (value << 6) | BASE64.indexOf(c);
      bits += 6;
      if (bits >= 8) {
        bits -= 8;
        bytes.push((value >> bits) & 0xff);
      }
    }
    return Buffer.from(bytes.length % 2 ? bytes.slice(0, -1) : bytes)
      .swap16()
      .toString('utf16le');
  });
}

/** Encoded words in UTF-7 (`=?utf-7?Q?Fr+APY-sche?=`, `?B?` too) as UTF-8 text, for mailparser to keep. */
export function decodeUtf7Words(value: string): string {
  return value.replace(/=\?utf-?7(?:\*[^?]*)?\?([QqBb])\?([^?]*)\?=/gi, (_, encoding: string, data: string) => {
    const ascii =
      encoding.toUpperCase() === 'B'
        ? Buffer.from(data, 'base64').toString('latin1')
        : data
            .replace(/_/g, ' ')
            .replace(/=([0-9A-Fa-f]{2})/g, (_h, hex: string) => String.fromCharCode(parseInt(hex, 16)));
    return decodeUtf7(ascii);
  });
}

/**
 * The message as UTF-8 bytes when the whole of it is UTF-16 (a byte-order mark, or the NUL of
 * every other byte of an ASCII header line), else null.
 */
export function utf16Message(bytes: Buffer): { bytes: Buffer; charset: string } | null {
  let charset: 'utf-16le' | 'utf-16be' | null = null;
  if (bytes[0] === 0xff && bytes[1] === 0xfe) charset = 'utf-16le';
  else if (bytes[0] === 0xfe && bytes[1] === 0xff) charset = 'utf-16be';
  else {
    const head = bytes.subarray(0, Math.min(bytes.length, 64) & ~1);
    if (head.length < 8) return null;
    const nulAt = (parity: number) => head.every((b, i) => (i % 2 === parity ? b === 0 : b !== 0));
    if (nulAt(1)) charset = 'utf-16le';
    else if (nulAt(0)) charset = 'utf-16be';
  }
  if (!charset) return null;
  const text = new TextDecoder(charset).decode(bytes);
  return { bytes: Buffer.from(text, 'utf8'), charset };
}
