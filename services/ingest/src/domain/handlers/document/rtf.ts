import iconv from 'iconv-lite';
import { Tokenize, deEncapsulateSync } from 'rtf-stream-parser';
import { ToPlainText } from 'rtf-stream-parser/dist/src/ToPlainText.js';
import { RejectedItem, type RtfFields } from '../handler.js';
import { htmlToPlainText } from '../text.js';
import type { FormatResult } from './format.js';

const decode = (bytes: Buffer, encoding: string) => iconv.decode(bytes, encoding);

/**
 * What RTF says: the HTML or text it encapsulates (MS-OXRTFEX: Outlook's RTF for mail that was
 * HTML or text), else its own text (WordPad's, Word's, Outlook's), code pages and \u escapes
 * decoded, pictures and field instructions left out. Throws an Error naming the fault.
 */
export function rtfContent(rtf: Buffer): { text?: string; html?: string } {
  try {
    const body = deEncapsulateSync(rtf, { decode, mode: 'either' });
    return body.mode === 'html' ? { html: String(body.text) } : { text: String(body.text) };
  } catch {
    // Not encapsulated: RTF of its own, read as plain text (the same token pipe, another last step).
    const tokens = new Tokenize();
    const plain = new ToPlainText({ decode });
    const pieces: string[] = [];
    const fail = (error?: Error | null) => {
      if (error) throw error;
    };
    tokens.push = (token) => (plain._transform(token, 'utf8', fail), true);
    plain.push = (piece) => (pieces.push(String(piece)), true);
    tokens._transform(withTableBreaks(withoutGroup(rtf, '{\\info')), 'utf8', fail);
    tokens._flush(fail);
    plain._flush(fail);
    return { text: pieces.join('') };
  }
}

/**
 * The RTF without the group that starts with `opening` (the document's \\info: its title, author,
 * dates, which the text reader would run into the text), braces matched, escaped ones skipped.
 */
function withoutGroup(rtf: Buffer, opening: string): Buffer {
  const start = rtf.indexOf(opening);
  if (start < 0) return rtf;
  let depth = 0;
  for (let i = start; i < rtf.length; i++) {
    const byte = rtf[i];
    if (byte === 0x5c)
      i++; // a backslash escapes the next byte (\\{, \\}, \\\\)
    else if (byte === 0x7b) depth++;
    else if (byte === 0x7d && --depth === 0) return Buffer.concat([rtf.subarray(0, start), rtf.subarray(i + 1)]);
  }
  return rtf;
}

/** Table cells and rows as tabs and line ends (the text reader drops `\cell` and `\row`, running cells together). */
function withTableBreaks(rtf: Buffer): Buffer {
  const text = rtf.toString('latin1');
  if (!/\\(nest)?(cell|row)(?![a-z])/.test(text)) return rtf;
  return Buffer.from(
    text.replace(/(?<!\\)\\(?:nest)?cell(?![a-z])/g, '\\tab').replace(/(?<!\\)\\(?:nest)?row(?![a-z])/g, '\\par'),
    'latin1',
  );
}

/** An RTF document (.rtf): its text; the first line is the title when the file has no name. */
export function parseRtf(bytes: Buffer): FormatResult<RtfFields> {
  if (!bytes.subarray(0, 5).toString('latin1').startsWith('{\\rtf'))
    throw new RejectedItem('not an RTF file: it does not start with {\\rtf');
  let content: { text?: string; html?: string };
  try {
    content = rtfContent(bytes);
  } catch (error) {
    throw new RejectedItem(`unreadable RTF file: ${error instanceof Error ? error.message : String(error)}`);
  }
  const text = content.html !== undefined ? htmlToPlainText(content.html) : (content.text ?? '');
  return {
    title: null,
    text: text
      .replace(/\r\n?/g, '\n')
      .replace(/[ \t]+\n/g, '\n')
      .trim(),
    occurredAt: null,
    fields: { format: 'rtf' },
    warnings: [],
  };
}
