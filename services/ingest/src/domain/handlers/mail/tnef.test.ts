import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { AttachmentItem } from '../handler.js';
import { message } from '../testing/build.js';
import { parseEmail } from '../testing/parse.js';
import { readTnef } from './tnef.js';

/** One TNEF attribute (MS-OXTNEF 2.1.3.1): level, id with its type, length, data, checksum. */
function attribute(level: number, id: number, data: Buffer): Buffer {
  const head = Buffer.alloc(9);
  head.writeUInt8(level, 0);
  head.writeUInt32LE(id, 1);
  head.writeUInt32LE(data.length, 5);
  const checksum = Buffer.alloc(2);
  checksum.writeUInt16LE(data.reduce((sum, byte) => (sum + byte) & 0xffff, 0));
  return Buffer.concat([head, data, checksum]);
}

const u32 = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(n);
  return b;
};
const padded = (b: Buffer) => Buffer.concat([b, Buffer.alloc(((b.length + 3) & ~3) - b.length)]);
/** A MAPI property list: a count, then each property (a string as a count of one value, its length, the bytes padded). */
function mapiProperties(properties: Buffer[]): Buffer {
  return Buffer.concat([u32(properties.length), ...properties]);
}
const tag = (type: number, id: number) => Buffer.from([type & 0xff, type >> 8, id & 0xff, id >> 8]);
const string8 = (id: number, text: string) => {
  const bytes = Buffer.from(`${text}\0`, 'latin1');
  return Buffer.concat([tag(0x001e, id), u32(1), u32(bytes.length), padded(bytes)]);
};
const unicode = (id: number, text: string) => {
  const bytes = Buffer.from(`${text}\0`, 'utf16le');
  return Buffer.concat([tag(0x001f, id), u32(1), u32(bytes.length), padded(bytes)]);
};
const long = (id: number, value: number) => Buffer.concat([tag(0x0003, id), u32(value)]);
/** A named property (a GUID and a numeric name) holding a boolean: the reader must step over both. */
const namedBoolean = Buffer.concat([tag(0x000b, 0x8005), Buffer.alloc(16, 0xab), u32(0), u32(0x8514), u32(1)]);

interface TnefAttachment {
  short: string;
  long?: string;
  mime?: string;
  data?: Buffer;
  embedded?: boolean;
}

/** A winmail.dat as Outlook writes one: signature, key, message attributes, then each attachment's. */
function winmail(attachments: TnefAttachment[]): Buffer {
  const parts: Buffer[] = [u32(0x223e9f78), Buffer.from([0x01, 0x00])];
  parts.push(attribute(1, 0x00089006, u32(0x00010000))); // attTnefVersion
  parts.push(attribute(1, 0x00078008, Buffer.from('IPM.Microsoft Mail.Note\0'))); // attMessageClass
  for (const a of attachments) {
    parts.push(attribute(2, 0x00069002, Buffer.alloc(14))); // attAttachRendData starts an attachment
    parts.push(attribute(2, 0x00018010, Buffer.from(`${a.short}\0`, 'latin1')));
    if (a.data) parts.push(attribute(2, 0x0006800f, a.data));
    const properties: Buffer[] = [long(0x3705, a.embedded ? 5 : 1), namedBoolean];
    if (a.long) properties.push(unicode(0x3707, a.long));
    if (a.mime) properties.push(string8(0x370e, a.mime));
    if (a.embedded)
      properties.push(Buffer.concat([tag(0x000d, 0x3701), u32(1), u32(20), padded(Buffer.alloc(20, 0x11))]));
    parts.push(attribute(2, 0x00069005, mapiProperties(properties)));
  }
  return Buffer.concat(parts);
}

function withWinmail(tnef: Buffer): Buffer {
  return message(
    [
      ['From', 'Ann Lee <ann@corp.example>'],
      ['To', 'bob@example.org'],
      ['Subject', 'Q3 figures'],
      ['Message-ID', '<q3.figures@corp.example>'],
      ['Content-Type', 'multipart/mixed; boundary="b"'],
    ],
    [
      '--b',
      'Content-Type: text/plain; charset=us-ascii',
      '',
      'Figures attached.',
      '--b',
      'Content-Type: application/ms-tnef; name="winmail.dat"',
      'Content-Transfer-Encoding: base64',
      'Content-Disposition: attachment; filename="winmail.dat"',
      '',
      tnef.toString('base64').replace(/.{76}/g, '$&\r\n'),
      '--b--',
      '',
    ].join('\r\n'),
  );
}

describe("mail: Outlook's winmail.dat (TNEF)", () => {
  it('the files inside become the attachments, with their long names and types', async () => {
    const notes = Buffer.from('Revenue rose in the third quarter; costs held.\n');
    const sheet = Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 1, 2, 3, 4]);
    const item = await parseEmail(
      withWinmail(
        winmail([
          { short: 'MEETIN~1.TXT', long: 'Meeting notes Q3.txt', mime: 'text/plain', data: notes },
          { short: 'FIGURES.XLS', data: sheet },
        ]),
      ),
    );
    assert.match(item.text, /Figures attached/);
    const files = item.children as AttachmentItem[];
    assert.deepEqual(
      files.map((f) => [f.title, f.meta.contentType, f.meta.size]),
      [
        ['Meeting notes Q3.txt', 'text/plain', notes.length],
        ['FIGURES.XLS', 'application/vnd.ms-excel', sheet.length],
      ],
    );
    assert.match(files[0]!.text, /Revenue rose in the third quarter/, 'an attachment inside is read like any other');
    assert.ok(files[1]!.contentBytes?.equals(sheet));
  });

  it('an embedded Outlook item is named in a warning; a stream cut short stays the winmail.dat it was', async () => {
    const embedded = await parseEmail(withWinmail(winmail([{ short: 'Re: lunch', embedded: true }])));
    assert.deepEqual(embedded.children ?? [], []);
    assert.ok(embedded.warnings.includes('Re: lunch in winmail.dat is an Outlook item, not a file: not read'));

    const whole = winmail([{ short: 'A.TXT', data: Buffer.from('a text') }]);
    const cut = await parseEmail(withWinmail(whole.subarray(0, whole.length - 30)));
    const [kept] = cut.children as AttachmentItem[];
    assert.equal(kept?.title, 'winmail.dat');
    assert.match(
      cut.warnings.join('\n'),
      /winmail\.dat cannot be read \(an attribute of \d+ bytes at byte \d+ runs past the end\)/,
    );
  });

  it('reads what it can of a property list it cannot size, and never throws on one', () => {
    const odd = Buffer.concat([
      u32(0x223e9f78),
      Buffer.from([0, 0]),
      attribute(2, 0x00069002, Buffer.alloc(14)),
      attribute(2, 0x00018010, Buffer.from('SHORT.TXT\0')),
      attribute(2, 0x0006800f, Buffer.from('x')),
      // A property of a type no reader knows, then the long name: the name is not reached.
      attribute(2, 0x00069005, mapiProperties([tag(0x0999, 0x1234), unicode(0x3707, 'Long name.txt')])),
    ]);
    assert.deepEqual(readTnef(odd).files, [{ filename: 'SHORT.TXT', contentType: null, bytes: Buffer.from('x') }]);
  });
});
