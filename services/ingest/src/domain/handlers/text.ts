import { createHash } from 'node:crypto';
import { TextDecoder } from 'node:util';
import { convert } from 'html-to-text';

export function sha256Hex(data: Buffer | string): string {
  return createHash('sha256').update(data).digest('hex');
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
  [[0xef, 0xbb, 0xbf], 'utf-8'],
  [[0xfe, 0xff], 'utf-16be'],
  [[0xff, 0xfe], 'utf-16le'],
];

function bomCharset(bytes: Uint8Array): string | null {
  for (const [bom, charset] of BOMS) {
    if (bom.every((b, i) => bytes[i] === b)) return charset;
  }
  return null;
}

/**
 * Bytes to text, the way real files need it: a byte-order mark wins, then the declared charset
 * (when the decoder knows it), then UTF-8 if the bytes are valid UTF-8, else windows-1252 (what
 * "latin-1" files almost always are). Returns the charset actually used.
 */
export function decodeText(bytes: Uint8Array, declared: string | null): { text: string; charset: string } {
  const bom = bomCharset(bytes);
  const candidates = [bom, declared].filter((c): c is string => c !== null);
  for (const label of candidates) {
    const decoder = decoderFor(label, false);
    // A declared UTF-8 that is not valid UTF-8 is a lie; fall through to the sniffing below.
    if (decoder && !(decoder.encoding === 'utf-8' && !bom && !isValidUtf8(bytes))) {
      return { text: decoder.decode(bytes), charset: decoder.encoding };
    }
  }
  if (isValidUtf8(bytes)) return { text: new TextDecoder('utf-8').decode(bytes), charset: 'utf-8' };
  return { text: new TextDecoder('windows-1252').decode(bytes), charset: 'windows-1252' };
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
