import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { encode, encodedWord } from '../testing/encode.js';
import { CORPUS_SKIP, fixture, message, pdf } from '../testing/build.js';
import { parsedOrCleanlyRejected } from '../testing/parse.js';
import { mutations } from '../testing/mutate.js';

/** Messages to mutate: generated ones covering the MIME shapes, and real ones from the shared corpus. */
const SEEDS: Buffer[] = [
  message(
    [
      ['From', `${encodedWord('Jürgen', 'iso-8859-1', 'Q')} <j@example.com>`],
      ['To', 'a@x.org, b@y.org'],
      ['Subject', encodedWord('件名', 'iso-2022-jp', 'B')],
      ['Message-ID', '<m1@x>'],
      ['References', '<r0@x> <r1@x>'],
      ['Content-Type', 'multipart/mixed; boundary="o"'],
    ],
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
  message(
    [
      ['From', 'x@y.z'],
      ['Subject', encode('Grüße', 'windows-1252').toString('latin1')],
      ['Content-Type', 'text/plain; charset=shift_jis'],
      ['Content-Transfer-Encoding', '8bit'],
    ],
    encode('日本語の本文', 'shift_jis'),
  ),
  // Real ones where the shared corpus is here (the generated ones still run where it is not).
  ...(CORPUS_SKIP
    ? []
    : [
        fixture('mail/flanker/attached-pdf.eml'),
        fixture('mail/mikel-mail/attachment_emails/attachment_message_rfc822.eml'),
        fixture('mail/mikel-mail/multi_charset/japanese_attachment.eml'),
        fixture('mail/spamassassin-testdata/nice/cjk/big5-base64.1.eml'),
        fixture('mail/flanker/missing-final-boundary.eml'),
        fixture('mail/mime4j-testmsgs/boundary-name-clash.eml'),
      ]),
];

/** Byte strings that steer mutations toward the mail parser's decisions. */
const TOKENS = [
  '\r\n\r\n',
  '\n',
  '--',
  '--o--',
  '--a',
  '=?utf-8?B?',
  '=?',
  '?=',
  ': ',
  'Content-Type: multipart/mixed; boundary=o\r\n',
  'Content-Transfer-Encoding: base64\r\n',
  '\0',
  '\x1b$B',
  '\x1b(B',
  '<',
  '>',
  ';',
  '"',
  '\xff\xfe',
  'charset=x-unknown',
];

describe('mail: fuzzing with mutated messages', () => {
  it('parses or clearly rejects every mutated message, never crashing', async () => {
    let parsed = 0;
    let rejected = 0;
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...SEEDS), mutations(TOKENS), async (seed, mutate) => {
        const result = await parsedOrCleanlyRejected({
          type: 'message/rfc822',
          bytes: mutate(seed),
          attributes: { folder: 'Fuzz' },
        });
        if (result === 'parsed') parsed++;
        else rejected++;
      }),
      { numRuns: 2000 },
    );
    // Most mutations leave a message; a property that only ever rejected would test nothing.
    assert.ok(parsed > rejected, `parsed ${parsed}, rejected ${rejected}`);
  });
});
