import { createHash } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { MailList } from '@memex/contracts';
import { startStack, type TestStack } from '@memex/e2e';
import { damageZipMember, zipOf } from '@memex/exports/testing';
import { outlookMsg } from '@memex/ingest/testing';
import type { ImportKind } from './run.js';
import { assertAccounted, importInto, labelledMessages, lastSeq, write } from './testing.js';

/** A message as a mail client saves it (.eml): CRLF, a Date, a Message-ID. */
function eml(id: string, subject: string, extra = ''): string {
  return `From: Ann <ann@example.com>\r\nTo: bob@example.org\r\nSubject: ${subject}\r\nDate: Mon, 1 Jun 2009 10:00:00 +0000\r\nMessage-ID: <${id}@example.com>\r\n${extra}\r\n${subject} body.\r\n`;
}

describe('memex import: every file accounted for', () => {
  let stack: TestStack;
  before(async () => {
    stack = await startStack(['ingest']);
  });
  after(async () => stack.stop());

  const run = (kind: ImportKind, target: string, source: string) => importInto(stack, kind, target, source);
  /** The subjects of an account's messages with a label, once the mail views have all that was logged. */
  const labelledIn = async (account: string, label: string) =>
    (await labelledMessages(stack, account, label)).map((m) => m.subject);

  test('a folder: .eml and Outlook .msg files import (a Junk/ one as spam), unknown types are skipped with a reason, a rejected file is sent again next run', async () => {
    const root = path.join(stack.env.home, 'folder');
    // Before: every .eml was rejected (`unknown attribute "filename"`) and then recorded as done;
    // a .msg was skipped as unread.
    write(root, {
      'a.eml': eml('a', 'Plain'),
      'Junk/b.eml': eml('b', 'Cheap pills'),
      '.DS_Store': 'x',
      'notes.xyz': 'x',
      'broken.eml': 'no headers here at all\n',
      'doc.md': '# Doc\n\ntext\n',
      'fake.msg': 'not an OLE file',
    });
    const saved = (subject: string) =>
      outlookMsg({
        subject,
        body: 'Saved from Outlook.',
        senderName: 'Ann',
        senderEmail: 'ann@example.com',
        recipients: [{ name: 'Bob', email: 'bob@example.org', type: 'to' }],
        submitted: new Date('2009-06-01T10:00:00Z'),
        messageId: `<${subject.replace(/\W/g, '')}@example.com>`,
      });
    write(root, { 'Projects/c.msg': saved('From Outlook') });
    const first = await run('folder', root, 'f1');
    assert.equal(first.error, undefined);
    assertAccounted(first.summary, 8);
    assert.deepEqual(first.summary.run, { created: 4, updated: 0, duplicate: 0, rejected: 2, skipped: 2 });
    const rejected = first.summary.rejected.map((r) => [r.examples, r.reason]).sort();
    assert.deepEqual(
      rejected.map(([examples]) => examples),
      [['broken.eml'], ['fake.msg']],
    );
    assert.match(String(rejected[0]![1]), /not an RFC 822 message/);
    assert.match(String(rejected[1]![1]), /not an Outlook \.msg file/);
    const messages = await labelledMessages(stack, 'import:folder:f1', 'Projects');
    assert.deepEqual(
      messages.map((m) => [m.subject, m.from[0]?.address]),
      [['From Outlook', 'ann@example.com']],
    );

    // The rejected files are fixed; the next run sends them (and only them) again.
    write(root, { 'broken.eml': eml('fixed', 'Fixed now'), 'fake.msg': saved('Saved again') });
    const second = await run('folder', root, 'f1');
    assertAccounted(second.summary, 8);
    assert.deepEqual(second.summary.run, { created: 2, updated: 0, duplicate: 0, rejected: 0, skipped: 2 });
    assert.equal(second.summary.earlier, 4);
  });

  test('a Junk/ .eml is spam with its folder label', async () => {
    const root = path.join(stack.env.home, 'spamfolder');
    write(root, { 'Junk/s.eml': eml('s', 'Win') });
    const { summary } = await run('folder', root, 'f2');
    assert.equal(summary.run.created, 1);
    const { messages } = await stack.owner.call(MailList, {
      view: 'spam',
      account: 'import:folder:f2',
      min_seq: await lastSeq(stack),
    });
    assert.deepEqual(
      messages.map((m) => [m.subject, m.spam, m.labels]),
      [['Win', true, ['Junk']]],
    );
  });

  test('a Maildir: files outside cur/new, nested plain folders, metadata and tmp/ are all counted', async () => {
    const root = path.join(stack.env.home, 'maildir');
    for (const dir of ['cur', 'new', 'tmp']) fs.mkdirSync(path.join(root, dir), { recursive: true });
    write(root, {
      'cur/1262304001.M1P1.host:2,S': eml('m1', 'One'),
      'new/1262304002.M2P1.host': eml('m2', 'Two'),
      'tmp/1262304003.M3P1.host': eml('m3', 'Half delivered'),
      'dovecot-uidlist': '3 V1 N4\n',
      'loose.eml': eml('m4', 'Loose'),
      'Archive/2009/1': eml('m5', 'MH style'),
      'Archive/2009/2': eml('m1', 'One'), // the same message again: a duplicate
      'Archive/2009/3': 'not a message\n',
    });
    const { summary, error } = await run('maildir', root, 'm1');
    assert.equal(error, undefined);
    assertAccounted(summary, 8);
    assert.deepEqual(summary.run, { created: 4, updated: 0, duplicate: 1, rejected: 1, skipped: 2 });
  });

  test('a folder of mboxes (Apple Mail and Thunderbird exports): each mailbox a folder label, the rest skipped; a run resumes only over what it read, unchanged', async () => {
    const root = path.join(stack.env.home, 'mail-export');
    const mbox = (...messages: Array<[string, string]>) =>
      messages.map(([id, subject]) => `From ann@example.com Mon Jun  1 10:00:00 2009\n${eml(id, subject)}\n`).join('');
    write(root, {
      // Apple Mail's "Export Mailbox…": a folder per mailbox holding a file named mbox, and its Info.plist.
      'Apple/INBOX.mbox/mbox': mbox(['t1', 'Hello']),
      'Apple/INBOX.mbox/Info.plist': '<?xml version="1.0"?><plist/>',
      'Apple/Work.mbox/mbox': mbox(['t2', 'Plan'], ['t3', 'Budget']),
      'Apple/Work.mbox/Projects.mbox/mbox': mbox(['t4', 'Kick-off']),
      // Thunderbird's Local Folders: an mbox per folder, subfolders in .sbd, .msf indexes beside.
      'Thunderbird/Sent': mbox(['t5', 'Re: Hello']),
      'Thunderbird/Sent.msf': '// <!-- <mdb:mork:z v="1.4"/> -->',
      'Thunderbird/Archives.sbd/2009': mbox(['t6', 'Old news']),
      'Thunderbird/Trash': '',
    });
    const { summary, error } = await run('mbox', root, 'tree');
    assert.equal(error, undefined);
    assertAccounted(summary, 9);
    assert.deepEqual(summary.run, { created: 6, updated: 0, duplicate: 0, rejected: 0, skipped: 3 });
    const skips = summary.skipped.map((s) => s.reason).join('\n');
    assert.match(skips, /not an mbox: it does not start with a From line/);
    assert.match(skips, /an empty file \(an mbox with no messages\)/);
    const labelled = (label: string) => labelledIn('import:mbox:tree', label);
    assert.deepEqual((await labelled('Apple/Work')).sort(), ['Budget', 'Plan']);
    assert.deepEqual(await labelled('Apple/Work/Projects'), ['Kick-off']);
    assert.deepEqual(await labelled('Thunderbird/Archives/2009'), ['Old news']);
    assert.deepEqual(await labelled('Thunderbird/Sent'), ['Re: Hello']);

    // Mail appended to the last file is read on the next run; a file before it that changed refuses to resume.
    fs.appendFileSync(path.join(root, 'Thunderbird/Sent'), mbox(['t7', 'Later']));
    const again = await run('mbox', root, 'tree');
    assert.deepEqual(again.summary.run, { created: 1, updated: 0, duplicate: 0, rejected: 0, skipped: 3 });
    fs.appendFileSync(path.join(root, 'Apple/Work.mbox/mbox'), mbox(['t8', 'Inserted']));
    await assert.rejects(
      run('mbox', root, 'tree'),
      /changed since it was imported \(Apple\/Work\.mbox\/mbox\).*use --restart/,
    );
  });

  test('a folder holding mail archives: its mboxes (.mbox, a Thunderbird profile by content, a gzipped list archive) send their messages, labelled by their place; a changed one is read again', async () => {
    const root = path.join(stack.env.home, 'documents');
    const mbox = (...messages: Array<[string, string]>) =>
      messages
        .map(([id, subject]) => `From - Mon Jun  1 10:00:00 2009\nX-Mozilla-Status: 0001\n${eml(id, subject)}\n`)
        .join('');
    // Before: "no handler takes .mbox files", and Thunderbird's mailboxes "no extension to tell its type".
    write(root, {
      'Thunderbird/Local Folders/Inbox': mbox(['d1', 'Welcome']),
      'Thunderbird/Local Folders/Inbox.msf': '// <!-- <mdb:mork:z v="1.4"/> -->',
      'Thunderbird/Local Folders/Inbox.sbd/Work': mbox(['d2', 'Roadmap']),
      'exports/old.mbox': mbox(['d3', 'Invoice'], ['d4', 'Receipt']),
      'exports/empty.mbox': '',
      // A list's month as Mailman serves it, gzipped; a gzipped file that is no mbox is skipped.
      'lists/2009-January.txt.gz': gzipSync(
        `From ann at example.com  Mon Jun  1 10:00:00 2009\n${eml('d6', 'Agenda')}\n`,
      ),
      'lists/notes.gz': gzipSync('plain words\n'),
      'notes.md': '# Notes\n\ntext\n',
    });
    const first = await run('folder', root, 'docs');
    assert.equal(first.error, undefined);
    assertAccounted(first.summary, 9);
    assert.deepEqual(first.summary.run, { created: 6, updated: 0, duplicate: 0, rejected: 0, skipped: 3 });
    assert.deepEqual(first.summary.skipped.map((s) => s.examples).sort(), [
      ['Thunderbird/Local Folders/Inbox.msf'],
      ['exports/empty.mbox'],
      ['lists/notes.gz'],
    ]);
    const listed = async (view: 'inbox' | 'label', label?: string) =>
      (
        await stack.owner.call(MailList, {
          view,
          ...(label ? { label } : {}),
          account: 'import:folder:docs',
          min_seq: await lastSeq(stack),
        })
      ).messages.map((m) => m.subject);
    const labelled = (label: string) => listed('label', label);
    assert.deepEqual(await listed('inbox'), ['Welcome']);
    assert.deepEqual(await labelled('Thunderbird/Local Folders/Inbox/Work'), ['Roadmap']);
    assert.deepEqual((await labelled('exports/old')).sort(), ['Invoice', 'Receipt']);
    assert.deepEqual(await labelled('lists/2009-January'), ['Agenda']);

    // Nothing is sent twice; an mbox that changed is read again (what it held comes back duplicate).
    const second = await run('folder', root, 'docs');
    assert.deepEqual([second.summary.run.created, second.summary.earlier], [0, 6]);
    fs.appendFileSync(path.join(root, 'exports/old.mbox'), mbox(['d5', 'Refund']));
    const third = await run('folder', root, 'docs');
    assertAccounted(third.summary, 10);
    assert.deepEqual(third.summary.run, { created: 1, updated: 0, duplicate: 2, rejected: 0, skipped: 3 });
  });

  test('a zip in a folder is read as the folder it unpacks to: its documents and mail come in, labelled without .zip; a zip named as the folder too', async () => {
    const root = path.join(stack.env.home, 'zipped');
    fs.mkdirSync(path.join(root, 'archive'), { recursive: true });
    // Before: "no handler takes .zip files".
    await zipOf(path.join(root, 'archive/Old mail.zip'), {
      'Work/offer.eml': eml('z1', 'Zipped offer'),
      'exports/old.mbox': `From - Mon Jun  1 10:00:00 2009\n${eml('z2', 'Zipped invoice')}\n`,
      'notes.md': '# Zipped notes\n\nkept in a zip\n',
      '__MACOSX/Work/._offer.eml': 'resource fork',
    });
    const first = await run('folder', root, 'zipped');
    assert.equal(first.error, undefined);
    assertAccounted(first.summary, 4);
    assert.deepEqual(first.summary.run, { created: 3, updated: 0, duplicate: 0, rejected: 0, skipped: 1 });
    const labelled = (label: string) => labelledIn('import:folder:zipped', label);
    assert.deepEqual(await labelled('archive/Old mail/Work'), ['Zipped offer']);
    assert.deepEqual(await labelled('archive/Old mail/exports/old'), ['Zipped invoice']);
    const second = await run('folder', root, 'zipped');
    assert.deepEqual([second.summary.run.created, second.summary.earlier], [0, 3], 'nothing is sent twice');

    const direct = await zipOf(path.join(stack.env.home, 'Receipts.zip'), { '2009/boiler.eml': eml('z3', 'Boiler') });
    const third = await run('folder', direct, 'receipts');
    assert.deepEqual(third.summary.run, { created: 1, updated: 0, duplicate: 0, rejected: 0, skipped: 0 });
  });

  test('an mbox import or a Maildir import of a zip reads the zip as the folder it unpacks to', async () => {
    const mbox = (id: string, subject: string) => `From - Mon Jun  1 10:00:00 2009\n${eml(id, subject)}\n`;
    // Bytes that do not compress, past the first chunk a reader is handed (1 MB): a member's
    // damage in the middle of them is well after its first message.
    const noise = Array.from({ length: 40_000 }, (_, i) => createHash('sha256').update(String(i)).digest('base64'))
      .join('')
      .replace(/.{76}/g, '$&\r\n');
    const lists = await zipOf(path.join(stack.env.home, 'list-archives.zip'), {
      // Damaged in the zip after its first message: that one comes in, the rest is rejected naming it.
      'dev/2009-April.mbox': mbox('l0', 'Release call') + mbox('l00', `Release notes`).replace(' body.', ` ${noise}`),
      // Damaged from its start: skipped, saying why.
      'dev/2009-May.mbox': mbox('l01', 'Release slips'),
      'dev/2009-June.mbox': mbox('l1', 'Release plan'),
      'dev/2009-July.mbox': mbox('l2', 'Release done'),
      'README.txt': 'The archives of the dev list.',
    });
    damageZipMember(lists, 'dev/2009-April.mbox', { garble: true });
    damageZipMember(lists, 'dev/2009-May.mbox', { garble: true });
    const fromZip = await run('mbox', lists, 'lists');
    assert.equal(fromZip.error, undefined, 'a damaged member does not stop the run');
    assertAccounted(fromZip.summary, 6); // three messages, April's rest, May, README
    assert.deepEqual(
      [fromZip.summary.run.created, fromZip.summary.run.rejected, fromZip.summary.run.skipped],
      [3, 1, 2],
    );
    assert.match(
      fromZip.summary.rejected[0]!.reason,
      /2009-April\.mbox \(in list-archives\.zip\) is damaged after \d+ bytes/,
    );
    assert.ok(
      fromZip.summary.skipped.some(({ reason }) => /2009-May\.mbox \(in list-archives\.zip\) is damaged/.test(reason)),
      'the mbox damaged from its start is skipped, saying why',
    );
    assert.deepEqual(await labelledIn('import:mbox:lists', 'dev/2009-April'), ['Release call']);
    assert.deepEqual(await labelledIn('import:mbox:lists', 'dev/2009-June'), ['Release plan']);

    const maildir = await zipOf(path.join(stack.env.home, 'Maildir.zip'), {
      'cur/1262304001.M1P1.host:2,S': eml('z4', 'Zipped Maildir'),
      '.Work/new/1262304002.M2P1.host': eml('z5', 'Zipped work mail'),
      'cur/1262304003.M3P1.host:2,S': eml('z6', 'Damaged', `X-Pad: ${'padding '.repeat(200)}\r\n`),
      'dovecot.index': 'x',
    });
    damageZipMember(maildir, 'cur/1262304003.M3P1.host:2,S', { garble: true });
    const fromMaildir = await run('maildir', maildir, 'zipped-maildir');
    assert.equal(fromMaildir.error, undefined, 'a damaged member does not stop the run');
    assertAccounted(fromMaildir.summary, 4);
    assert.deepEqual(
      [fromMaildir.summary.run.created, fromMaildir.summary.run.rejected, fromMaildir.summary.run.skipped],
      [2, 1, 1],
    );
    assert.match(fromMaildir.summary.rejected[0]!.reason, /\(in Maildir\.zip\) is damaged after \d+ bytes/);
    assert.deepEqual(await labelledIn('import:maildir:zipped-maildir', 'Work'), ['Zipped work mail']);
  });

  test('a message of 7 MB (a large attachment) imports: before, its request outgrew what NATS took in one message and failed the run', async () => {
    const root = path.join(stack.env.home, 'large');
    const attachment = Buffer.alloc(7 * 1024 * 1024, 'scan ')
      .toString('base64')
      .replace(/.{76}/g, '$&\r\n');
    const mime =
      `MIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary="b"\r\n\r\n--b\r\nContent-Type: text/plain\r\n\r\nThe scans.\r\n` +
      `--b\r\nContent-Type: application/octet-stream; name="scans.bin"\r\nContent-Transfer-Encoding: base64\r\n\r\n${attachment}\r\n--b--\r\n`;
    write(root, { 'scans.eml': eml('large', 'Scans', mime) });
    const { summary, error } = await run('folder', root, 'large');
    assert.equal(error, undefined);
    assert.deepEqual(summary.run, { created: 1, updated: 0, duplicate: 0, rejected: 0, skipped: 0 });
  });

  test('a month of a mailing list as pipermail serves it (.txt.gz, "at" for "@"): every message, each sender by address', async () => {
    const root = path.join(stack.env.home, 'list');
    const month = Array.from({ length: 30 }, (_, i) =>
      [
        `From user${i % 3} at lists.example.org  Mon Jan  5 10:${String(i).padStart(2, '0')}:00 2009`,
        `From: user${i % 3} at lists.example.org (User ${i % 3})`,
        `Date: Mon, 05 Jan 2009 10:${String(i).padStart(2, '0')}:00 +0100`,
        `Subject: [Dev] topic ${i}`,
        `Message-ID: <m${i}@lists.example.org>`,
        '',
        `Message ${i}.`,
        '',
      ].join('\n'),
    );
    fs.mkdirSync(root, { recursive: true });
    const file = path.join(root, '2009-January.txt.gz');
    fs.writeFileSync(file, gzipSync(month.join('')));
    const { summary, error } = await run('mbox', file, 'dev-list');
    assert.equal(error, undefined);
    assert.deepEqual(summary.run, { created: 30, updated: 0, duplicate: 0, rejected: 0, skipped: 0 });
    const { messages } = await stack.owner.call(MailList, {
      view: 'all',
      account: 'import:mbox:dev-list',
      limit: 100,
      min_seq: await lastSeq(stack),
    });
    assert.equal(messages.length, 30);
    assert.deepEqual([...new Set(messages.map((m) => m.from[0]!.address))].sort(), [
      'user0@lists.example.org',
      'user1@lists.example.org',
      'user2@lists.example.org',
    ]);
    assert.equal(messages.find((m) => m.subject === '[Dev] topic 4')?.from[0]?.name, 'User 1');

    // A download cut short is refused before anything is sent, saying why (in a folder, skipped).
    const whole = gzipSync(month.join('').repeat(40));
    const cut = path.join(root, '2009-February.txt.gz');
    fs.writeFileSync(cut, whole.subarray(0, whole.length >> 1));
    await assert.rejects(run('mbox', cut, 'dev-list-cut'), /2009-February\.txt\.gz: its gzip data is cut short/);
  });
});

/** The log's last sequence, for reads that must see everything written so far. */
