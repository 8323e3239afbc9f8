import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Ingest, ItemsGet, MailList, MailThread } from '@memex/contracts';
import { ServiceHost } from '@memex/runtime';
import { message } from '../domain/handlers/testing/build.js';
import { b64, startIngest, type IngestHarness } from '../testing/service.js';

/**
 * Before: a NUL in an external_id failed the whole batch with a 500 (good items included), and a
 * NUL in the text was answered `created` and then failed in the projectors, unreadable and
 * unsearchable, while health stayed green.
 */
describe('nothing lost silently', () => {
  let h: IngestHarness;
  before(async () => {
    h = await startIngest();
  });
  after(async () => h.stop());

  test('a NUL in an external_id rejects that item only; NULs in text are removed and the item projects', async () => {
    const good = message(
      [
        ['From', 'a@x.org'],
        ['Subject', 'Good'],
        ['Message-ID', '<good@x>'],
        ['Date', 'Mon, 1 Jun 2009 10:00:00 +0000'],
      ],
      'Fine.\r\n',
    );
    const nulBody = message(
      [
        ['From', 'a@x.org'],
        ['Subject', 'Nul body'],
        ['Message-ID', '<nul@x>'],
        ['Date', 'Mon, 1 Jun 2009 11:00:00 +0000'],
      ],
      'a\0b\r\n',
    );
    const answer = await h.call(Ingest, {
      items: [
        { type: 'message/rfc822', data: b64(good), source: { kind: 'mbox', id: 'nul' }, external_id: 'box#1' },
        { type: 'message/rfc822', data: b64(good), source: { kind: 'mbox', id: 'nul' }, external_id: 'box\0#2' },
        {
          type: 'text/markdown',
          text: '# No\0tes\n\nsome\0 text\n',
          source: { kind: 'folder', id: 'nul' },
          external_id: 'notes.md',
        },
        { type: 'message/rfc822', data: b64(nulBody), source: { kind: 'mbox', id: 'nul' }, external_id: 'box#3' },
      ],
    });
    assert.deepEqual(
      answer.results.map((r) => r.status),
      ['created', 'rejected', 'created', 'created'],
    );
    assert.match(answer.results[1]!.reason!, /external_id contains a NUL character/);
    const markdown = await h.call(ItemsGet, { id: answer.results[2]!.id!, min_seq: answer.seq });
    assert.equal(markdown.title, 'Notes');
    assert.match(markdown.text, /some text/);
    const mail = await h.call(ItemsGet, { id: answer.results[3]!.id!, min_seq: answer.seq });
    assert.match(mail.text, /ab/);
    assert.equal(await h.app.get(ServiceHost).projector!.failureCount(), 0);
  });

  /**
   * Bulk senders reuse one Message-ID on every mailing (`<email@domain.com>`, seen in
   * SpamAssassin's corpora and in Gmail Takeouts); before, the second mailing was answered a
   * duplicate of the first and lost.
   */
  test('distinct messages sharing a bogus Message-ID are both kept; a true copy from another archive is a duplicate', async () => {
    const mailing = (date: string, subject: string) =>
      b64(
        message(
          [
            ['From', 'news@shop.example'],
            ['To', 'me@x.org'],
            ['Subject', subject],
            ['Date', date],
            ['Message-ID', '<email@domain.com>'],
          ],
          `${subject}\r\n`,
        ),
      );
    const item = (data: string, source: string, externalId: string) => ({
      type: 'message/rfc822',
      data,
      source: { kind: 'mbox', id: source },
      external_id: externalId,
    });
    const june = mailing('Mon, 1 Jun 2009 10:00:00 +0000', 'June sale');
    const july = mailing('Wed, 1 Jul 2009 10:00:00 +0000', 'July sale');
    const first = await h.call(Ingest, { items: [item(june, 'bulk-a', '1'), item(july, 'bulk-a', '2')] });
    assert.deepEqual(
      first.results.map((r) => r.status),
      ['created', 'created'],
    );
    const [juneId, julyId] = first.results.map((r) => r.id!);
    assert.notEqual(juneId, julyId);
    // The same two mailings from another archive: duplicates of each, in either order.
    const again = await h.call(Ingest, { items: [item(july, 'bulk-b', 'x'), item(june, 'bulk-b', 'y')] });
    assert.deepEqual(again.results, [
      { status: 'duplicate', id: julyId },
      { status: 'duplicate', id: juneId },
    ]);
    const stored = await h.call(ItemsGet, { id: julyId!, min_seq: first.seq });
    assert.equal(stored.title, 'July sale');
    assert.equal(stored.meta['sharedMessageId'], true);
    assert.match(
      String(stored.meta['warnings']),
      /Message-ID <email@domain\.com> is also the id of a different message/,
    );
  });

  test('an item with no plausible date of its own is undated, not dated by its import (it filled briefs as "recent")', async () => {
    const future = b64(
      message(
        [
          ['From', 'a@x.org'],
          ['Subject', 'From 3609'],
          ['Date', 'Sat, 12 Jan 3609 12:00:00 +0000'],
          ['Message-ID', '<y3609@x>'],
        ],
        'x\r\n',
      ),
    );
    const answer = await h.call(Ingest, {
      items: [{ type: 'message/rfc822', data: future, source: { kind: 'mbox', id: 'dates' } }],
    });
    const item = await h.call(ItemsGet, { id: answer.results[0]!.id!, min_seq: answer.seq });
    assert.equal(item.occurred_at, null);
    assert.equal(item.meta['undated'], true);
    assert.equal(item.meta['dateSource'], null);
  });

  test('a copy of a stored message found in another folder adds that folder as a label', async () => {
    const bytes = b64(
      message(
        [
          ['From', 'a@x.org'],
          ['Subject', 'Filed twice'],
          ['Date', 'Mon, 1 Jun 2009 12:00:00 +0000'],
          ['Message-ID', '<twice@x>'],
        ],
        'Body.\r\n',
      ),
    );
    const inFolder = (folder: string, source: string) => copyInFolder(bytes, folder, source);
    const first = await h.call(Ingest, { items: [inFolder('Archive/2009', 'laptop')] });
    const copy = await h.call(Ingest, { items: [inFolder('Projects', 'server'), inFolder('INBOX', 'phone')] });
    assert.deepEqual(
      copy.results.map((r) => [r.status, r.id]),
      [
        ['duplicate', first.results[0]!.id],
        ['duplicate', first.results[0]!.id],
      ],
    );
    const thread = await h.call(MailThread, { id: first.results[0]!.id!, min_seq: await h.bus.lastSeq() });
    assert.deepEqual(thread.messages[0]!.labels.sort(), ['Archive/2009', 'Projects']);
  });

  test('a copy of a stored message found in a Junk folder marks it spam: hidden from agents, in the spam view', async () => {
    const bytes = b64(
      message(
        [
          ['From', 'deals@shop.example'],
          ['Subject', 'Cheap pills'],
          ['Date', 'Mon, 1 Jun 2009 12:00:00 +0000'],
          ['Message-ID', '<pills@shop.example>'],
        ],
        'Buy now.\r\n',
      ),
    );
    const inFolder = (folder: string, source: string) => copyInFolder(bytes, folder, source);
    const first = await h.call(Ingest, { items: [inFolder('Archive', 'laptop')] });
    const id = first.results[0]!.id!;
    assert.equal((await h.call(ItemsGet, { id, min_seq: first.seq })).spam, false);
    const copy = await h.call(Ingest, { items: [inFolder('Junk', 'server')] });
    assert.deepEqual(
      copy.results.map((r) => [r.status, r.id]),
      [['duplicate', id]],
    );
    const seq = await h.bus.lastSeq();
    assert.equal((await h.call(ItemsGet, { id, min_seq: seq })).spam, true);
    const thread = await h.call(MailThread, { id, min_seq: seq });
    assert.deepEqual(
      thread.messages.map((m) => [m.spam, [...m.labels].sort()]),
      [[true, ['Archive', 'Junk']]],
    );
    const spamView = await h.call(MailList, { view: 'spam', min_seq: seq });
    assert.ok(spamView.messages.some((m) => m.id === id));
    const inbox = await h.call(MailList, { view: 'all', min_seq: seq });
    assert.ok(!inbox.messages.some((m) => m.id === id));
  });
});

/** A Maildir copy of one message, found in `folder` of the machine `source`. */
function copyInFolder(bytes: string, folder: string, source: string) {
  return {
    type: 'message/rfc822',
    data: bytes,
    source: { kind: 'maildir', id: source },
    external_id: `${folder}/1`,
    attributes: { folder },
  };
}
