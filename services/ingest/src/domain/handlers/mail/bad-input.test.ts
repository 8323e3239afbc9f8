import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CORPUS_SKIP, fixture, message, pdf, withAttachment, zip } from '../testing/build.js';
import { parseEmail, rejection, registry } from '../testing/parse.js';
import type { AttachmentItem } from '../handler.js';

const reasonFor = async (bytes: Buffer) => (await rejection(registry.parse({ type: 'message/rfc822', bytes }))).reason;

/** Deterministic pseudo-random bytes (a linear congruential generator), so failures reproduce. */
function noise(length: number, seed: number): Buffer {
  const out = Buffer.alloc(length);
  let x = seed;
  for (let i = 0; i < length; i++) {
    x = (x * 1103515245 + 12345) >>> 0;
    out[i] = x >>> 24;
  }
  return out;
}

describe('mail: truncated MIME', () => {
  const attachment = pdf([['attached']]).toString('base64');
  const full = message(
    [
      ['From', 'a@example.com'],
      ['Subject', 'Cut short'],
      ['Message-ID', '<cut@x>'],
      ['Content-Type', 'multipart/mixed; boundary="b1"'],
    ],
    [
      '--b1',
      'Content-Type: text/plain',
      '',
      'The readable part.',
      '--b1',
      'Content-Type: application/pdf; name="a.pdf"',
      'Content-Transfer-Encoding: base64',
      '',
      attachment,
      '--b1--',
      '',
    ].join('\r\n'),
  );

  it('keeps what was readable of a message whose boundary never closes, saying it was truncated', async () => {
    const cut = full.subarray(0, full.indexOf('--b1--') - 200);
    const item = await parseEmail(cut);
    assert.equal(item.title, 'Cut short');
    assert.equal(item.text.trim(), 'The readable part.');
    assert.equal(item.meta.truncated, true);
    assert.match(item.warnings[0] ?? '', /truncated/);
  });

  it('is not truncated when complete', async () => {
    const item = await parseEmail(full);
    assert.equal(item.meta.truncated, false);
    assert.equal(item.children?.length, 1);
  });

  it('keeps a real message with a missing final boundary', { skip: CORPUS_SKIP }, async () => {
    const item = await parseEmail(fixture('mail/flanker/missing-final-boundary.eml'));
    assert.equal(item.text.trim(), 'Some body');
    assert.equal(item.meta.truncated, true);
  });

  it('keeps a message cut inside its headers', async () => {
    const item = await parseEmail(full.subarray(0, full.indexOf('Message-ID')));
    assert.equal(item.title, 'Cut short');
    assert.equal(item.text, '');
  });
});

describe('mail: what is not a message', () => {
  it('rejects binary garbage declared as message/rfc822', async () => {
    for (let seed = 1; seed <= 20; seed++)
      assert.match(await reasonFor(noise(4096, seed)), /^not an RFC 822 message: /, `seed ${seed}`);
    assert.equal(
      await reasonFor(pdf([['a PDF']])),
      'not an RFC 822 message: no headers (the first line is not a header field)',
    );
    assert.equal(
      await reasonFor(zip([{ name: 'a.txt', data: 'x' }])),
      'not an RFC 822 message: no headers (the first line is not a header field)',
    );
    assert.equal(
      await reasonFor(Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex')),
      'not an RFC 822 message: no headers (the first line is not a header field)',
    );
  });

  it('rejects empty input and text without headers', { skip: CORPUS_SKIP }, async () => {
    assert.equal(await reasonFor(Buffer.alloc(0)), 'not an RFC 822 message: it is empty');
    assert.equal(await reasonFor(Buffer.from('\r\n \r\n')), 'not an RFC 822 message: it is empty');
    assert.equal(
      await reasonFor(fixture('mail/mime4j-testmsgs/malformedHeader-noheader.eml')),
      'not an RFC 822 message: no headers (the first line is not a header field)',
    );
  });

  it('rejects header-like text with no message header field', async () => {
    assert.equal(
      await reasonFor(Buffer.from('Name: Ann\r\nAge: 41\r\n\r\nnotes')),
      'not an RFC 822 message: no message header fields (only "name", "age")',
    );
  });

  it('rejects binary data in the header section', async () => {
    assert.equal(
      await reasonFor(Buffer.concat([Buffer.from('From: a@example.com\r\nSubject: x'), noise(64, 7).fill(0, 10, 12)])),
      'not an RFC 822 message: binary data in the header section',
    );
  });

  it('accepts what real archives put before the headers: a BOM, blank lines, an mbox From_ line', async () => {
    const body = message([
      ['From', 'a@example.com'],
      ['Subject', 'Kept'],
    ]);
    for (const prefix of ['\uFEFF', '   \r\n', 'From a@example.com Mon Jun  3 10:00:00 2024\r\n']) {
      assert.equal(
        (await parseEmail(Buffer.concat([Buffer.from(prefix), body]))).title,
        'Kept',
        JSON.stringify(prefix),
      );
    }
  });
});

describe('mail: damaged parts', () => {
  it('keeps a part with invalid base64, with a warning naming it', async () => {
    const item = await parseEmail(
      withAttachment('Body.', {
        headers: ['Content-Type: application/octet-stream; name="data.bin"', 'Content-Transfer-Encoding: base64'],
        body: 'AAEC!!!AwQF####',
      }),
    );
    assert.equal(item.text.trim(), 'Body.');
    assert.equal(item.children?.length, 1);
    assert.match(
      item.warnings.join('\n'),
      /application\/octet-stream part \("data\.bin"\) has invalid base64 \(unexpected character "!" at position 4\)/,
    );
  });

  it('survives absurdly deep multipart nesting', async () => {
    const depth = 300;
    let body = 'Deep inside.\r\n';
    for (let i = depth; i > 0; i--)
      body = `--n${i}\r\nContent-Type: ${i === depth ? 'text/plain' : `multipart/mixed; boundary="n${i + 1}"`}\r\n\r\n${body}\r\n--n${i}--\r\n`;
    const item = await parseEmail(
      message(
        [
          ['From', 'a@example.com'],
          ['Content-Type', 'multipart/mixed; boundary="n1"'],
        ],
        body,
      ),
    );
    assert.equal(item.kind, 'email');
  });

  it('keeps an attachment whose document is corrupt, with the reason', async () => {
    const item = await parseEmail(
      withAttachment('See attached.', {
        headers: [
          'Content-Type: application/vnd.openxmlformats-officedocument.wordprocessingml.document; name="cv.docx"',
          'Content-Transfer-Encoding: base64',
        ],
        body: Buffer.from('not a zip at all').toString('base64'),
      }),
    );
    const attachment = item.children?.[0] as AttachmentItem;
    assert.equal(attachment.meta.filename, 'cv.docx');
    assert.match(attachment.meta.unreadable ?? '', /^not a readable DOCX file/);
  });
});
