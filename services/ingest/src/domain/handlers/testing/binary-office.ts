import CFB from 'cfb';

/**
 * Office 97–2003 files written from their public specifications ([MS-DOC], [MS-XLS], [MS-PPT],
 * [MS-OLEPS]) as the applications lay them out: enough of each format for a reader to take it as
 * Word's, Excel's or PowerPoint's own, with the variations real files show (text pieces both 8-bit
 * and UTF-16, strings split across records, incremental saves).
 */

export interface SummaryProperties {
  title?: string;
  created?: Date;
}

export interface WordDocumentSpec extends SummaryProperties {
  /** The main text; `\r` ends a paragraph, `\x07` a table cell, `\x13…\x14…\x15` a field. */
  text: string;
  footnotes?: string;
  /** Headers and footers: a reader leaves them out. */
  headers?: string;
  /** Where the main text switches from one byte per character (Windows-1252) to UTF-16. */
  wideFrom?: number;
  encrypted?: boolean;
  /** nFib: 0x00C1 is Word 97 (the default); 0x0065 Word 6.0, 0x0068 Word 95 (`word6Document`); 0x002D Word 2.0. */
  version?: number;
}

const windows1252 = (text: string) =>
  Buffer.from(
    [...text].map((char) => {
      const code = char.codePointAt(0)!;
      if (code < 0x100) return code;
      const special: Record<number, number> = {
        0x201c: 0x93,
        0x201d: 0x94,
        0x2019: 0x92,
        0x2013: 0x96,
        0x2014: 0x97,
        0x20ac: 0x80,
      };
      if (special[code] === undefined) throw new Error(`not in Windows-1252: ${char}`);
      return special[code];
    }),
  );

/** A .doc: the FIB, the stories as two pieces (8-bit then UTF-16), the piece table in 1Table. */
export function wordDocument(spec: WordDocumentSpec): Buffer {
  if (spec.version !== undefined && spec.version >= 0x65 && spec.version < 0xc1) return word6Document(spec);
  const stories = [spec.text, spec.footnotes ?? '', spec.headers ?? ''];
  const all = stories.join('');
  const split = Math.min(spec.wideFrom ?? all.length, all.length);
  const narrow = windows1252(all.slice(0, split));
  const wide = Buffer.from(all.slice(split), 'utf16le');
  const textStart = 0x400;
  const word = Buffer.alloc(textStart + narrow.length + wide.length + 1);
  word.writeUInt16LE(0xa5ec, 0);
  word.writeUInt16LE(spec.version ?? 0x00c1, 2);
  word.writeUInt16LE(0x0409, 6);
  word.writeUInt16LE(0x0200 | (spec.encrypted ? 0x0100 : 0), 0x0a);
  word.writeUInt16LE(0x00bf, 0x0c);
  word.writeUInt16LE(14, 32); // csw: fibRgW's 16-bit words
  word.writeUInt16LE(22, 62); // cslw: fibRgLw's 32-bit words
  const longs = 64;
  word.writeInt32LE(word.length, longs); // cbMac
  word.writeInt32LE(spec.text.length, longs + 12);
  word.writeInt32LE(stories[1]!.length, longs + 16);
  word.writeInt32LE(stories[2]!.length, longs + 20);
  word.writeUInt16LE(0x5d, 152); // cbRgFcLcb: Word 97's 93 pairs
  const pairs = 154;
  narrow.copy(word, textStart);
  wide.copy(word, textStart + narrow.length);

  // The Clx: one Prc (formatting a reader skips), then the piece table.
  const pieces = [
    { start: 0, end: split, fc: (textStart * 2) | 0x40000000 },
    { start: split, end: all.length, fc: textStart + narrow.length },
  ].filter((piece) => piece.end > piece.start);
  const plc = Buffer.alloc((pieces.length + 1) * 4 + pieces.length * 8);
  pieces.forEach((piece, i) => {
    plc.writeUInt32LE(piece.start, i * 4);
    plc.writeUInt32LE(piece.fc >>> 0, (pieces.length + 1) * 4 + i * 8 + 2);
  });
  plc.writeUInt32LE(all.length, pieces.length * 4);
  const prc = Buffer.from([0x01, 0x02, 0x00, 0x08, 0x24]);
  const pcdt = Buffer.alloc(5);
  pcdt[0] = 0x02;
  pcdt.writeUInt32LE(plc.length, 1);
  const table = Buffer.concat([Buffer.alloc(16), prc, pcdt, plc]);
  word.writeUInt32LE(16, pairs + 33 * 8);
  word.writeUInt32LE(table.length - 16, pairs + 33 * 8 + 4);

  const file = CFB.utils.cfb_new();
  CFB.utils.cfb_add(file, '/WordDocument', word);
  CFB.utils.cfb_add(file, '/1Table', table);
  addSummary(file, spec);
  return CFB.write(file, { type: 'buffer' }) as Buffer;
}

