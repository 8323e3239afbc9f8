import { RejectedItem } from '../../handler.js';
import type { CompoundFile } from './compound.js';

/**
 * The text of a Word 97–2003 document ([MS-DOC]): the File Information Block at the start of the
 * `WordDocument` stream says how long each story is and where the piece table lies (in `0Table` or
 * `1Table`); the piece table maps character positions to runs of bytes, 8-bit (Windows-1252) or
 * UTF-16. Read are the main text, then footnotes, comments, endnotes and text boxes; headers and
 * footers (repeated on every page, mostly page numbers) are not. Fields show their result, not their code.
 */
export function readWordText(file: CompoundFile): string {
  const word = file.stream('WordDocument');
  if (!word || word.length < 0x200)
    throw new RejectedItem('not a readable Word document: it has no WordDocument stream');
  const fib = readFib(word);
  if (fib.encrypted) throw new RejectedItem('a password-protected Word document: its text is encrypted');
  const table = file.stream(fib.tableStream);
  if (!table) throw new RejectedItem(`not a readable Word document: it has no ${fib.tableStream} stream`);
  const pieces = readPieceTable(table, fib.clx);
  const text = (start: number, length: number) =>
    length > 0 ? plainText(textOf(word, pieces, start, start + length)) : '';

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
  tableStream: '0Table' | '1Table';
  /** ccpText, ccpFtn, ccpHdd, ccpMcr, ccpAtn, ccpEdn, ccpTxbx: the stories' lengths in characters. */
  storyLengths: number[];
  clx: { offset: number; length: number };
}

const WORD_IDENT = 0xa5ec;
/** The first nFib of Word 97: earlier ones (Word 6, Word 95) lay the FIB out differently. */
const WORD97 = 0x00c1;
const F_ENCRYPTED = 0x0100;
const F_WHICH_TABLE = 0x0200;
/** fcClx is the 34th pair of FibRgFcLcb97. */
const CLX_PAIR = 33;

function readFib(word: Buffer): Fib {
  if (word.readUInt16LE(0) !== WORD_IDENT)
    throw new RejectedItem('not a readable Word document: its header is not a Word header');
  const version = word.readUInt16LE(2);
  if (version < WORD97 && version !== 0)
    throw new RejectedItem(`a Word 6.0/95 document (version ${version}): only Word 97 and later are read`);
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
    tableStream: flags & F_WHICH_TABLE ? '1Table' : '0Table',
    storyLengths: [3, 4, 5, 6, 7, 8, 9].map((i) => Math.max(0, word.readInt32LE(longs + i * 4))),
    clx: { offset: word.readUInt32LE(pairs + CLX_PAIR * 8), length: word.readUInt32LE(pairs + CLX_PAIR * 8 + 4) },
  };
}

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
  /** One byte per character (Windows-1252), else two (UTF-16LE). */
  compressed: boolean;
}

/** The piece table of the Clx ([MS-DOC] 2.9.38): Prc entries (formatting) skipped, then the Pcdt. */
function readPieceTable(table: Buffer, clx: { offset: number; length: number }): Piece[] {
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
    const compressed = (fc & 0x40000000) !== 0;
    pieces.push({
      start: table.readUInt32LE(plc + i * 4),
      end: table.readUInt32LE(plc + (i + 1) * 4),
      offset: compressed ? (fc & 0x3fffffff) / 2 : fc,
      compressed,
    });
  }
  return pieces;
}

const windows1252 = new TextDecoder('windows-1252');

/** The raw characters at positions [start, end), control characters and all. */
function textOf(word: Buffer, pieces: Piece[], start: number, end: number): string {
  const parts: string[] = [];
  for (const piece of pieces) {
    const from = Math.max(start, piece.start);
    const to = Math.min(end, piece.end);
    if (from >= to) continue;
    const width = piece.compressed ? 1 : 2;
    const bytes = word.subarray(piece.offset + (from - piece.start) * width, piece.offset + (to - piece.start) * width);
    parts.push(piece.compressed ? windows1252.decode(bytes) : bytes.toString('utf16le'));
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
