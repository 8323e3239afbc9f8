import { TextDecoder } from 'node:util';
import { RejectedItem } from '../../handler.js';
import { codePageLabel } from '../../text.js';
import type { CompoundFile } from './compound.js';

/**
 * The text of a Word document from Word 6.0 to Word 2003 ([MS-DOC]; Word 6.0 and 95 as wvWare
 * reads them): the File Information Block at the start of the `WordDocument` stream says how long
 * each story is and where the text lies. Word 97 and later map character positions to runs of
 * bytes, 8-bit (Windows-1252) or UTF-16, by a piece table in `0Table` or `1Table`. Word 6.0 and 95
 * keep all text 8-bit, in the code page of the document's language: in one run from `fcMin`, or,
 * once fast-saved, by a piece table in `WordDocument` itself. Read are the main text, then
 * footnotes, comments, endnotes and text boxes; headers and footers (repeated on every page,
 * mostly page numbers) are not. Fields show their result, not their code.
 */
export function readWordText(file: CompoundFile): string {
  const word = file.stream('WordDocument');
  if (!word || word.length < 0x200)
    throw new RejectedItem('not a readable Word document: it has no WordDocument stream');
  const fib = readFib(word);
  if (fib.encrypted) throw new RejectedItem('a password-protected Word document: its text is encrypted');
  const total = fib.storyLengths.reduce((sum, length) => sum + length, 0);
  let pieces: Piece[];
  if (!fib.clx) pieces = [{ start: 0, end: total, offset: fib.fcMin, compressed: true }];
  else {
    const table = fib.clx.stream === 'WordDocument' ? word : file.stream(fib.clx.stream);
    if (!table) throw new RejectedItem(`not a readable Word document: it has no ${fib.clx.stream} stream`);
    pieces = readPieceTable(table, fib.clx, fib.word97);
  }
  const text = (start: number, length: number) =>
    length > 0 ? plainText(textOf(word, pieces, start, start + length, fib.narrow)) : '';

  // The stories follow one another in character positions, in this order ([MS-DOC] 2.5.2).
  const starts = storyStarts(fib.storyLengths);
  return READ_STORIES.map((story) => text(starts[story]!, fib.storyLengths[story]!))
    .filter(Boolean)
    .join('\n\n');
}

/** Main text, footnotes, comments, endnotes, text boxes: indexes into the FIB's story lengths. */
const READ_STORIES = [0, 1, 4, 5, 6];

interface Fib {
  encrypted: boolean;
  /** ccpText, ccpFtn, ccpHdd, ccpMcr, ccpAtn, ccpEdn, ccpTxbx: the stories' lengths in characters. */
  storyLengths: number[];
  /** Where the piece table is; null when the text is one 8-bit run from `fcMin` (Word 6.0/95, not fast-saved). */
  clx: { stream: '0Table' | '1Table' | 'WordDocument'; offset: number; length: number } | null;
  fcMin: number;
  /** Word 97 and later: a piece's fc says whether it is 8-bit or UTF-16. Before, all text is 8-bit. */
  word97: boolean;
  /** How 8-bit text is read. */
  narrow: TextDecoder;
}

const WORD_IDENT = 0xa5ec;
/** The first nFib of Word 97: earlier ones (Word 6, Word 95) lay the FIB out differently. */
const WORD97 = 0x00c1;
/** nFib of Word 6.0 (101) to Word 95 (104, 105 in some builds). */
const WORD6 = { first: 0x0065, last: 0x0069 };
const F_COMPLEX = 0x0004;
const F_ENCRYPTED = 0x0100;
const F_WHICH_TABLE = 0x0200;
/** fcClx is the 34th pair of FibRgFcLcb97. */
const CLX_PAIR = 33;

const windows1252 = new TextDecoder('windows-1252');

