import { TextDecoder } from 'node:util';
import { RejectedItem } from '../../handler.js';
import { codePageLabel } from '../../text.js';
import type { CompoundFile } from './compound.js';
import { dateFormatOf, dateText, type DateFormat } from '../spreadsheet-dates.js';

/**
 * The cells of an Excel 5.0–2003 workbook ([MS-XLS]): the `Workbook` stream (`Book` before Excel
 * 97) is a run of records; the globals hold the sheets' names and, since Excel 97 (BIFF8), the
 * shared strings (SST), each sheet's records its cells. Read are text (shared or inline), numbers
 * (a date as its date, by the cell's number format) and formulas' last results, row by row.
 * Excel 5.0 and 95 (BIFF5) write text as bytes in the workbook's code page (CODEPAGE), not Unicode.
 */
export function readWorkbook(file: CompoundFile): { sheets: { name: string; rows: string[] }[] } {
  const stream = file.stream('Workbook') ?? file.stream('Book');
  if (!stream) throw new RejectedItem('not a readable Excel workbook: it has no Workbook stream');
  const records = [...recordsOf(stream)];
  const biff5 = records[0]?.type === BOF && records[0].data.readUInt16LE(0) === BIFF5;
  let narrow = new TextDecoder('windows-1252');
  /** A BIFF5 string: its length (one byte or two), then its characters, one byte each. */
  const byteString = (data: Buffer, at: number, lengthBytes: 1 | 2) => {
    const length = lengthBytes === 1 ? data[at]! : data.readUInt16LE(at);
    return narrow.decode(data.subarray(at + lengthBytes, at + lengthBytes + length));
  };
  const names = new Map<number, string>();
  const strings: string[] = [];
  const sheets: { name: string; cells: Cell[] }[] = [];
  let sheet: Cell[] | null = null;
  let pendingFormula: { row: number; column: number } | null = null;
  // Number formats by id (FORMAT), each cell format's number format (XF, in order), the date system.
  const formatCodes = new Map<number, string>();
  const cellFormats: DateFormat[] = [];
  let date1904 = false;
  /** A number as its cell shows it: a date or a time when its format says so. */
  const shown = (data: Buffer, value: number, xf = data.readUInt16LE(4)) => {
    const format = cellFormats[xf];
    return format && value >= 0 ? dateText(value, format, date1904) : numberText(value);
  };

  for (let i = 0; i < records.length; i++) {
    const { type, data, offset } = records[i]!;
    switch (type) {
      case FILEPASS:
        if (sheet === null) throw new RejectedItem('a password-protected Excel workbook: its cells are encrypted');
        break;
      case CODEPAGE:
        if (biff5)
          narrow = new TextDecoder(
            codePageLabel(BIFF_CODE_PAGES[data.readUInt16LE(0)] ?? data.readUInt16LE(0), 'windows-1252'),
          );
        break;
      case BOUNDSHEET:
        // Worksheets only (dt 0): a chart or macro sheet has no cells to read.
        if (data[5] === 0) names.set(data.readUInt32LE(0), biff5 ? byteString(data, 6, 1) : shortString(data, 6));
        break;
      case FORMAT:
        formatCodes.set(data.readUInt16LE(0), biff5 ? byteString(data, 2, 1) : unicodeString([data.subarray(2)]));
        break;
      case XF: {
        const id = data.readUInt16LE(2);
        cellFormats.push(dateFormatOf(id, formatCodes.get(id)));
        break;
      }
      case DATEMODE:
        date1904 = data.readUInt16LE(0) === 1;
        break;
      case SST:
        strings.push(...sharedStrings([data.subarray(8), ...continuations(records, i)]));
        break;
      case BOF:
        if (names.has(offset)) {
          sheet = [];
          sheets.push({ name: names.get(offset)!, cells: sheet });
        } else sheet = null;
        break;
      case LABELSST:
        sheet?.push(cellAt(data, strings[data.readUInt32LE(6)] ?? ''));
        break;
      case LABEL:
      case RSTRING:
        sheet?.push(cellAt(data, biff5 ? byteString(data, 6, 2) : unicodeString([data.subarray(6)])));
        break;
      case NUMBER:
        sheet?.push(cellAt(data, shown(data, data.readDoubleLE(6))));
        break;
      case RK:
        sheet?.push(cellAt(data, shown(data, rkValue(data.readUInt32LE(6)))));
        break;
      case MULRK: {
        const row = data.readUInt16LE(0);
        const first = data.readUInt16LE(2);
        for (let at = 4, column = first; at + 6 <= data.length - 2; at += 6, column++)
          sheet?.push({ row, column, text: shown(data, rkValue(data.readUInt32LE(at + 2)), data.readUInt16LE(at)) });
        break;
      }
      case FORMULA:
        pendingFormula = null;
        if (data.readUInt16LE(12) !== 0xffff) sheet?.push(cellAt(data, shown(data, data.readDoubleLE(6))));
        // A text result follows in a STRING record.
        else if (data[6] === 0) pendingFormula = { row: data.readUInt16LE(0), column: data.readUInt16LE(2) };
        else if (data[6] === 1) sheet?.push(cellAt(data, data[8] ? 'TRUE' : 'FALSE'));
        break;
      case STRING:
        if (pendingFormula && sheet) {
          const text = biff5 ? byteString(data, 0, 2) : unicodeString([data, ...continuations(records, i)]);
          sheet.push({ ...pendingFormula, text });
        }
        pendingFormula = null;
        break;
    }
  }
  return {
    sheets: sheets.map(({ name, cells }) => ({ name, rows: rowsOf(cells) })),
  };
}

