import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { RejectedItem, type ParsedItem } from '../handler.js';
import { encode, encodedWord } from '../testing/encode.js';
import { fixture, message, pdf } from '../testing/build.js';
import { registry } from '../testing/parse.js';

/** Messages to mutate: generated ones covering the MIME shapes, and real ones from the fixtures. */
const SEEDS: Buffer[] = [
  message(
    [['From', `${encodedWord('Jürgen', 'iso-8859-1', 'Q')} <j@example.com>`], ['To', 'a@x.org, b@y.org'], ['Subject', encodedWord('件名', 'iso-2022-jp', 'B')], ['Message-ID', '<m1@x>'], ['References', '<r0@x> <r1@x>'], ['Content-Type', 'multipart/mixed; boundary="o"']],
    [
      '--o',
      'Content-Type: multipart/alternative; boundary="a"',
      '',
      '--a',
      'Content-Type: text/plain; charset=koi8-r',
      'Content-Transfer-Encoding: quoted-printable',
      '',
      '=F0=D2=C9=D7=C5=D4 soft=\r\nbreak',
      '--a',
      'Content-Type: text/html; charset=utf-8',
      'Content-Transfer-Encoding: base64',
      '',
      Buffer.from('<p>Hello <b>there</b></p>').toString('base64'),
      '--a--',
      '--o',
      'Content-Type: application/pdf; name="x.pdf"',
      'Content-Transfer-Encoding: base64',
      '',
      pdf([['fuzzed']]).toString('base64'),
      '--o',
      'Content-Type: message/rfc822',
      '',
      'From: inner@x.org\r\nSubject: inner\r\n\r\ninner body',
      '--o--',
      '',
    ].join('\r\n'),
  ),
  message([['From', 'x@y.z'], ['Subject', encode('Grüße', 'windows-1252').toString('latin1')], ['Content-Type', 'text/plain; charset=shift_jis'], ['Content-Transfer-Encoding', '8bit']], encode('日本語の本文', 'shift_jis')),
  fixture('mail/flanker/attached-pdf.eml'),
  fixture('mail/mikel-mail/attachment_emails/attachment_message_rfc822.eml'),
  fixture('mail/mikel-mail/multi_charset/japanese_attachment.eml'),
  fixture('mail/spamassassin-testdata/nice/cjk/big5-base64.1.eml'),
  fixture('mail/flanker/missing-final-boundary.eml'),
  fixture('mail/mime4j-testmsgs/boundary-name-clash.eml'),
];

/** Byte strings that steer mutations toward the parser's decisions. */
const TOKENS = ['\r\n\r\n', '\n', '--', '--o--', '--a', '=?utf-8?B?', '=?', '?=', ': ', 'Content-Type: multipart/mixed; boundary=o\r\n', 'Content-Transfer-Encoding: base64\r\n', '\0', '\x1b$B', '\x1b(B', '<', '>', ';', '"', '\xff\xfe', 'charset=x-unknown'].map((t) =>
  Buffer.from(t, 'latin1'),
);

type Mutation = (b: Buffer) => Buffer;
const at = (b: Buffer, n: number) => (b.length === 0 ? 0 : n % (b.length + 1));

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })).map(([n, v]): Mutation => (b) => {
    const out = Buffer.from(b);
    if (out.length > 0) out[n % out.length] = v;
    return out;
  }),
  fc.nat().map((n): Mutation => (b) => b.subarray(0, at(b, n))),
  fc.tuple(fc.nat(), fc.uint8Array({ maxLength: 64 })).map(([n, bytes]): Mutation => (b) => Buffer.concat([b.subarray(0, at(b, n)), bytes, b.subarray(at(b, n))])),
  fc.tuple(fc.nat(), fc.integer({ min: 1, max: 512 })).map(([n, len]): Mutation => (b) => Buffer.concat([b.subarray(0, at(b, n)), b.subarray(at(b, n) + len)])),
  fc.tuple(fc.nat(), fc.nat(), fc.integer({ min: 1, max: 256 })).map(([from, to, len]): Mutation => (b) => {
    const slice = b.subarray(at(b, from), at(b, from) + len);
    return Buffer.concat([b.subarray(0, at(b, to)), slice, b.subarray(at(b, to))]);
  }),
  fc.tuple(fc.nat(), fc.constantFrom(...TOKENS)).map(([n, token]): Mutation => (b) => Buffer.concat([b.subarray(0, at(b, n)), token, b.subarray(at(b, n))])),
  fc.constant<Mutation>((b) => Buffer.from(b.toString('latin1').replace(/\r\n/g, '\n'), 'latin1')),
);

function checkParsed(item: ParsedItem, depth = 0): void {
  assert.ok(typeof item.identity === 'string' && item.identity.length > 0);
  assert.equal(typeof item.title, 'string');
  assert.equal(typeof item.text, 'string');
  assert.ok(item.occurredAt === null || !Number.isNaN(Date.parse(item.occurredAt)));
  assert.ok(Array.isArray(item.warnings));
  // meta travels in events: it must survive JSON.
  JSON.stringify(item.meta);
  for (const child of item.children ?? []) {
    assert.equal(child.kind, 'attachment');
    checkParsed(child, depth + 1);
  }
  if (depth === 0) assert.match(item.identity, /^(message-id:|mail-sha256:[0-9a-f]{64}$)/);
}

describe('mail: fuzzing with mutated messages', () => {
  it('parses or clearly rejects every mutated message, never crashing', async () => {
    let parsed = 0;
    let rejected = 0;
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...SEEDS), fc.array(mutation, { minLength: 1, maxLength: 6 }), async (seed, mutations) => {
        const bytes = mutations.reduce((b, mutate) => mutate(b), seed);
        try {
          checkParsed(await registry.parse({ type: 'message/rfc822', bytes, attributes: { folder: 'Fuzz' } }));
          parsed++;
        } catch (error) {
          if (!(error instanceof RejectedItem)) throw error;
          assert.equal(error.unexpected, false, `unforeseen failure: ${error.reason}`);
          assert.match(error.reason, /\S/);
          rejected++;
        }
      }),
      { numRuns: 2000 },
    );
    // Most mutations leave a message; a property that only ever rejected would test nothing.
    assert.ok(parsed > rejected, `parsed ${parsed}, rejected ${rejected}`);
  });
});