function readFib(word: Buffer): Fib {
  if (word.readUInt16LE(0) !== WORD_IDENT)
    throw new RejectedItem('not a readable Word document: its header is not a Word header');
  const version = word.readUInt16LE(2);
  if (version >= WORD6.first && version <= WORD6.last) return readWord6Fib(word);
  if (version < WORD97 && version !== 0)
    throw new RejectedItem(
      `a Word document older than Word 6.0 (version ${version}): only Word 6.0 and later are read`,
    );
  const flags = word.readUInt16LE(0x0a);
  // FibBase (32 bytes), then three arrays, each after its count: of 16-bit words, of 32-bit ones, of offset/length pairs.
  let at = 32;
  at += 2 + word.readUInt16LE(at) * 2;
  const longs = at + 2;
  at += 2 + word.readUInt16LE(at) * 4;
  const pairs = at + 2;
  if (word.readUInt16LE(at) <= CLX_PAIR)
    throw new RejectedItem('not a readable Word document: its header has no piece table');
  return {
    encrypted: (flags & F_ENCRYPTED) !== 0,
    storyLengths: [3, 4, 5, 6, 7, 8, 9].map((i) => Math.max(0, word.readInt32LE(longs + i * 4))),
    clx: {
      stream: flags & F_WHICH_TABLE ? '1Table' : '0Table',
      offset: word.readUInt32LE(pairs + CLX_PAIR * 8),
      length: word.readUInt32LE(pairs + CLX_PAIR * 8 + 4),
    },
    fcMin: 0,
    word97: true,
    narrow: windows1252,
  };
}

/**
 * Word 6.0 and 95's FIB: fixed offsets, no table stream. Its text is in the code page of the
 * language the document was written in (`lid`), or Mac Roman when Word for the Mac saved it (`chse`).
 */
function readWord6Fib(word: Buffer): Fib {
  const flags = word.readUInt16LE(0x0a);
  const mac = word.readUInt16LE(0x14) === 256;
  return {
    encrypted: (flags & F_ENCRYPTED) !== 0,
    storyLengths: [0, 1, 2, 3, 4, 5, 6].map((i) => Math.max(0, word.readInt32LE(0x34 + i * 4))),
    clx:
      flags & F_COMPLEX
        ? { stream: 'WordDocument', offset: word.readUInt32LE(0x160), length: word.readUInt32LE(0x164) }
        : null,
    fcMin: word.readUInt32LE(0x18),
    word97: false,
    narrow: new TextDecoder(mac ? 'macintosh' : codePageLabel(ansiCodePage(word.readUInt16LE(0x06)), 'windows-1252')),
  };
}

/** The Windows (ANSI) code page of a language id: the one a document in that language was typed in. */
function ansiCodePage(lid: number): number {
  const exact = EAST_ASIAN_CODE_PAGES[lid];
  if (exact) return exact;
  const primary = lid & 0x3ff;
  for (const [codePage, languages] of LANGUAGE_CODE_PAGES) if (languages.includes(primary)) return codePage;
  return 1252;
}

/** Japanese, Chinese (PRC, Singapore; Taiwan, Hong Kong) and Korean by their whole language id. */
const EAST_ASIAN_CODE_PAGES: Record<number, number> = {
  0x0411: 932,
  0x0804: 936,
  0x1004: 936,
  0x0404: 950,
  0x0c04: 950,
  0x0412: 949,
};

/** Primary language ids ([MS-LCID]) by the code page their Windows used for 8-bit text. */
const LANGUAGE_CODE_PAGES: [number, number[]][] = [
  // Czech, Hungarian, Polish, Slovak, Croatian and Serbian (Latin), Slovenian, Romanian, Albanian
  [1250, [0x05, 0x0e, 0x15, 0x1b, 0x1a, 0x24, 0x18, 0x1c]],
  // Russian, Ukrainian, Belarusian, Bulgarian, Macedonian, Kazakh
  [1251, [0x19, 0x22, 0x23, 0x02, 0x2f, 0x3f]],
  [1253, [0x08]], // Greek
  [1254, [0x1f, 0x2c]], // Turkish, Azerbaijani
  [1255, [0x0d]], // Hebrew
  [1256, [0x01, 0x29, 0x20]], // Arabic, Persian, Urdu
  [1257, [0x25, 0x26, 0x27]], // Estonian, Latvian, Lithuanian
  [1258, [0x2a]], // Vietnamese
  [874, [0x1e]], // Thai
];

