import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createHash } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { sharedFile, sharedSkip } from '@memex/testing';
import { LeadingDigest, listMboxTree, mboxSize, readMbox, separatorDate } from './mbox.js';

function tempFile(content: Buffer | string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mbox-test-'));
  const file = path.join(dir, 'box.mbox');
  fs.writeFileSync(file, content);
  return file;
}

async function all(file: string, from = 0) {
  const out = [];
  for await (const message of readMbox(file, from)) out.push(message);
  return out;
}

test('splits on From lines, unescapes >From (mboxrd), drops the separating blank line, keeps offsets', async () => {
  const mbox =
    'From ann@example.com Sat Jan  3 01:05:34 1996\n' +
    'Subject: one\n\nHello\n>From the start\n>>From deeper\nFrom me, not a separator (no blank line before)\n\n' +
    'From bob@example.com Mon Feb 14 09:00:00 2000\n' +
    'Subject: two\n\nBye\n';
  const file = tempFile(mbox);
  const messages = await all(file);
  assert.equal(messages.length, 2);
  assert.equal(
    messages[0]!.bytes.toString(),
    'Subject: one\n\nHello\nFrom the start\n>From deeper\nFrom me, not a separator (no blank line before)\n',
  );
  assert.equal(messages[0]!.received, '1996-01-03T01:05:34.000Z');
  assert.equal(messages[1]!.bytes.toString(), 'Subject: two\n\nBye\n');
  assert.equal(messages[1]!.offset, mbox.indexOf('From bob'));
  assert.equal(messages[0]!.end, messages[1]!.offset);
  assert.equal(messages[1]!.end, Buffer.byteLength(mbox));
  // Resuming at a message's offset reads from there.
  const resumed = await all(file, messages[1]!.offset);
  assert.deepEqual(
    resumed.map((m) => m.bytes.toString()),
    ['Subject: two\n\nBye\n'],
  );
});

test('a separator with a date splits even without the blank line; CRLF files and 8-bit bytes pass through', async () => {
  const latin1 = Buffer.from('Subject: caf\xe9\r\n\r\nd\xe9j\xe0 vu\r\n', 'latin1');
  const file = tempFile(
    Buffer.concat([
      Buffer.from('From a@b Thu Mar  1 10:00:00 +0100 2001\r\n'),
      latin1,
      Buffer.from('From c@d Fri Mar  2 11:00 2001\r\nSubject: x\r\n\r\ny\r\n'),
    ]),
  );
  const messages = await all(file);
  assert.equal(messages.length, 2);
  assert.deepEqual(messages[0]!.bytes, latin1);
  assert.equal(messages[1]!.received, '2001-03-02T11:00:00.000Z');
});

test('messages across chunk boundaries come out whole, in order', async () => {
  const bodies: string[] = [];
  let mbox = '';
  for (let i = 0; i < 3000; i++) {
    const body = `Subject: m${i}\n\n${'x'.repeat((i * 7919) % 3000)}\nFrom inside ${i} (escaped below)\n`;
    bodies.push(body);
    mbox += `From sender@example.com Tue Dec  1 10:00:00 2009\n${body.replace(/^From /gm, '>From ')}\n`;
  }
  const messages = await all(tempFile(mbox));
  assert.ok(Buffer.byteLength(mbox) > 3 << 20, 'spans several 1 MB chunks');
  assert.deepEqual(
    messages.map((m) => m.bytes.toString()),
    bodies,
  );
});

test('a file that is not an mbox is refused naming why; so is a resume offset that is not a From line', async () => {
  await assert.rejects(
    all(tempFile('Subject: hi\n\nno separator\n')),
    /is not an mbox.*does not start with a "From " line/,
  );
  await assert.rejects(
    all(tempFile('From a@b Sat Jan  3 01:05:34 1996\nSubject: hi\n\nbody\n'), 5),
    /no "From " line at byte 5/,
  );
});

test('separator dates: asctime with or without seconds and zone; anything else is none', () => {
  assert.equal(separatorDate('From MAILER-DAEMON Wed Oct  4 07:12:01 2006'), '2006-10-04T07:12:01.000Z');
  assert.equal(separatorDate('From x@y Wed Oct 4 07:12 PDT 2006\r\n'), '2006-10-04T07:12:00.000Z');
  assert.equal(separatorDate('From x@y yesterday'), null);
  assert.equal(separatorDate('From x@y Wed Foo  4 07:12:01 2006'), null);
});