const BOF = 0x0809;
/** A BOF's version: Excel 5.0 and 95 (BIFF5); Excel 97 and later write 0x0600 (BIFF8). */
const BIFF5 = 0x0500;
const BOUNDSHEET = 0x0085;
const CODEPAGE = 0x0042;
const CONTINUE = 0x003c;
const DATEMODE = 0x0022;
const FILEPASS = 0x002f;
const FORMAT = 0x041e;
const FORMULA = 0x0006;
const LABEL = 0x0204;
const LABELSST = 0x00fd;
const MULRK = 0x00bd;
const NUMBER = 0x0203;
const RK = 0x027e;
const RSTRING = 0x00d6;
const SST = 0x00fc;
const STRING = 0x0207;
const XF = 0x00e0;

/** CODEPAGE values that are no Windows code page number: Mac Roman, Windows-1252, ASCII. */
const BIFF_CODE_PAGES: Record<number, number> = { 0x8000: 10000, 0x8001: 1252, 367: 20127 };

interface BiffRecord {
  type: number;
  data: Buffer;
  /** Where the record starts in the stream: a BOUNDSHEET names its sheet's BOF by this. */
  offset: number;
}

function* recordsOf(stream: Buffer): Generator<BiffRecord> {
  for (let at = 0; at + 4 <= stream.length;) {
    const type = stream.readUInt16LE(at);
    const length = stream.readUInt16LE(at + 2);
    yield { type, data: stream.subarray(at + 4, Math.min(stream.length, at + 4 + length)), offset: at };
    at += 4 + length;
  }
}

/** The CONTINUE records right after record `index`: a long record's further bytes. */
function continuations(records: BiffRecord[], index: number): Buffer[] {
  const parts: Buffer[] = [];
  for (let i = index + 1; records[i]?.type === CONTINUE; i++) parts.push(records[i]!.data);
  return parts;
}

interface Cell {
  row: number;
  column: number;
  text: string;
}

const cellAt = (data: Buffer, text: string): Cell => ({
  row: data.readUInt16LE(0),
  column: data.readUInt16LE(2),
  text,
});

