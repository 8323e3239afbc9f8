import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { AttachmentItem } from '../handler.js';
import { CORPUS_SKIP, fixture, message } from '../testing/build.js';
import { parseEmail } from '../testing/parse.js';
import { extractUuencoded } from './uuencode.js';

/** `bytes` uuencoded as uuencode(1) writes them: 45 bytes a line, a backquote for zero. */
function uuencode(name: string, bytes: Buffer, { spaces = false } = {}): string {
  const char = (sextet: number) => (sextet === 0 && !spaces ? '`' : String.fromCharCode(32 + sextet));
  const lines = [`begin 644 ${name}`];
  for (let i = 0; i < bytes.length; i += 45) {
    const chunk = bytes.subarray(i, i + 45);
    let line = char(chunk.length);
    for (let j = 0; j < chunk.length; j += 3) {
      const [a = 0, b = 0, c = 0] = [chunk[j], chunk[j + 1], chunk[j + 2]];
      line += [a >> 2, ((a & 3) << 4) | (b >> 4), ((b & 15) << 2) | (c >> 6), c & 63].map(char).join('');
    }
    lines.push(line);
  }
  return [...lines, '`', 'end'].join('\n');
}

describe('mail: uuencoded files in the text', () => {
  it('become attachments, and their lines leave the text', async () => {
    const pdfLike = Buffer.concat([Buffer.from('%PDF-1.4 not really\n'), randomBytes(3000)]);
    const body = `Here is the report.\n\n${uuencode('report.bin', pdfLike)}\n\nRegards,\nAnn\n`;
    const item = await parseEmail(
      message(
        [
          ['From', 'ann@example.org'],
          ['Subject', 'report'],
        ],
        body,
      ),
    );
    assert.equal(item.text.trim().replace(/\n+/g, ' '), 'Here is the report. Regards, Ann');
    const [file] = item.children as AttachmentItem[];
    assert.equal(file?.title, 'report.bin');
    assert.ok(file.contentBytes?.equals(pdfLike), 'the decoded bytes are the file');
    assert.equal(file.meta.size, pdfLike.length);
  });

  it('lines whose trailing spaces a transport stripped still decode', () => {
    const bytes = Buffer.from([1, 2, 3, 0, 0, 0, 0, 0, 0]);
    const encoded = uuencode('zeros', bytes, { spaces: true })
      .split('\n')
      .map((line) => line.trimEnd())
      .join('\n');
    const { files } = extractUuencoded(encoded);
    assert.deepEqual(files[0]?.bytes, bytes);
    assert.equal(files[0]?.problem, null);
  });

  it('a sentence that starts like a block stays text; a block without its end keeps what decoded, saying so', () => {
    const prose = 'begin 644 is what uuencode writes first.\nThen the lines follow.';
    assert.deepEqual(extractUuencoded(prose), { text: prose, files: [] });
    const cut = uuencode('cut.bin', Buffer.alloc(100, 7)).split('\n').slice(0, 2).join('\n');
    const { text, files } = extractUuencoded(`Before.\n${cut}`);
    assert.equal(text, 'Before.');
    assert.equal(files[0]?.problem, 'it has no end line');
    assert.deepEqual(files[0]?.bytes, Buffer.alloc(45, 7));
  });

  it('the GIFs of a 1990s message (MIME-tools test messages)', { skip: CORPUS_SKIP }, async () => {
    const item = await parseEmail(fixture('mail/mime-tools-testmsgs/uu-zeegee.eml'));
    assert.doesNotMatch(item.text, /^M1TE/m);
    const files = item.children as AttachmentItem[];
    assert.deepEqual(
      files.map((f) => [f.title, f.meta.contentType, f.contentBytes?.subarray(0, 4).toString('latin1')]),
      [
        ['up.gif', 'image/gif', 'GIF8'],
        ['zeegee.gif', 'image/gif', 'GIF8'],
      ],
    );
  });
});
