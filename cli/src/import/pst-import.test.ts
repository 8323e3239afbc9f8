import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { CalendarList, MailList, type ResultOf } from '@memex/contracts';
import { startStack, type TestStack } from '@memex/e2e';
import { waitUntil } from '@memex/testing';
import { buildOlm } from '@memex/exports/testing';
import { assertAccounted, importInto, lastSeq } from './testing.js';

/**
 * Real Outlook data files, read in place where the registry package that reads them installs
 * them: its test data, a PST of the Enron corpus (Exchange mail of 2001 with its transport
 * headers and Word attachments) and an Outlook.com mailbox kept offline (.ost: HTML mail, a
 * meeting request, calendar entries).
 */
const testdata = path.join(
  path.dirname(createRequire(import.meta.url).resolve('pst-extractor/package.json')),
  'example/testdata',
);
const ENRON = path.join(testdata, 'enron.pst');
const OUTLOOK_COM = path.join(testdata, 'pstextractortest@outlook.com.ost');
const skip =
  fs.existsSync(ENRON) && fs.existsSync(OUTLOOK_COM) ? false : `pst-extractor ships no test data at ${testdata}`;

describe('memex import pst and olm', { skip }, () => {
  let stack: TestStack;
  before(async () => {
    stack = await startStack(['ingest', 'calendar-sync']);
  });
  after(async () => stack?.stop());

  const list = async (account: string, view: 'inbox' | 'label', label?: string) =>
    (
      await stack.owner.call(MailList, {
        view,
        ...(label ? { label } : {}),
        account,
        limit: 100,
        min_seq: await lastSeq(stack),
      })
    ).messages;

  test("a PST's mail: every message, labelled with its folder, sender, recipients and attachments as sent; a second run sends nothing", async () => {
    const first = await importInto(stack, 'pst', ENRON, 'enron');
    assert.equal(first.error, undefined);
    assertAccounted(first.summary, 71);
    const { created, duplicate, rejected, skipped } = first.summary.run;
    assert.deepEqual([created + duplicate, rejected, skipped], [71, 0, 0]);
    const messages = await list('import:pst:enron', 'label', 'lokay-m/MLOKAY (Non-Privileged)/TW-Commercial Group');
    const oba = messages.find((m) => m.subject === "New OBA's");
    assert.ok(oba, 'the message with its folder label');
    assert.equal(oba.from[0]?.address?.toLowerCase(), 'dennis.lee@enron.com');
    assert.deepEqual(
      oba.to.map((to) => to.address?.toLowerCase()),
      ['lorraine.lindberg@enron.com', 'kimberly.watson@enron.com'],
    );
    assert.equal(oba.attachments, 11, 'its eleven Word files');
    assert.equal(oba.date, '2001-10-22T20:06:22.000Z');

    const second = await importInto(stack, 'pst', ENRON, 'enron');
    assert.deepEqual([second.summary.run.created, second.summary.earlier], [0, 71]);
  });

  test('an OST: its mail and calendar come in, a series with its rule in its zone; the items pst-extractor cannot list are skipped, each counted with why', async () => {
    const { summary, error } = await importInto(stack, 'pst', OUTLOOK_COM, 'outlook-com');
    assert.equal(error, undefined);
    // 14 messages, 33 calendar entries, and 136 of a holiday calendar's 160 entries its table does not give.
    assertAccounted(summary, 183);
    assert.deepEqual([summary.run.created + summary.run.duplicate, summary.run.skipped], [47, 136]);
    assert.deepEqual(
      summary.skipped.map((s) => [s.count, s.reason]),
      [[136, 'an item its folder lists that could not be read from the file']],
    );
    const messages = await list('import:pst:outlook-com', 'inbox');
    assert.ok(
      messages.some(
        (m) => m.subject === 'Get started with OneDrive' && m.from[0]?.address === 'email@mail.onedrive.com',
      ),
    );

    // August 2021 as the calendar shows it: the series expanded in Pacific time, all-day days, a
    // Google invitation under the UID Google gave it.
    let instances: ResultOf<typeof CalendarList>['instances'] = [];
    await waitUntil(async () => {
      ({ instances } = await stack.owner.call(CalendarList, {
        from: '2021-08-01T00:00:00Z',
        to: '2021-11-01T00:00:00Z',
      }));
      return instances.length >= 17;
    }, 'the calendar entries in the calendar');
    const starts = (summary: string) => instances.filter((i) => i.summary === summary).map((i) => i.start);
    assert.deepEqual(
      starts('repeats every monday for 10 weeks'),
      ['08-09', '08-16', '08-23', '08-30', '09-06', '09-13', '09-20', '09-27', '10-04', '10-11'].map(
        (day) => `2021-${day}T17:00:00.000Z`,
      ),
      '10:00 in Los Angeles on ten Mondays',
    );
    assert.deepEqual(starts('repeats for 3 days'), [
      '2021-08-10T19:00:00.000Z',
      '2021-08-11T19:00:00.000Z',
      '2021-08-12T19:00:00.000Z',
    ]);
    const yearly = instances.find((i) => i.summary.startsWith('Occurs every August 13'))!;
    assert.deepEqual([yearly.start, yearly.recurring], ['2021-08-13T17:00:00.000Z', true]);
    const days = instances.find((i) => i.summary === 'all day event for 3 days')!;
    assert.deepEqual([days.all_day, days.start_date, days.end_date], [true, '2021-08-15', '2021-08-18']);
    const invited = instances.find((i) => i.summary === 'meeting from Ed')!;
    assert.deepEqual(
      [invited.uid, invited.organizer?.address],
      ['goedb89m92ojdbql36p5cuu74o@google.com', 'epfromer@gmail.com'],
    );
  });

  test('memex import folder reads the Outlook data files in the folder (Documents/Outlook Files/*.pst), one it cannot open skipped with why', async () => {
    const root = path.join(stack.env.home, 'Documents');
    fs.mkdirSync(path.join(root, 'Outlook Files'), { recursive: true });
    fs.symlinkSync(ENRON, path.join(root, 'Outlook Files', 'archive.pst'));
    fs.writeFileSync(path.join(root, 'Outlook Files', 'broken.ost'), 'not an Outlook data file');
    fs.writeFileSync(path.join(root, 'notes.md'), '# Notes\n\nAbout the Enron archive.\n');
    const first = await importInto(stack, 'folder', root, 'documents');
    assert.equal(first.error, undefined);
    assertAccounted(first.summary, 73);
    const { created, duplicate, skipped } = first.summary.run;
    // Before: "an Outlook data file: memex import pst reads it", and nothing of it came in. Its 71
    // messages are those `memex import pst` brought in above: the same messages, so duplicates.
    assert.deepEqual([created, duplicate, skipped], [1, 71, 1]);
    assert.match(first.summary.skipped[0]!.reason, /^an Outlook data file that cannot be read/);
    const second = await importInto(stack, 'folder', root, 'documents');
    assert.deepEqual([second.summary.run.created, second.summary.earlier], [0, 72], 'nothing sent twice');
  });

  test('memex import olm: an Outlook for Mac archive, its messages with their folders, read marks and attachments, its appointments and contacts; a second run sends nothing', async () => {
    const archive = await buildOlm(path.join(stack.env.home, 'Archive.olm'));
    const first = await importInto(stack, 'olm', archive, 'mac');
    assert.equal(first.error, undefined);
    // Ten files, the calendar's four more appointments, and the two attachments one message names that are not in the archive.
    assertAccounted(first.summary, 16);
    // Three messages, four appointments and a contact.
    assert.deepEqual(first.summary.run, { created: 8, updated: 0, duplicate: 0, rejected: 0, skipped: 8 });
    const projects = await list('import:olm:mac', 'label', 'Inbox/Projects');
    assert.deepEqual(
      projects.map((m) => [m.subject, m.read, m.from[0]?.address]),
      [['Re: Quarterly report & figures', true, 'cy@example.com']],
    );
    const inbox = await list('import:olm:mac', 'inbox');
    const report = inbox.find((m) => m.subject === 'Quarterly report & figures')!;
    assert.deepEqual([report.read, report.attachments, report.date], [false, 1, '2022-05-26T17:55:40.000Z']);
    const second = await importInto(stack, 'olm', archive, 'mac');
    assert.deepEqual([second.summary.run.created, second.summary.earlier], [0, 8]);
  });

  test('a damaged PST: what can be read comes in, each item that cannot is counted with why, none lost unseen', async () => {
    // The Enron PST with ten holes of zeros, as a bad sector or a copy cut short leaves them.
    const damaged = Buffer.from(fs.readFileSync(ENRON));
    for (let at = 2_000_000; at < damaged.length; at += 1_000_000) damaged.fill(0, at, at + 40_000);
    const file = path.join(stack.env.home, 'damaged.pst');
    fs.writeFileSync(file, damaged);
    const { summary, error } = await importInto(stack, 'pst', file, 'damaged');
    assert.equal(error, undefined);
    assertAccounted(summary, 71);
    assert.deepEqual([summary.run.created + summary.run.duplicate, summary.run.skipped], [69, 2]);
    const reasons = summary.skipped.map((s) => s.reason).sort();
    assert.equal(reasons[0], 'an item its folder lists that could not be read from the file');
    assert.match(reasons[1]!, /^an unreadable message: /);
    // One that is no Outlook data file at all is refused, naming it.
    fs.writeFileSync(file, damaged.subarray(0, 7_000_000));
    const { error: refused } = await importInto(stack, 'pst', file, 'cut-short').catch((failure: unknown) => ({
      error: failure,
    }));
    assert.match(String(refused), /damaged\.pst: not an Outlook data file it can read/);
  });
});
