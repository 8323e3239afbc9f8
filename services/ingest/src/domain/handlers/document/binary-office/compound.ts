import CFB from 'cfb';
import { RejectedItem } from '../../handler.js';
import { codePageLabel } from '../../text.js';

/**
 * Office 97–2003 files are OLE compound files ([MS-CFB]): a small file system of named streams.
 * Word keeps its text in `WordDocument` (and `0Table`/`1Table`), Excel in `Workbook`, PowerPoint in
 * `PowerPoint Document`; all three keep their title, author and dates in `\x05SummaryInformation`.
 */
export class CompoundFile {
  private constructor(private readonly container: CFB.CFB$Container) {}

  static open(bytes: Buffer, what: string): CompoundFile {
    let container: CFB.CFB$Container;
    try {
      container = CFB.read(bytes, { type: 'buffer' });
    } catch (error) {
      throw new RejectedItem(`not a readable ${what}: ${error instanceof Error ? error.message : String(error)}`);
    }
    return new CompoundFile(container);
  }

  /** A stream's bytes by its name at the root, or null when the file has none. */
  stream(name: string): Buffer | null {
    const entry = CFB.find(this.container, `/${name}`);
    if (!entry || entry.type !== 2 || !entry.content) return null;
    return Buffer.isBuffer(entry.content) ? entry.content : Buffer.from(entry.content as Uint8Array);
  }

  has(name: string): boolean {
    return this.stream(name) !== null;
  }

  /** The title and creation date the file's summary information gives, where it gives them. */
  summary(): Summary {
    const bytes = this.stream('\u0005SummaryInformation');
    if (!bytes) return {};
    try {
      return readSummary(bytes);
    } catch {
      // A damaged property set loses the title, never the text.
      return {};
    }
  }
}

export interface Summary {
  title?: string;
  /** When the file was first saved (ISO). */
  created?: string;
}

/** Property ids of the summary information set ([MS-OLEPS] 2.25.1) and the value types read. */
const PID_CODEPAGE = 1;
const PID_TITLE = 2;
const PID_CREATE_DTM = 12;
const VT_I2 = 0x02;
const VT_LPSTR = 0x1e;
const VT_LPWSTR = 0x1f;
const VT_FILETIME = 0x40;

/** Milliseconds between 1601-01-01 (FILETIME's epoch) and 1970-01-01. */
const FILETIME_EPOCH_MS = 11_644_473_600_000;

/** The first property set of a `SummaryInformation` stream ([MS-OLEPS] 2.21): its title and creation time. */
function readSummary(bytes: Buffer): Summary {
  const section = bytes.readUInt32LE(44);
  const count = bytes.readUInt32LE(section + 4);
  const offsets = new Map<number, number>();
  for (let i = 0; i < count; i++) {
    const entry = section + 8 + i * 8;
    offsets.set(bytes.readUInt32LE(entry), section + bytes.readUInt32LE(entry + 4));
  }
  const codepage = offsets.has(PID_CODEPAGE) ? value(bytes, offsets.get(PID_CODEPAGE)!, 1252) : 1252;
  const read = (id: number) => (offsets.has(id) ? value(bytes, offsets.get(id)!, Number(codepage)) : undefined);
  const title = read(PID_TITLE);
  const created = read(PID_CREATE_DTM);
  return {
    ...(typeof title === 'string' && title.trim() ? { title: title.trim() } : {}),
    ...(created instanceof Date ? { created: created.toISOString() } : {}),
  };
}

function value(bytes: Buffer, at: number, codepage: number): string | number | Date | undefined {
  const type = bytes.readUInt16LE(at);
  switch (type) {
    case VT_I2:
      // A code page is unsigned though typed VT_I2: 65001 (UTF-8) reads as -535.
      return bytes.readUInt16LE(at + 4);
    case VT_LPSTR: {
      const length = bytes.readUInt32LE(at + 4);
      const raw = bytes.subarray(at + 8, at + 8 + length);
      const text = new TextDecoder(codePageLabel(codepage, 'windows-1252')).decode(raw);
      return text.replace(/\0[\s\S]*$/, '');
    }
    case VT_LPWSTR: {
      const length = bytes.readUInt32LE(at + 4);
      return bytes
        .subarray(at + 8, at + 8 + length * 2)
        .toString('utf16le')
        .replace(/\0[\s\S]*$/, '');
    }
    case VT_FILETIME: {
      const ticks = bytes.readBigUInt64LE(at + 4);
      // Zero, or a duration rather than a date (editing time is a FILETIME too): no date.
      const ms = Number(ticks / 10_000n) - FILETIME_EPOCH_MS;
      return ms > 0 ? new Date(ms) : undefined;
    }
    default:
      return undefined;
  }
}