/**
 * A Word 6.0 or 95 .doc (its FIB as wvWare reads it): all text 8-bit in the code page of the
 * language id `lid` (Windows-1252 by default). Saved whole, the stories are one run from fcMin;
 * fast-saved (`fastSaved`), each story's second half was typed later and appended, so a piece
 * table in WordDocument puts the runs back in order.
 */
export function word6Document(
  spec: WordDocumentSpec & { lid?: number; codePage?: string; fastSaved?: boolean },
): Buffer {
  const stories = [spec.text, spec.footnotes ?? '', spec.headers ?? ''];
  const all = stories.join('');
  const bytes = encode8(all, spec.codePage ?? 'windows-1252');
  const fcMin = 0x300;
  const half = Math.floor(all.length / 2);
  // Fast-saved: the second half first in the stream, then the first.
  const body = spec.fastSaved ? Buffer.concat([bytes.subarray(half), bytes.subarray(0, half)]) : bytes;
  const pieces = spec.fastSaved
    ? [
        { start: 0, end: half, fc: fcMin + (all.length - half) },
        { start: half, end: all.length, fc: fcMin },
      ]
    : [];
  const plc = Buffer.alloc((pieces.length + 1) * 4 + pieces.length * 8);
  pieces.forEach((piece, i) => {
    plc.writeUInt32LE(piece.start, i * 4);
    plc.writeUInt32LE(piece.fc, (pieces.length + 1) * 4 + i * 8 + 2);
  });
  plc.writeUInt32LE(all.length, pieces.length * 4);
  const pcdt = Buffer.alloc(5);
  pcdt[0] = 0x02;
  pcdt.writeUInt32LE(plc.length, 1);
  const clx = spec.fastSaved
    ? Buffer.concat([Buffer.from([0x01, 0x02, 0x00, 0x08, 0x24]), pcdt, plc])
    : Buffer.alloc(0);
  // Word writes its formatting in 512-byte pages after the text: a stream never under 4,096 bytes.
  const word = Buffer.alloc(Math.max(4096, fcMin + body.length + clx.length + 1));
  word.writeUInt16LE(0xa5ec, 0);
  word.writeUInt16LE(spec.version ?? 0x65, 2);
  word.writeUInt16LE(spec.lid ?? 0x0409, 6);
  word.writeUInt16LE((spec.fastSaved ? 0x0004 : 0) | (spec.encrypted ? 0x0100 : 0), 0x0a);
  word.writeUInt32LE(fcMin, 0x18);
  word.writeUInt32LE(fcMin + body.length, 0x1c);
  word.writeUInt32LE(word.length, 0x20);
  stories.forEach((story, i) => word.writeInt32LE(story.length, 0x34 + i * 4));
  body.copy(word, fcMin);
  if (spec.fastSaved) {
    clx.copy(word, fcMin + body.length);
    word.writeUInt32LE(fcMin + body.length, 0x160);
    word.writeUInt32LE(clx.length, 0x164);
  }
  const file = CFB.utils.cfb_new();
  CFB.utils.cfb_add(file, '/WordDocument', word);
  addSummary(file, spec);
  return CFB.write(file, { type: 'buffer' }) as Buffer;
}