function storyStarts(lengths: number[]): number[] {
  const starts: number[] = [];
  let at = 0;
  for (const length of lengths) {
    starts.push(at);
    at += length;
  }
  return starts;
}

interface Piece {
  /** Character positions [start, end). */
  start: number;
  end: number;
  /** Byte offset in WordDocument of the piece's first character. */
  offset: number;
  /** One byte per character (Windows-1252 since Word 97; before, the document's code page), else two (UTF-16LE). */
  compressed: boolean;
}

/**
 * The piece table of the Clx ([MS-DOC] 2.9.38): Prc entries (formatting) skipped, then the Pcdt.
 * Before Word 97 every piece is 8-bit, its fc a plain byte offset.
 */
function readPieceTable(table: Buffer, clx: { offset: number; length: number }, word97: boolean): Piece[] {
  const end = Math.min(table.length, clx.offset + clx.length);
  let at = clx.offset;
  while (at < end && table[at] === 0x01) at += 3 + table.readInt16LE(at + 1);
  if (at >= end || table[at] !== 0x02)
    throw new RejectedItem('not a readable Word document: its piece table is missing');
  const size = table.readUInt32LE(at + 1);
  const plc = at + 5;
  const count = (size - 4) / 12;
  if (!Number.isInteger(count) || count < 1 || plc + size > table.length)
    throw new RejectedItem('not a readable Word document: its piece table is damaged');
  const pieces: Piece[] = [];
  for (let i = 0; i < count; i++) {
    const fc = table.readUInt32LE(plc + (count + 1) * 4 + i * 8 + 2);
    const compressed = !word97 || (fc & 0x40000000) !== 0;
    pieces.push({
      start: table.readUInt32LE(plc + i * 4),
      end: table.readUInt32LE(plc + (i + 1) * 4),
      offset: word97 && compressed ? (fc & 0x3fffffff) / 2 : fc,
      compressed,
    });
  }
  return pieces;
}

/** The raw characters at positions [start, end), control characters and all. */
function textOf(word: Buffer, pieces: Piece[], start: number, end: number, narrow: TextDecoder): string {
  const parts: string[] = [];
  for (const piece of pieces) {
    const from = Math.max(start, piece.start);
    const to = Math.min(end, piece.end);
    if (from >= to) continue;
    const width = piece.compressed ? 1 : 2;
    const bytes = word.subarray(piece.offset + (from - piece.start) * width, piece.offset + (to - piece.start) * width);
    parts.push(piece.compressed ? narrow.decode(bytes) : bytes.toString('utf16le'));
  }
  return parts.join('');
}

const FIELD_BEGIN = '\u0013';
const FIELD_SEPARATOR = '\u0014';
const FIELD_END = '\u0015';

/**
 * Word's control characters as plain text: paragraph, line, page and column breaks as line ends,
 * table cells as tabs and rows as lines; a field (a hyperlink, a date, a table of contents) as the
 * result it shows, its code left out; pictures, note references and soft hyphens left out.
 */
function plainText(raw: string): string {
  const out: string[] = [];
  // One entry per open field: true once past its separator (showing its result).
  const fields: boolean[] = [];
  for (let i = 0; i < raw.length; i++) {
    const char = raw[i]!;
    if (char === FIELD_BEGIN) fields.push(false);
    else if (char === FIELD_SEPARATOR) fields[fields.length - 1] = true;
    else if (char === FIELD_END) fields.pop();
    // A cell ends with 0x07; so does its row, right after its last cell's.
    else if (fields.every(Boolean)) out.push(char !== '\u0007' ? char : raw[i - 1] === '\u0007' ? '\n' : '\t');
  }
  return out
    .join('')
    .replace(/[\u000d\u000b\u000e]/g, '\n')
    .replace(/\u000c/g, '\n\n')
    .replace(/\u001e/g, '-')
    .replace(/[\u0000-\u0008\u000f-\u001f]/g, '')
    .split('\n')
    .map((line) => line.replace(/[\t ]+$/, ''))
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}
