import JSZip from 'jszip';

/**
 * Pages, Numbers and Keynote documents written as iWork '13 lays them out (obriensp/iWorkFileFormat),
 * for tests: a zip whose `Index/*.iwa` archives are Snappy chunks (a 4-byte header, then literals)
 * of objects, each an ArchiveInfo (id; each message's type and length) and its messages.
 */

const varint = (value: number): Buffer => {
  const bytes: number[] = [];
  let rest = value;
  do {
    const low = rest % 128;
    rest = Math.floor(rest / 128);
    bytes.push(rest > 0 ? low | 0x80 : low);
  } while (rest > 0);
  return Buffer.from(bytes);
};

/** A protobuf field: a number as a varint, bytes or a string length-delimited. */
export const field = (number: number, value: number | string | Buffer): Buffer =>
  typeof value === 'number'
    ? Buffer.concat([varint(number * 8), varint(value)])
    : Buffer.concat([varint(number * 8 + 2), varint(Buffer.byteLength(value)), Buffer.from(value)]);

/** Snappy's raw format with literals only (what a decoder must read first). */
function snappyLiterals(data: Buffer): Buffer {
  const parts = [varint(data.length)];
  for (let at = 0; at < data.length; at += 65536) {
    const literal = data.subarray(at, at + 65536);
    const size = Buffer.alloc(2);
    size.writeUInt16LE(literal.length - 1);
    parts.push(Buffer.from([61 << 2]), size, literal);
  }
  return Buffer.concat(parts);
}

/** An `.iwa`: its objects in chunks of `chunkBytes` of the stream (each compressed on its own). */
export function iwa(objects: Array<{ id: number; type: number; message: Buffer }>, chunkBytes = 1 << 16): Buffer {
  const stream = Buffer.concat(
    objects.flatMap(({ id, type, message }) => {
      const info = Buffer.concat([field(1, id), field(2, Buffer.concat([field(1, type), field(3, message.length)]))]);
      return [varint(info.length), info, message];
    }),
  );
  const chunks: Buffer[] = [];
  for (let at = 0; at < stream.length; at += chunkBytes) {
    const compressed = snappyLiterals(stream.subarray(at, at + chunkBytes));
    const head = Buffer.alloc(4);
    head.writeUIntLE(compressed.length, 1, 3);
    chunks.push(head, compressed);
  }
  return Buffer.concat(chunks);
}

/** A text storage (type 2001): its text in runs (field 3). */
export const textStorage = (...runs: string[]) => Buffer.concat(runs.map((run) => field(3, run)));

/** A Pages document: its body's text storage and a text box; `bundled`: the archives in an Index.zip inside. */
export async function pagesDocument(spec: { body: string[]; textBox: string; bundled?: boolean }): Promise<Buffer> {
  const document = iwa(
    [
      // The text box first: the body is found by the document's reference (field 4), not by order.
      { id: 3, type: 2001, message: textStorage(spec.textBox) },
      { id: 1, type: 10000, message: field(4, field(1, 2)) },
      { id: 2, type: 2001, message: textStorage(...spec.body) },
    ],
    40,
  );
  const zip = new JSZip();
  if (spec.bundled) {
    // A package's Index.zip holds its archives at its top.
    const index = new JSZip();
    index.file('Document.iwa', document);
    zip.file('Index.zip', await index.generateAsync({ type: 'nodebuffer' }));
  } else zip.file('Index/Document.iwa', document);
  zip.file('Metadata/DocumentIdentifier', 'F2A1');
  zip.file('preview.jpg', Buffer.from([0xff, 0xd8, 0xff]));
  return zip.generateAsync({ type: 'nodebuffer', compression: 'DEFLATE' });
}

/** A Numbers spreadsheet: a sheet name's text storage and a table's strings (a data list, type 6005). */
export async function numbersDocument(strings: string[]): Promise<Buffer> {
  const list = Buffer.concat([
    field(1, 1),
    ...strings.map((text, i) => field(3, Buffer.concat([field(1, i + 1), field(2, 1), field(3, text)]))),
  ]);
  const zip = new JSZip();
  zip.file('Index/Document.iwa', iwa([{ id: 1, type: 2001, message: textStorage('Budget 2024') }]));
  zip.file('Index/Tables/DataList.iwa', iwa([{ id: 7, type: 6005, message: list }]));
  return zip.generateAsync({ type: 'nodebuffer' });
}