/** Text as bytes of an 8-bit code page (by its TextDecoder label). */
function encode8(text: string, label: string): Buffer {
  const decoder = new TextDecoder(label);
  const codes = new Map<string, number>();
  for (let byte = 255; byte >= 0; byte--) codes.set(decoder.decode(Buffer.from([byte])), byte);
  return Buffer.from(
    [...text].map((char) => {
      const code = codes.get(char);
      if (code === undefined) throw new Error(`not in ${label}: ${char}`);
      return code;
    }),
  );
}

export interface WorkbookSpec extends SummaryProperties {
  /** A Date cell is a date serial: formatted m/d/yy (built-in 14) at midnight UTC, else "d mmm yyyy h:mm". */
  sheets: { name: string; rows: (string | number | Date | null)[][] }[];
  /** Split the shared strings over a CONTINUE record at this many bytes of SST data. */
  continueAt?: number;
  encrypted?: boolean;
}

const record = (type: number, data: Buffer) => {
  const head = Buffer.alloc(4);
  head.writeUInt16LE(type, 0);
  head.writeUInt16LE(data.length, 2);
  return Buffer.concat([head, data]);
};

const u16 = (value: number) => {
  const bytes = Buffer.alloc(2);
  bytes.writeUInt16LE(value);
  return bytes;
};

/** An XLUnicodeRichExtendedString without runs: 8-bit when every character fits, else UTF-16. */
function unicodeString(text: string, lengthBytes: 1 | 2): Buffer {
  const wide = [...text].some((char) => char.charCodeAt(0) > 0xff);
  const length = lengthBytes === 1 ? Buffer.from([text.length]) : u16(text.length);
  return Buffer.concat([length, Buffer.from([wide ? 1 : 0]), Buffer.from(text, wide ? 'utf16le' : 'latin1')]);
}

/**
 * A .xls (BIFF8): globals (BOF, FILEPASS, BOUNDSHEETs, SST), then each sheet's BOF, its cells
 * (strings as LABELSST, whole numbers as RK, others as NUMBER, a formula with a text result), EOF.
 */
export function workbook(spec: WorkbookSpec): Buffer {
  const strings: string[] = [];
  const indexOf = (text: string) => (strings.includes(text) ? strings.indexOf(text) : strings.push(text) - 1);
  const sheetBodies = spec.sheets.map((sheet) =>
    worksheet(sheet.rows, 0x0600, (value, at, row, column) => {
      if (value instanceof Date) return [dateCell(row, column, value)];
      if (typeof value === 'string') {
        const index = Buffer.alloc(4);
        index.writeUInt32LE(indexOf(value));
        return [record(0x00fd, Buffer.concat([at, index]))];
      }
      if (Number.isInteger(value) && Math.abs(value) < 2 ** 29) {
        const rk = Buffer.alloc(4);
        rk.writeInt32LE((value << 2) | 2);
        return [record(0x027e, Buffer.concat([at, rk]))];
      }
      const number = Buffer.alloc(8);
      number.writeDoubleLE(value);
      return [record(0x0203, Buffer.concat([at, number]))];
    }),
  );

  const counts = Buffer.alloc(8);
  counts.writeUInt32LE(strings.length, 0);
  counts.writeUInt32LE(strings.length, 4);
  const sstRecords = sstSplit(counts, strings, spec.continueAt);

  const sheetRecord = (name: string, offset: number) => {
    const position = Buffer.alloc(4);
    position.writeUInt32LE(offset);
    return record(0x0085, Buffer.concat([position, Buffer.from([0, 0]), unicodeString(name, 1)]));
  };
  const head = [
    record(0x0809, bof(0x0005)),
    ...(spec.encrypted ? [record(0x002f, Buffer.alloc(6))] : []),
    ...numberFormats(),
  ];
  // The globals' length does not depend on the offsets the BOUNDSHEETs hold: lay them out once with zeros.
  const globalsLength = Buffer.concat([
    ...head,
    ...spec.sheets.map((sheet) => sheetRecord(sheet.name, 0)),
    ...sstRecords,
    record(0x000a, Buffer.alloc(0)),
  ]).length;
  let offset = globalsLength;
  const sheets = spec.sheets.map((sheet, i) => {
    const entry = sheetRecord(sheet.name, offset);
    offset += sheetBodies[i]!.length;
    return entry;
  });
  const stream = Buffer.concat([...head, ...sheets, ...sstRecords, record(0x000a, Buffer.alloc(0)), ...sheetBodies]);

  const file = CFB.utils.cfb_new();
  CFB.utils.cfb_add(file, '/Workbook', stream);
  addSummary(file, spec);
  return CFB.write(file, { type: 'buffer' }) as Buffer;
}

