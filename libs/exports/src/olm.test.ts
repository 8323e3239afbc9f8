import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { simpleParser } from 'mailparser';
import { expandSeries, readCalendar, readVCards } from '@memex/icalendar';
import { olmFileCount, readOlm } from './olm.js';
import type { PstMessage, PstSkipped } from './pst.js';
import { buildOlm } from './testing/index.js';
import { ZipArchives } from './zip.js';

test('an Outlook for Mac archive (.olm): each message as the mail it was, with its folder and read mark; appointments and contacts as iCalendar and vCard; every other file accounted for', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'olm-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const archive = await ZipArchives.open([await buildOlm(path.join(dir, 'Archive.olm'))]);
  // What the archive's `../secret.txt` would name on disk, were it followed.
  fs.writeFileSync(path.join(dir, 'secret.txt'), 'not for the archive');
  const entries: Array<PstMessage | PstSkipped> = [];
  let counted: number;
  try {
    for await (const entry of readOlm(archive.path)) entries.push(entry);
    counted = await olmFileCount(archive.path);
  } finally {
    archive.close();
  }
  const messages = entries.filter((e): e is PstMessage => 'bytes' in e && e.type === 'message/rfc822');
  assert.deepEqual(
    messages.map((m) => [m.folder, m.read, m.received]),
    [
      ['Inbox/Projects', true, undefined],
      ['Inbox', false, '2022-05-26T17:56:02.000Z'],
      ['Sent Items', false, undefined],
    ],
  );
  const [reply, report, sent] = await Promise.all(messages.map((m) => simpleParser(m.bytes)));
  assert.equal(report!.subject, 'Quarterly report & figures');
  assert.equal(report!.from?.value[0]?.address, 'bob@example.org');
  assert.deepEqual(
    [report!.to, report!.cc]
      .flatMap((list) => (Array.isArray(list) ? list : [list]))
      .flatMap((l) => l!.value.map((v) => v.address)),
    ['ann@example.com', 'cy@example.com', 'dee@example.com'],
  );
  assert.equal(report!.date?.toISOString(), '2022-05-26T17:55:40.000Z');
  assert.equal(report!.messageId, '<report-2022@example.org>');
  assert.equal(report!.attachments[0]?.filename, 'report.pdf');
  assert.equal(report!.attachments[0]?.content.toString(), '%PDF-1.4\n% the quarterly report\n');
  assert.equal(reply!.inReplyTo, '<report-2022@example.org>');
  assert.equal(String(reply!.html).trim(), '<p>Figures look <b>good</b>.</p>');
  assert.equal(sent!.text?.trim(), 'Lunch on Friday?');
  assert.deepEqual(sent!.attachments, [], 'the attachment the archive lost and the one outside it are left out');

  const skipped = new Map(entries.filter((e): e is PstSkipped => 'skipped' in e).map((e) => [e.key, e.skipped]));
  const calendar = 'Accounts/ann@example.com/com.microsoft.__Calendars/Calendar/Calendar.xml';
  assert.deepEqual([...skipped.keys()].sort(), [
    '../secret.txt',
    'Accounts/ann@example.com/com.microsoft.__Attachments/menu.pdf',
    'Accounts/ann@example.com/com.microsoft.__Attachments/report.pdf',
    `${calendar}#4`,
    'Accounts/ann@example.com/com.microsoft.__Contacts/Address Book/contact_00001.xml',
    'Accounts/ann@example.com/com.microsoft.__Messages/Inbox/message_00003.xml',
    'Accounts/ann@example.com/com.microsoft.__Tasks/Tasks/task_00000.xml',
    'Categories.xml',
  ]);
  assert.equal(skipped.get(`${calendar}#4`), 'an appointment without a start time');
  assert.match(
    skipped.get('Accounts/ann@example.com/com.microsoft.__Tasks/Tasks/task_00000.xml')!,
    /^tasks and notes are not read from \.olm archives yet$/,
  );
  assert.equal(
    skipped.get('Accounts/ann@example.com/com.microsoft.__Attachments/report.pdf'),
    'an attachment of a message, sent inside it',
  );
  assert.match(
    skipped.get('Accounts/ann@example.com/com.microsoft.__Messages/Inbox/message_00003.xml')!,
    /^an unreadable message: /,
  );
  assert.match(
    skipped.get('Accounts/ann@example.com/com.microsoft.__Attachments/menu.pdf')!,
    /missing from the archive: sent without it$/,
  );
  assert.match(skipped.get('../secret.txt')!, /missing from the archive: sent without it$/);
  assert.equal(
    skipped.get('Accounts/ann@example.com/com.microsoft.__Contacts/Address Book/contact_00001.xml'),
    'a contact with no name, company or address',
  );

  // The appointments, each an iCalendar event known by the file and its UUID; the contact a vCard known by its file.
  const events = entries.filter((e): e is PstMessage => 'bytes' in e && e.type === 'text/calendar');
  assert.deepEqual(
    events.map((e) => e.key),
    ['review-1', 'standup-1', 'holiday-1', 'board-1'].map((id) => `${calendar}#${id}`),
  );
  const [review, standup, holiday, board] = events.map((e) => readCalendar(e.bytes.toString()).events[0]!);
  assert.deepEqual(
    [review!.uid, review!.summary, review!.start, review!.end, review!.location, review!.description],
    ['review-1', 'Budget review', '2022-06-01T09:00:00.000Z', '2022-06-01T10:00:00.000Z', 'Room 4', 'Figures for Q2.'],
  );
  assert.deepEqual(
    [review!.organizer?.address, review!.attendees.map((a) => [a.address, a.role])],
    [
      'ann@example.com',
      [
        ['bob@example.org', 'req-participant'],
        ['cy@example.com', 'opt-participant'],
      ],
    ],
  );
  assert.deepEqual(
    expandSeries(standup!.source!, new Date('2022-06-01'), new Date('2022-07-01')).occurrences.map((o) => o.start),
    ['2022-06-06T08:30:00.000Z', '2022-06-08T08:30:00.000Z', '2022-06-13T08:30:00.000Z', '2022-06-15T08:30:00.000Z'],
  );
  assert.deepEqual([holiday!.allDay, holiday!.startDate, holiday!.endDate], [true, '2022-06-02', '2022-06-03']);
  assert.deepEqual([board!.recurrence, board!.start], [null, '2022-06-14T15:00:00.000Z']);
  assert.match(board!.description, /Repeats by Outlook's "RelativeMonthly" pattern\.$/);

  const contacts = entries.filter((e): e is PstMessage => 'bytes' in e && e.type === 'text/vcard');
  assert.deepEqual(
    contacts.map((e) => e.key),
    ['Accounts/ann@example.com/com.microsoft.__Contacts/Address Book/contact_00000.xml'],
  );
  const [card] = readVCards(contacts[0]!.bytes.toString());
  assert.deepEqual(
    [card!.fullName, card!.organization, card!.title, card!.emails.map((e) => e.address), card!.birthday, card!.note],
    [
      'Bob Stone',
      'Stone & Sons',
      'Director',
      ['bob@example.org', 'bob.stone@example.net'],
      '1970-03-14',
      'Met at the 2021 fair.',
    ],
  );
  assert.deepEqual(
    card!.phones.map((p) => [p.number, p.types]),
    [
      ['+44 20 7946 0958', ['cell']],
      ['+44 20 7946 0000', ['work', 'fax']],
    ],
  );
  assert.deepEqual(
    card!.addresses.map((a) => [a.street, a.locality, a.postalCode, a.country]),
    [['1 High Street', 'London', 'EC1A 1BB', 'United Kingdom']],
  );
  // Every entry but the attachments a message names and the archive lacks (no file of it).
  const missing = [...skipped.values()].filter((reason) => /missing from the archive/.test(reason)).length;
  assert.equal(counted, entries.length - missing, 'the progress counts every file, and each appointment and contact');
});