/** Cells in reading order, tab between the cells of a row; empty cells and rows left out. */
function rowsOf(cells: Cell[]): string[] {
  const rows = new Map<number, Cell[]>();
  for (const cell of cells) if (cell.text.trim()) rows.set(cell.row, [...(rows.get(cell.row) ?? []), cell]);
  return [...rows.entries()]
    .sort(([a], [b]) => a - b)
    .map(([, row]) =>
      row
        .sort((a, b) => a.column - b.column)
        .map((cell) => cell.text.replace(/\s+/g, ' ').trim())
        .join('\t'),
    );
}

/** A number as Excel shows it in General format, to 15 significant digits (0.1 + 0.2 is 0.3). */
const numberText = (value: number) => String(Number(value.toPrecision(15)));

/** An RK number ([MS-XLS] 2.5.217): a 30-bit integer or the top of a double, perhaps hundredths. */
function rkValue(rk: number): number {
  const cents = (rk & 1) !== 0;
  let value: number;
  if (rk & 2) value = rk >> 2;
  else {
    const bytes = Buffer.alloc(8);
    bytes.writeUInt32LE((rk & 0xfffffffc) >>> 0, 4);
    value = bytes.readDoubleLE(0);
  }
  return cents ? value / 100 : value;
}

/** A ShortXLUnicodeString: an 8-bit length, a flag byte (UTF-16 or one byte per character), the characters. */
function shortString(data: Buffer, at: number): string {
  const reader = new Continued([data.subarray(at)]);
  const length = reader.u8();
  return reader.characters(length, (reader.u8() & 0x01) !== 0);
}

/** An XLUnicodeString: a 16-bit length, a flag byte, the characters (perhaps going on in CONTINUE records). */
function unicodeString(parts: Buffer[]): string {
  const reader = new Continued(parts);
  const length = reader.u16();
  return reader.characters(length, (reader.u8() & 0x01) !== 0);
}

/** The shared string table: each string with its length, flags, and rich-text runs and phonetic data skipped. */
function sharedStrings(parts: Buffer[]): string[] {
  const reader = new Continued(parts);
  const strings: string[] = [];
  while (!reader.done()) {
    const length = reader.u16();
    const flags = reader.u8();
    const runs = flags & 0x08 ? reader.u16() : 0;
    const phonetic = flags & 0x04 ? reader.u32() : 0;
    strings.push(reader.characters(length, (flags & 0x01) !== 0));
    reader.skip(runs * 4 + phonetic);
  }
  return strings;
}

/**
 * Reads across a record and its CONTINUE records. A string's characters may go on in the next
 * record, which then begins with a flag byte of its own: the rest may be one byte per character
 * where the start was two, or the other way round ([MS-XLS] 2.5.293, 2.5.294). Anything else
 * (rich-text runs, phonetic data) goes on without one.
 */
class Continued {
  private part = 0;
  private at = 0;

  constructor(private readonly parts: Buffer[]) {}

  done(): boolean {
    while (this.part < this.parts.length && this.at >= this.parts[this.part]!.length) this.next();
    return this.part >= this.parts.length;
  }

  u8(): number {
    return this.done() ? 0 : this.parts[this.part]![this.at++]!;
  }

  u16(): number {
    return this.u8() | (this.u8() << 8);
  }

  u32(): number {
    return (this.u16() | (this.u16() << 16)) >>> 0;
  }

  skip(count: number): void {
    while (count > 0 && !this.done()) {
      const step = Math.min(count, this.parts[this.part]!.length - this.at);
      this.at += step;
      count -= step;
    }
  }

  characters(length: number, wide: boolean): string {
    let text = '';
    while (length > 0 && this.part < this.parts.length) {
      const buffer = this.parts[this.part]!;
      const count = Math.min(length, Math.floor((buffer.length - this.at) / (wide ? 2 : 1)));
      const bytes = buffer.subarray(this.at, this.at + count * (wide ? 2 : 1));
      text += wide ? bytes.toString('utf16le') : bytes.toString('latin1');
      this.at += bytes.length;
      length -= count;
      if (length > 0) {
        this.next();
        if (this.part < this.parts.length) wide = (this.u8() & 0x01) !== 0;
      }
    }
    return text;
  }

  private next(): void {
    this.part++;
    this.at = 0;
  }
}