export interface Workbook95Spec extends SummaryProperties {
  /** A Date cell as in `WorkbookSpec`; `{ formula }` a formula whose last result is that text; `{ rich }` rich text (RSTRING). */
  sheets: { name: string; rows: (string | number | Date | { formula: string } | { rich: string } | null)[][] }[];
  /** The workbook's Windows code page (CODEPAGE): its strings are bytes in it. */
  codePage: number;
  encrypted?: boolean;
}

/**
 * A .xls as Excel 5.0 and 95 wrote it (BIFF5, the `Book` stream): no shared strings; text as
 * LABEL or RSTRING cells and a formula's STRING, names and formats, all bytes in the code page.
 */
export function workbook95(spec: Workbook95Spec): Buffer {
  const text = (value: string, lengthBytes: 1 | 2) => {
    const bytes = encode8(value, `windows-${spec.codePage}`);
    return Buffer.concat([lengthBytes === 1 ? Buffer.from([bytes.length]) : u16(bytes.length), bytes]);
  };
  const sheetBodies = spec.sheets.map((sheet) =>
    worksheet(sheet.rows, 0x0500, (value, at, row, column) => {
      if (value instanceof Date) return [dateCell(row, column, value)];
      if (typeof value === 'string') return [record(0x0204, Buffer.concat([at, text(value, 2)]))];
      if (typeof value === 'number') {
        const number = Buffer.alloc(8);
        number.writeDoubleLE(value);
        return [record(0x0203, Buffer.concat([at, number]))];
      }
      // Rich text's formatting runs follow its characters: a count, then (character, font) pairs.
      if ('rich' in value) return [record(0x00d6, Buffer.concat([at, text(value.rich, 2), Buffer.from([1, 0, 0])]))];
      // A text result: 0xFFFF in the result's last two bytes, then its STRING record.
      const result = Buffer.from([0, 0, 0, 0, 0, 0, 0xff, 0xff]);
      return [
        record(0x0006, Buffer.concat([at, result, u16(0), Buffer.alloc(4), u16(0)])),
        record(0x0207, text(value.formula, 2)),
      ];
    }),
  );
  const xf = (format: number) => {
    const data = Buffer.alloc(16);
    data.writeUInt16LE(format, 2);
    return record(0x00e0, data);
  };
  const head = [
    record(0x0809, bof(0x0005, 0x0500)),
    ...(spec.encrypted ? [record(0x002f, Buffer.alloc(4))] : []),
    record(0x0042, u16(spec.codePage)),
    record(0x041e, Buffer.concat([u16(CUSTOM_DATE_TIME), text('d mmm yyyy h:mm', 1)])),
    ...Array.from({ length: 16 }, () => xf(0)),
    xf(14),
    xf(CUSTOM_DATE_TIME),
  ];
  const sheetRecord = (name: string, offset: number) =>
    record(0x0085, Buffer.concat([u32(offset), Buffer.from([0, 0]), text(name, 1)]));
  let offset = Buffer.concat([
    ...head,
    ...spec.sheets.map((sheet) => sheetRecord(sheet.name, 0)),
    record(0x000a, Buffer.alloc(0)),
  ]).length;
  const sheets = spec.sheets.map((sheet, i) => {
    const entry = sheetRecord(sheet.name, offset);
    offset += sheetBodies[i]!.length;
    return entry;
  });
  const file = CFB.utils.cfb_new();
  CFB.utils.cfb_add(
    file,
    '/Book',
    Buffer.concat([...head, ...sheets, record(0x000a, Buffer.alloc(0)), ...sheetBodies]),
  );
  addSummary(file, spec);
  return CFB.write(file, { type: 'buffer' }) as Buffer;
}

