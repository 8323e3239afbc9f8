import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { ItemsGet, MailList, type ResultOf } from '@memex/contracts';
import { Bus, readLog } from '@memex/bus';
import { startStack, type TestStack } from '@memex/e2e';
import { buildTakeout, damageZipMember, zipOf, zipTakeout } from '@memex/exports/testing';
import { waitUntil } from '@memex/testing';
import { assertAccounted, importInto, lastSeq, write } from './testing.js';

type Message = ResultOf<typeof MailList>['messages'][number];

describe('memex import takeout: a Google Takeout imported twice, unpacked and as its zips', () => {
  let stack: TestStack;
  before(async () => {
    stack = await startStack(['ingest']);
  });
  after(async () => stack.stop());

  const run = (target: string) => importInto(stack, 'takeout', target, 'me');

  /** Every message of the account, from every view that shows some. */
  async function messages(): Promise<Map<string, Message>> {
    const all = new Map<string, Message>();
    for (const view of ['all', 'spam', 'trash'] as const) {
      const { messages } = await stack.owner.call(MailList, { view, account: 'import:takeout:me', limit: 500 });
      for (const m of messages) all.set(m.subject, m);
    }
    return all;
  }

  /**
   * The messages once the mail views hold `count` of them and `ready` holds (they follow the log,
   * where a relabelled message's update may come after the new messages).
   */
  async function messagesOnce(
    count: number,
    ready: (found: Map<string, Message>) => boolean = () => true,
  ): Promise<Map<string, Message>> {
    let found = new Map<string, Message>();
    await waitUntil(
      async () => (found = await messages()).size >= count && ready(found),
      `${count} messages in the mail views`,
    );
    return found;
  }

  /** Photo items in the log (each item.ingested of a photo). */
  async function photoIds(): Promise<Array<{ id: string; seq: number }>> {
    const bus = await Bus.connect(stack.env.config.natsUrl, 'takeout-test');
    try {
      const ids: Array<{ id: string; seq: number }> = [];
      for await (const { seq, event } of readLog(bus, { filter: 'memex.evt.item.ingested.>', untilCaughtUp: true }))
        if (event.kind === 'photo') ids.push({ id: (event.data as { id: string }).id, seq });
      return ids;
    } finally {
      await bus.close();
    }
  }

  test('labels, read/starred, spam and trash, times and places and albums right; a newer export, zipped, adds only what is new and updates labels', async () => {
    const first = path.join(stack.env.home, 'takeout-2024-06');
    await buildTakeout(first, 'first');
    const one = await run(first);
    assert.equal(one.error, undefined);
    assertAccounted(one.summary);
    assert.deepEqual(one.summary.rejected, []);
    // 5 messages and 2 photos; the album's copy of IMG_0001, 3 sidecars, metadata.json, Filters.xml and Takeout's index skipped.
    assert.deepEqual(one.summary.run, { created: 7, updated: 0, duplicate: 0, rejected: 0, skipped: 7 });
    const reasons = one.summary.skipped.map((s) => s.reason).join('\n');
    assert.match(reasons, /sidecar/);
    assert.match(reasons, /metadata\.json/);
    assert.match(reasons, /Takeout copies a photo into each of its albums/);
    assert.match(reasons, /Takeout's index/);

    let mail = await messagesOnce(5);
    assert.equal(mail.size, 5);
    const offer = mail.get('Offer')!;
    assert.deepEqual(
      { read: offer.read, starred: offer.starred, inbox: offer.inbox, labels: offer.labels.sort() },
      { read: true, starred: false, inbox: true, labels: ['IMPORTANT', 'Work/Acme'] },
    );
    assert.equal(offer.date, '2024-06-03T07:00:00.000Z');
    const kids = mail.get('Photos of the kids')!;
    assert.deepEqual(
      { read: kids.read, starred: kids.starred, inbox: kids.inbox, labels: kids.labels },
      { read: false, starred: true, inbox: false, labels: ['Family'] },
    );
    assert.equal(mail.get('You won')!.spam, true);
    assert.equal(mail.get('Old newsletter')!.trashed, true);
    assert.deepEqual(mail.get('Re: lunch')!.labels, ['SENT']);
    assert.equal(mail.get('Re: lunch')!.inbox, false);
    assert.equal(mail.get('Re: lunch')!.date, '2024-06-07T16:30:00.000Z');

    const photos = await photoIds();
    assert.equal(photos.length, 2, 'the copy of IMG_0001 in the album is the same item');
    const items = await Promise.all(photos.map(({ id, seq }) => stack.owner.call(ItemsGet, { id, min_seq: seq })));
    const rome = items.find((i) => i.meta['description'] === 'Evening in Rome')!;
    assert.deepEqual(rome.labels, ['album:Rome-2019'], 'the album labels the photo it shares with the year folder');
    assert.equal(rome.occurred_at, '2019-07-04T18:30:00.000Z');
    assert.deepEqual(rome.meta['gps'], { latitude: 41.8902, longitude: 12.4922, altitude: 0 });
    assert.equal(rome.meta['gpsSource'], 'takeout');

    // A newer export elsewhere: one more message, one message's labels changed, one more photo. It
    // is read as downloaded: two zip parts, named by the first, the sidecars in the second.
    const second = path.join(stack.env.home, 'takeout-2024-12');
    await buildTakeout(second, 'newer');
    const downloads = path.join(stack.env.home, 'downloads');
    const parts = await zipTakeout(second, downloads, 'takeout-20241201T101010Z', 2, (key) =>
      key.endsWith('.json') ? 1 : 0,
    );
    const two = await run(parts[0]!);
    assert.equal(two.error, undefined);
    assertAccounted(two.summary);
    assert.equal(two.summary.earlier, 6, 'four unchanged messages and two photos are not sent again');
    assert.deepEqual(
      { created: two.summary.run.created, updated: two.summary.run.updated, duplicate: two.summary.run.duplicate },
      { created: 2, updated: 1, duplicate: 0 },
    );

    mail = await messagesOnce(6, (found) => found.get('Photos of the kids')?.labels.includes('Travel') === true);
    assert.equal(mail.size, 6, 'no message twice');
    const relabelled = mail.get('Photos of the kids')!;
    assert.deepEqual(
      { read: relabelled.read, starred: relabelled.starred, labels: relabelled.labels.sort() },
      { read: true, starred: true, labels: ['Family', 'Travel'] },
    );
    assert.equal(mail.get('Dinner?')!.read, false);
    assert.equal(mail.get('Dinner?')!.inbox, true);
    assert.equal((await photoIds()).length, 3, 'one more photo, none twice');

    // The same export again, unpacked: the same keys, nothing to send.
    const three = await run(second);
    assert.equal(three.summary.earlier, 9);
    assert.deepEqual(three.summary.run, { created: 0, updated: 0, duplicate: 0, rejected: 0, skipped: 8 });

    // And as .tgz as downloaded (GNU tar writes it as Takeout does): unpacked beside it, the same keys, then gone.
    const tgz = path.join(stack.env.home, 'downloads-tgz');
    fs.mkdirSync(tgz);
    const packed = spawnSync('tar', ['-czf', path.join(tgz, 'takeout-20241201T101010Z-001.tgz'), 'Takeout'], {
      cwd: second,
      encoding: 'utf8',
    });
    assert.equal(packed.status, 0, packed.stderr);
    const four = await run(path.join(tgz, 'takeout-20241201T101010Z-001.tgz'));
    assert.equal(four.error, undefined);
    assert.equal(four.summary.earlier, 9);
    assert.deepEqual(four.summary.run, { created: 0, updated: 0, duplicate: 0, rejected: 0, skipped: 8 });
    assert.deepEqual(fs.readdirSync(tgz), ['takeout-20241201T101010Z-001.tgz'], 'the unpacked copy is removed');
  });

  test('a damaged zip part: its damaged members are rejected naming the part, everything else comes in', async () => {
    const dir = path.join(stack.env.home, 'damaged-download');
    fs.mkdirSync(dir);
    const message = (n: number) =>
      `From ${n}@xxx Mon Jan 06 10:00:00 +0000 2025\nX-Gmail-Labels: Inbox\nFrom: ann@example.com\nTo: me@example.com\n` +
      `Subject: Estimate ${n}\nMessage-ID: <estimate-${n}@example.com>\nDate: Mon, 6 Jan 2025 10:00:00 +0000\n\n` +
      `${'The builder sent the estimate for the kitchen. '.repeat(40)}\n\n`;
    const part = await zipOf(path.join(dir, 'takeout-20250106T100000Z-001.zip'), {
      'Takeout/Mail/All mail Including Spam and Trash.mbox': [1, 2, 3].map(message).join(''),
      'Takeout/Drive/plan.txt': 'The renovation plan: kitchen first, then the bathroom.\n',
      'Takeout/Drive/budget.txt': 'Budget line for the renovation.\n'.repeat(400),
    });
    damageZipMember(part, 'Takeout/Mail/All mail Including Spam and Trash.mbox', { garble: true });
    damageZipMember(part, 'Takeout/Drive/budget.txt', { garble: true });

    const outcome = await importInto(stack, 'takeout', part, 'damaged');
    assert.equal(outcome.error, undefined, 'the run goes on past damaged members');
    assertAccounted(outcome.summary);
    assert.equal(outcome.summary.run.created, 1, 'plan.txt');
    assert.equal(outcome.summary.run.rejected, 2);
    for (const { reason } of outcome.summary.rejected)
      assert.match(reason, /\(in takeout-20250106T100000Z-001\.zip\) is damaged after \d+ bytes/);
    const keys = outcome.summary.rejected.flatMap((r) => r.examples).sort();
    assert.deepEqual(keys, ['Drive/budget.txt', 'Mail/All mail Including Spam and Trash.mbox']);
  });

  test('a message moved to Spam in a newer export is marked spam then, and hidden from agents', async () => {
    const dir = path.join(stack.env.home, 'spam-exports');
    fs.mkdirSync(dir);
    const mbox = (labels: string) =>
      `From 2001@xxx Mon Jan 06 10:00:00 +0000 2025\nX-GM-THRID: 2001\nX-Gmail-Labels: ${labels}\n` +
      `From: offers@example.net\nTo: me@example.com\nSubject: Cheap watches\nMessage-ID: <watches@example.net>\n` +
      `Date: Mon, 6 Jan 2025 10:00:00 +0000\n\nBuy now.\n\n`;
    const exported = async (name: string, labels: string) =>
      zipOf(path.join(dir, `${name}.zip`), { 'Takeout/Mail/All mail Including Spam and Trash.mbox': mbox(labels) });
    const first = await importInto(stack, 'takeout', await exported('takeout-a', 'Inbox,Unread'), 'spam-check');
    assert.equal(first.summary.run.created, 1);
    const spamView = async () =>
      (await stack.owner.call(MailList, { view: 'spam', account: 'import:takeout:spam-check', limit: 10 })).messages;
    assert.deepEqual(await spamView(), []);

    const second = await importInto(stack, 'takeout', await exported('takeout-b', 'Spam,Unread'), 'spam-check');
    assert.equal(second.summary.run.updated, 1);
    await waitUntil(async () => (await spamView()).length === 1, 'the message in the spam view');
    const [message] = await spamView();
    const item = await stack.owner.call(ItemsGet, { id: message!.id });
    assert.equal(item.spam, true);
  });

  test("Google Keep's notes: dated when last edited, labelled with their Keep labels", async () => {
    const root = path.join(stack.env.home, 'takeout-keep');
    write(root, {
      'Takeout/Keep/Groceries.html': '<html><head><title>Groceries</title></head><body>Milk and flour.</body></html>',
      'Takeout/Keep/Groceries.json': JSON.stringify({
        title: 'Groceries',
        isTrashed: false,
        labels: [{ name: 'Home' }],
        userEditedTimestampUsec: 1617184112345000,
      }),
    });
    const first = await importInto(stack, 'takeout', root, 'keep');
    assertAccounted(first.summary, 2);
    assert.deepEqual([first.summary.run.created, first.summary.run.skipped], [1, 1]);
    const bus = await Bus.connect(stack.env.config.natsUrl, 'keep-test');
    let logged: { id: string; seq: number } | undefined;
    try {
      for await (const { seq, event } of readLog(bus, { filter: 'memex.evt.item.ingested.>', untilCaughtUp: true }))
        if ((event.data as { title?: string }).title === 'Groceries')
          logged = { id: (event.data as { id: string }).id, seq };
    } finally {
      await bus.close();
    }
    const item = await stack.owner.call(ItemsGet, { id: logged!.id, min_seq: logged!.seq });
    // Before: dated when the export was made, with no labels.
    assert.deepEqual([item.occurred_at, item.labels], ['2021-03-31T09:48:32.345Z', ['keep:Home']]);

    // Relabelled in Keep, exported again: the same item, with the labels the newer export gives.
    write(root, {
      'Takeout/Keep/Groceries.json': JSON.stringify({
        title: 'Groceries',
        isTrashed: false,
        labels: [{ name: 'Home' }, { name: 'Shopping' }],
        userEditedTimestampUsec: 1617184112345000,
      }),
    });
    const second = await importInto(stack, 'takeout', root, 'keep');
    assert.deepEqual([second.summary.run.updated, second.summary.run.created], [1, 0]);
    const relabelled = await stack.owner.call(ItemsGet, { id: logged!.id, min_seq: await lastSeq(stack) });
    assert.deepEqual([relabelled.revision, [...relabelled.labels].sort()], [2, ['keep:Home', 'keep:Shopping']]);
  });
});
