import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KnownFile } from './files.js';
import { marksText, messageIdentity, messagePath, splitMailboxRows } from './mailboxes.js';

const message = (header: string, body = 'Hello.\n') =>
  Buffer.from(`From: Ann <ann@example.com>\nSubject: Lunch\n${header}Message-ID: <1@example.com>\n\n${body}`);

test('a message keeps its id whatever its client wrote about it: read, flagged, tagged, counted', () => {
  const plain = messageIdentity(message(''));
  for (const state of [
    'X-Mozilla-Status: 0001\nX-Mozilla-Status2: 00000000\n',
    'X-Mozilla-Keys: $label1                                                        \n',
    'Status: RO\nX-Status: F\nX-Keywords: work\nX-UID: 12\n',
    'Content-Length: 7\nLines: 1\n',
  ]) {
    assert.equal(messageIdentity(message(state)).id, plain.id, state);
  }
  assert.match(plain.id, /^[0-9a-f]{32}$/);
  // What it says is what it is: another word in the body, another header, another id.
  assert.notEqual(messageIdentity(message('', 'Hello!\n')).id, plain.id);
  assert.notEqual(messageIdentity(message('Cc: bob@example.com\n')).id, plain.id);
  // A field folded over lines is one field; its continuation counts.
  assert.notEqual(
    messageIdentity(message('X-Note: one\n two\n')).id,
    messageIdentity(message('X-Note: one\n three\n')).id,
  );
  // The body starts at the first empty line, in CRLF files too.
  const crlf = (status: string) =>
    Buffer.from(`From: a@example.com\r\n${status}Subject: x\r\n\r\nX-Mozilla-Status: 0001\r\n`);
  assert.equal(messageIdentity(crlf('')).id, messageIdentity(crlf('X-Mozilla-Status: 0001\r\n')).id);
  assert.notEqual(
    messageIdentity(Buffer.from('From: a@example.com\n\nX-Mozilla-Status: 0001\n')).id,
    messageIdentity(Buffer.from('From: a@example.com\n\nX-Mozilla-Status: 0000\n')).id,
  );
});

test("a message's marks as its client wrote them: Thunderbird's flags, else mutt's Status and X-Status", () => {
  assert.deepEqual(messageIdentity(message('X-Mozilla-Status: 0005\n')).marks, {
    read: true,
    starred: true,
    expunged: false,
  });
  assert.deepEqual(messageIdentity(message('Status: RO\nX-Status: F\n')).marks, { read: true, starred: true });
  assert.deepEqual(messageIdentity(message('Status: O\n')).marks, { read: false });
  assert.deepEqual(messageIdentity(message('')).marks, {});
  assert.deepEqual([{ read: true, starred: false }, { read: false }, {}].map(marksText), ['r1s0', 'r0', '']);
});

test('a message Thunderbird deleted but has not compacted away is expunged', () => {
  assert.equal(messageIdentity(message('X-Mozilla-Status: 0009\n')).marks.expunged, true);
  assert.equal(messageIdentity(message('X-Mozilla-Status: 0008\n')).marks.expunged, true);
  assert.equal(messageIdentity(message('X-Mozilla-Status: 0001\n')).marks.expunged, false);
  assert.equal(messageIdentity(message('X-Mozilla-Status: 8000\n')).marks.expunged, false);
  assert.equal(messageIdentity(message('Status: D\n')).marks.expunged === true, false);
  assert.equal(messageIdentity(message('')).marks.expunged === true, false);
});

test("a source's rows: files, and each mbox's messages under it", () => {
  const row = (path: string, mailbox = false): KnownFile => ({
    path,
    item_id: mailbox ? null : '01J00000000000000000000000',
    external_id: null,
    sha256: null,
    in_place: false,
    size: 1,
    modified_at: new Date(0),
    rejected: null,
    mailbox,
    mbox_tail: null,
    leaving_since: null,
  });
  const id = 'a'.repeat(32);
  const rows = [
    row('Inbox', true),
    row(messagePath('Inbox', id)),
    row(messagePath('Work.sbd/Projects', id)),
    row('Work.sbd/Projects', true),
    row('notes#1.md'),
    row(messagePath('gone.mbox', id)),
    row('#readme'),
  ];
  const { files, messages } = splitMailboxRows(rows);
  assert.deepEqual([...files.keys()].sort(), ['#readme', 'Inbox', 'Work.sbd/Projects', 'notes#1.md'].sort());
  assert.deepEqual([...messages.keys()].sort(), ['Inbox', 'Work.sbd/Projects', 'gone.mbox']);
  assert.deepEqual([...messages.get('Inbox')!.keys()], [`Inbox#${id}`]);
});