/** A worksheet's records: its BOF (of `version`), each cell not null as `cell` writes it (`at`: its row, column and format), its EOF. */
function worksheet<T>(
  rows: (T | null)[][],
  version: number,
  cell: (value: T, at: Buffer, row: number, column: number) => Buffer[],
): Buffer {
  const cells = rows.flatMap((row, r) =>
    row.flatMap((value, c) => (value === null ? [] : cell(value, Buffer.concat([u16(r), u16(c), u16(15)]), r, c))),
  );
  return Buffer.concat([record(0x0809, bof(0x0010, version)), ...cells, record(0x000a, Buffer.alloc(0))]);
}

/** A date as Excel keeps it: days since 30 December 1899 in a NUMBER cell, formatted as a date, or a date and time. */
function dateCell(row: number, column: number, value: Date): Buffer {
  const serial = (value.getTime() - Date.UTC(1899, 11, 30)) / 86_400_000;
  const number = Buffer.alloc(8);
  number.writeDoubleLE(serial);
  const xf = Number.isInteger(serial) ? DATE_XF : DATE_TIME_XF;
  return record(0x0203, Buffer.concat([u16(row), u16(column), u16(xf), number]));
}

/** Cell formats as Excel writes them: 16 defaults (General), then a date and a custom date-time one. */
const DATE_XF = 16;
const DATE_TIME_XF = 17;
const CUSTOM_DATE_TIME = 164;

function numberFormats(): Buffer[] {
  const xf = (format: number) => {
    const data = Buffer.alloc(20);
    data.writeUInt16LE(format, 2);
    return record(0x00e0, data);
  };
  return [
    record(0x041e, Buffer.concat([u16(CUSTOM_DATE_TIME), unicodeString('d mmm yyyy h:mm', 2)])),
    ...Array.from({ length: 16 }, () => xf(0)),
    xf(14),
    xf(CUSTOM_DATE_TIME),
  ];
}

function bof(kind: number, version = 0x0600): Buffer {
  const data = Buffer.alloc(16);
  data.writeUInt16LE(version, 0);
  data.writeUInt16LE(kind, 2);
  return data;
}

/**
 * The SST as one record, or split where Excel splits a long one: inside the characters of the
 * string that reaches `at` bytes, the CONTINUE record starting with the flag byte of the
 * characters that follow, which are one byte each when they all fit (as Excel writes them) though
 * the string began in UTF-16.
 */
function sstSplit(counts: Buffer, strings: string[], at: number | undefined): Buffer[] {
  const whole = Buffer.concat([counts, ...strings.map((text) => unicodeString(text, 2))]);
  if (at === undefined) return [record(0x00fc, whole)];
  let position = counts.length;
  for (const [i, text] of strings.entries()) {
    const wide = [...text].some((char) => char.charCodeAt(0) > 0xff);
    const width = wide ? 2 : 1;
    if (at > position + 3 && at < position + 3 + text.length * width) {
      const cut = Math.floor((at - position - 3) / width);
      const rest = text.slice(cut);
      const restWide = [...rest].some((char) => char.charCodeAt(0) > 0xff);
      const first = Buffer.concat([
        counts,
        ...strings.slice(0, i).map((earlier) => unicodeString(earlier, 2)),
        u16(text.length),
        Buffer.from([wide ? 1 : 0]),
        Buffer.from(text.slice(0, cut), wide ? 'utf16le' : 'latin1'),
      ]);
      const second = Buffer.concat([
        Buffer.from([restWide ? 1 : 0]),
        Buffer.from(rest, restWide ? 'utf16le' : 'latin1'),
        ...strings.slice(i + 1).map((later) => unicodeString(later, 2)),
      ]);
      return [record(0x00fc, first), record(0x003c, second)];
    }
    position += 3 + text.length * width;
  }
  return [record(0x00fc, whole)];
}