test('a byte-order mark before the first From line is not a reason to refuse the file (MimeKit: unmunged.mbox)', async () => {
  const messages = await all(
    tempFile(
      '\ufeffFrom a@b Sat Jan  3 01:05:34 1996\nSubject: one\n\nbody\n\nFrom c@d Sat Jan  3 01:05:35 1996\nSubject: two\n\nx\n',
    ),
  );
  assert.deepEqual(
    messages.map((m) => m.bytes.toString()),
    ['Subject: one\n\nbody\n', 'Subject: two\n\nx\n'],
  );
  assert.equal(messages[0]!.offset, 0);
});

test('separators without a blank line or a date (Netscape "From - ", mboxo) split when a header follows; body From lines stay', async () => {
  // Netscape Navigator 2–4 wrote `From - <date or nothing>` right after the previous body.
  const mbox =
    'From - \nMessage-ID: <1@x>\nSubject: one\n\nline\nFrom here on, body text\nmore\n' +
    'From - \nMessage-ID: <2@x>\nSubject: two\n\nbody\n' +
    'From someone\nX-Mozilla-Status: 0001\nSubject: three\n\nlast\nFrom the end';
  const messages = await all(tempFile(mbox));
  assert.deepEqual(
    messages.map((m) => m.bytes.toString()),
    [
      'Message-ID: <1@x>\nSubject: one\n\nline\nFrom here on, body text\nmore\n',
      'Message-ID: <2@x>\nSubject: two\n\nbody\n',
      'X-Mozilla-Status: 0001\nSubject: three\n\nlast\nFrom the end',
    ],
  );
});

/** A month of a list as Mailman's pipermail archives it: `at` for `@`, even on the separator line. */
const PIPERMAIL =
  'From guido at python.org  Mon Jan  5 10:00:00 2009\n' +
  'From: guido at python.org (Guido van Rossum)\nDate: Mon, 05 Jan 2009 10:00:00 +0100\nSubject: [Python-Dev] tabs\n' +
  'Message-ID: <1@python.org>\n\nTabs are evil.\n\n' +
  'From barry at python.org  Tue Jan  6 11:30:00 2009\n' +
  'From: barry at python.org (Barry Warsaw)\nDate: Tue, 06 Jan 2009 11:30:00 +0100\nSubject: Re: [Python-Dev] tabs\n' +
  'Message-ID: <2@python.org>\n\nAgreed.\n';

test('pipermail separators: the sender with "at" for "@", the date read', async () => {
  const messages = await all(tempFile(PIPERMAIL));
  assert.deepEqual(
    messages.map((m) => [m.sender, m.received]),
    [
      ['guido@python.org', '2009-01-05T10:00:00.000Z'],
      ['barry@python.org', '2009-01-06T11:30:00.000Z'],
    ],
  );
});

test('a gzipped mbox (.mbox.gz, .txt.gz) is read as it decompresses; offsets count its decompressed bytes', async () => {
  const plain = await all(tempFile(PIPERMAIL));
  // Two gzip members one after the other (what `cat a.gz b.gz` makes) are one stream.
  const cut = PIPERMAIL.indexOf('From barry');
  const file = tempFile(Buffer.concat([gzipSync(PIPERMAIL.slice(0, cut)), gzipSync(PIPERMAIL.slice(cut))]));
  const messages = await all(file);
  assert.deepEqual(
    messages.map((m) => [m.offset, m.end, m.bytes.toString()]),
    plain.map((m) => [m.offset, m.end, m.bytes.toString()]),
  );
  assert.equal(await mboxSize(file), Buffer.byteLength(PIPERMAIL));
  // An import resumes inside it at a message's offset.
  const resumed = await all(file, messages[1]!.offset);
  assert.deepEqual(
    resumed.map((m) => m.sender),
    ['barry@python.org'],
  );
});