export interface PresentationSpec extends SummaryProperties {
  slides: { title: string; body: string[]; textBox?: string; notes?: string }[];
  /** Save again incrementally with this slide's title changed: the old text stays in the stream. */
  editedTitle?: { slide: number; title: string };
}

const pptRecord = (type: number, instance: number, body: Buffer, container = false) => {
  const head = Buffer.alloc(8);
  head.writeUInt16LE((instance << 4) | (container ? 0x0f : 0), 0);
  head.writeUInt16LE(type, 2);
  head.writeUInt32LE(body.length, 4);
  return Buffer.concat([head, body]);
};

const u32 = (value: number) => {
  const bytes = Buffer.alloc(4);
  bytes.writeUInt32LE(value);
  return bytes;
};

/** Notes pages' slide ids: a slide names its notes by one (slides' own ids start at 256). */
const NOTES_SLIDE_ID = 0x1000;

const textChars = (text: string) => pptRecord(0x0fa0, 0, Buffer.from(text, 'utf16le'));
const textBytes = (text: string) => pptRecord(0x0fa8, 0, Buffer.from(text, 'latin1'));

/**
 * A .ppt: a main master with its prompts, each slide (a SlideAtom naming its notes, a drawing
 * with a text box), each slide's notes, the document with its slide list (placeholder text
 * after each SlidePersistAtom), a persist directory, a UserEditAtom; `Current User` pointing at it.
 */
export function presentation(spec: PresentationSpec): Buffer {
  const parts: Buffer[] = [];
  const offsets = new Map<number, number>();
  const place = (id: number, bytes: Buffer) => {
    offsets.set(
      id,
      parts.reduce((sum, part) => sum + part.length, 0),
    );
    parts.push(bytes);
  };
  const drawing = (texts: Buffer[]) => pptRecord(0x040c, 0, pptRecord(0xf00d, 0, Buffer.concat(texts), true), true);
  place(2, pptRecord(0x03f8, 0, drawing([textChars('Click to edit Master title style')]), true));
  spec.slides.forEach((slide, i) => {
    const slideId = 3 + i * 2;
    const notesId = slideId + 1;
    const atom = Buffer.alloc(24);
    atom.writeUInt32LE(2, 12);
    atom.writeUInt32LE(slide.notes ? NOTES_SLIDE_ID + i : 0, 16);
    place(
      slideId,
      pptRecord(
        0x03ee,
        0,
        Buffer.concat([pptRecord(0x03ef, 2, atom), drawing(slide.textBox ? [textChars(slide.textBox)] : [])]),
        true,
      ),
    );
    if (slide.notes)
      place(notesId, pptRecord(0x03f0, 0, drawing([textChars(slide.notes), textChars(String(i + 1))]), true));
  });
  // A SlidePersistAtom: the object's persist id, flags, text count, its slide id, reserved.
  const persistAtom = (persistId: number, slideId: number) =>
    pptRecord(0x03f3, 0, Buffer.concat([u32(persistId), u32(0), u32(0), u32(slideId), u32(0)]));
  const notesList = pptRecord(
    0x0ff0,
    2,
    Buffer.concat(spec.slides.flatMap((slide, i) => (slide.notes ? [persistAtom(4 + i * 2, NOTES_SLIDE_ID + i)] : []))),
    true,
  );
  const slideList = (titles: string[]) =>
    pptRecord(
      0x0ff0,
      0,
      Buffer.concat(
        spec.slides.flatMap((slide, i) => [
          persistAtom(3 + i * 2, 256 + i),
          pptRecord(0x0f9f, 0, u32(0)),
          // Titles in UTF-16, the body as Latin-1 bytes, as PowerPoint writes text that fits.
          textChars(titles[i]!),
          pptRecord(0x0f9f, 0, u32(1)),
          textBytes(slide.body.join('\r')),
        ]),
      ),
      true,
    );
  const titles = spec.slides.map((slide) => slide.title);
  place(1, pptRecord(0x03e8, 0, Buffer.concat([slideList(titles), notesList]), true));
  const ids = [...offsets.keys()].sort((a, b) => a - b);
  const directory = (entries: [number, number][]) =>
    pptRecord(0x1772, 0, Buffer.concat(entries.flatMap(([id, offset]) => [u32((1 << 20) | id), u32(offset)])));
  const userEdit = (lastEdit: number, directoryAt: number) =>
    pptRecord(
      0x0ff5,
      0,
      Buffer.concat([
        u32(0x100),
        u16(0),
        Buffer.from([0, 3]),
        u32(lastEdit),
        u32(directoryAt),
        u32(1),
        u32(ids.length + 1),
        u16(1),
        u16(0),
      ]),
    );
  const length = () => parts.reduce((sum, part) => sum + part.length, 0);
  let directoryAt = length();
  parts.push(directory(ids.map((id) => [id, offsets.get(id)!])));
  let editAt = length();
  parts.push(userEdit(0, directoryAt));
  if (spec.editedTitle) {
    // An incremental save appends the changed document and a directory naming only it.
    titles[spec.editedTitle.slide] = spec.editedTitle.title;
    const documentAt = length();
    parts.push(pptRecord(0x03e8, 0, Buffer.concat([slideList(titles), notesList]), true));
    directoryAt = length();
    parts.push(directory([[1, documentAt]]));
    const previous = editAt;
    editAt = length();
    parts.push(userEdit(previous, directoryAt));
  }
  const current = Buffer.concat([
    pptRecord(
      0x0ff6,
      0,
      Buffer.concat([u32(0x14), u32(0xe391c05f), u32(editAt), u16(0), u16(0x03f4), Buffer.from([3, 0]), u16(0)]),
    ),
  ]);

  const file = CFB.utils.cfb_new();
  CFB.utils.cfb_add(file, '/PowerPoint Document', Buffer.concat(parts));
  CFB.utils.cfb_add(file, '/Current User', current);
  addSummary(file, spec);
  return CFB.write(file, { type: 'buffer' }) as Buffer;
}