test('a gzipped mbox cut short gives its whole messages, then fails naming the file and why', async () => {
  const whole = gzipSync(PIPERMAIL.repeat(200));
  const file = tempFile(whole.subarray(0, Math.floor(whole.length * 0.6)));
  const seen: string[] = [];
  await assert.rejects(
    async () => {
      for await (const message of readMbox(file)) seen.push(message.sender!);
    },
    (error: Error) =>
      error.message.includes(file) && /gzip data is cut short or corrupt after \d+ bytes/.test(error.message),
  );
  assert.ok(seen.length > 0, 'the messages before the cut are read');
});

test('a folder of list archives: each gzipped month an mbox labelled by its name; a corrupt or cut-short one skipped saying so', async () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'mbox-tree-'));
  fs.writeFileSync(path.join(root, '2009-January.txt.gz'), gzipSync(PIPERMAIL));
  fs.writeFileSync(path.join(root, '2009-February.txt'), PIPERMAIL);
  fs.writeFileSync(path.join(root, 'broken.mbox.gz'), Buffer.from([0x1f, 0x8b, 0x08, 0x00, 0xde, 0xad, 0xbe, 0xef]));
  const whole = gzipSync(PIPERMAIL.repeat(100));
  fs.writeFileSync(path.join(root, '2009-March.txt.gz'), whole.subarray(0, whole.length >> 1));
  const { mboxes, skipped } = await listMboxTree(root);
  assert.deepEqual(
    mboxes.map((m) => [m.key, m.folder, m.size]),
    [
      ['2009-February.txt', '2009-February', Buffer.byteLength(PIPERMAIL)],
      ['2009-January.txt.gz', '2009-January', Buffer.byteLength(PIPERMAIL)],
    ],
  );
  assert.deepEqual(
    skipped.map((s) => [s.key, s.reason.replace(/\d+ bytes/, 'N bytes')]),
    [
      [
        '2009-March.txt.gz',
        'its gzip data is cut short or corrupt after N bytes (unexpected end of file): download it again',
      ],
      ['broken.mbox.gz', 'gzipped, but its gzip data is corrupt'],
    ],
  );
});

// Counts as Python's mailbox.mbox reads these files (checked by hand: len(mailbox.mbox(path))),
// except unmunged.mbox: MimeKit's own test of a BOM and unescaped `From Russia with love` body
// lines, which Python splits into 3 wrong messages; it holds 2.
const CORPUS_MBOXES: Array<[string, number]> = [
  ['corpus/mail/mimekit/netscape-1996-content-length.mbox', 29],
  ['corpus/mail/mimekit/issue1189.mbox', 4],
  ['corpus/mail/mimekit/unmunged.mbox', 2],
  ['corpus/mail/gmime-mbox/substring.mbox', 3],
  ['corpus/mail/mail-box-perl/mbox.src.mbox', 45],
];

for (const [file, count] of CORPUS_MBOXES) {
  test(`${file.split('/').pop()}: ${count} messages, none merged`, { skip: sharedSkip(file) }, async () => {
    const messages = await all(sharedFile(file));
    assert.equal(messages.length, count);
    // No message swallowed the next one: every message starts with its header.
    for (const message of messages) assert.match(message.bytes.toString('latin1'), /^[\x21-\x39\x3b-\x7e]+[ \t]*:/);
  });
}

test("LeadingDigest: the sha256 of a file's first bytes, taken on from there or again from the start", async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'memex-leading-'));
  const file = path.join(dir, 'Inbox');
  // Past one read chunk, so a digest ends inside a chunk and the next goes on from there.
  const bytes = Buffer.alloc(3_000_000, 'From x\nabc\n');
  fs.writeFileSync(file, bytes);
  const sha = (n: number) => createHash('sha256').update(bytes.subarray(0, n)).digest('hex');
  const leading = new LeadingDigest(file);
  assert.equal(await leading.through(0), sha(0));
  assert.equal(await leading.through(1_500_001), sha(1_500_001));
  assert.equal(await leading.through(2_999_999), sha(2_999_999));
  assert.equal(await leading.through(10), sha(10), 'an offset before the last one starts over');
  assert.equal(await leading.through(3_000_001), null, 'beyond the end: no digest');
  fs.rmSync(dir, { recursive: true });
});