/** `\x05SummaryInformation`: one property set with the code page (1252), the title (VT_LPSTR) and the creation time. */
function addSummary(file: CFB.CFB$Container, { title, created }: SummaryProperties): void {
  const properties: [number, Buffer][] = [[1, Buffer.concat([u32(0x02), u16(1252), u16(0)])]];
  if (title) {
    const bytes = windows1252(`${title}\0`);
    const padded = Buffer.concat([bytes, Buffer.alloc((4 - (bytes.length % 4)) % 4)]);
    properties.push([2, Buffer.concat([u32(0x1e), u32(bytes.length), padded])]);
  }
  if (created) {
    const ticks = (BigInt(created.getTime()) + 11_644_473_600_000n) * 10_000n;
    const value = Buffer.alloc(12);
    value.writeUInt32LE(0x40, 0);
    value.writeBigUInt64LE(ticks, 4);
    properties.push([12, value]);
  }
  const headerLength = 8 + properties.length * 8;
  let offset = headerLength;
  const index = properties.map(([id, value]) => {
    const entry = Buffer.concat([u32(id), u32(offset)]);
    offset += value.length;
    return entry;
  });
  const section = Buffer.concat([
    u32(offset),
    u32(properties.length),
    ...index,
    ...properties.map(([, value]) => value),
  ]);
  const header = Buffer.alloc(48);
  header.writeUInt16LE(0xfffe, 0);
  header.writeUInt32LE(1, 24);
  Buffer.from('e0859ff2f94f6810ab9108002b27b3d9', 'hex').copy(header, 28);
  header.writeUInt32LE(48, 44);
  CFB.utils.cfb_add(file, '/\u0005SummaryInformation', Buffer.concat([header, section]));
}
