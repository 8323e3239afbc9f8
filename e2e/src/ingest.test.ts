import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import {
  AdminReplay,
  Ingest,
  ItemsContent,
  ItemsDelete,
  ItemsGet,
  MailAccounts,
  MailFlags,
  MailList,
  MailThread,
  MemexError,
  TokensCreate,
  Types,
  type ParamsOf,
} from '@memex/contracts';
import { Bus, readLog } from '@memex/bus';
import { sharedSkip } from '@memex/testing';
import { startStack, type TestStack } from './stack.js';
import { snapshotSchema } from './snapshot.js';
import { fixtureMail, mailItem, mime, type IngestItem } from './mail.js';

/** KOI8-R and windows-1252 bytes, checked against the platform's decoders so the test cannot lie about them. */
function bytes(hex: number[], charset: string, expected: string): Buffer {
  const buffer = Buffer.from(hex);
  assert.equal(new TextDecoder(charset).decode(buffer), expected);
  return buffer;
}

const alternativeWithAttachment = mime(
  [
    ['From', 'Ann Example <ann@example.com>'],
    ['To', 'Bob <bob@example.org>, carol@example.net'],
    ['Cc', '"Dee, D." <dee@example.com>'],
    ['Subject', 'Agenda for Thursday'],
    ['Date', 'Thu, 03 Dec 2009 09:15:00 +0100'],
    ['Message-ID', '<agenda-1@example.com>'],
    ['MIME-Version', '1.0'],
    ['Content-Type', 'multipart/mixed; boundary="outer"'],
  ],
  [
    '--outer',
    'Content-Type: multipart/alternative; boundary="inner"',
    '',
    '--inner',
    'Content-Type: text/plain; charset=utf-8',
    '',
    'The plain agenda: budget, hiring.',
    '--inner',
    'Content-Type: text/html; charset=utf-8',
    '',
    '<p>The <b>HTML</b> agenda: budget, hiring.</p>',
    '--inner--',
    '--outer',
    'Content-Type: text/plain; name="minutes.txt"',
    'Content-Disposition: attachment; filename="minutes.txt"',
    'Content-Transfer-Encoding: base64',
    '',
    Buffer.from('Minutes: the budget passed.').toString('base64'),
    '--outer--',
    '',
  ].join('\n'),
);

const encodedWords = mime(
  [
    ['From', `=?KOI8-R?B?${bytes([0xe9, 0xd7, 0xc1, 0xce], 'koi8-r', 'Иван').toString('base64')}?= <ivan@example.ru>`],
    ['To', 'ann@example.com'],
    ['Subject', '=?ISO-8859-1?Q?Caf=E9_cr=E8me?= and =?UTF-8?B?5pel5pys?='],
    ['Date', 'Fri, 04 Dec 2009 10:00:00 +0000'],
    ['Message-ID', '<encoded-1@example.ru>'],
    ['Content-Type', 'text/plain; charset=windows-1252'],
    ['Content-Transfer-Encoding', '8bit'],
  ],
  Buffer.concat([
    Buffer.from('A '),
    bytes([0x6e, 0x61, 0xef, 0x76, 0x65], 'windows-1252', 'naïve'),
    Buffer.from(' fa'),
    bytes([0xe7], 'windows-1252', 'ç'),
    Buffer.from('ade.\r\n'),
  ]),
);

function threadMessage(id: string, subject: string, refs: string[], day: number): Buffer {
  return mime(
    [
      ['From', day % 2 ? 'ann@example.com' : 'bob@example.org'],
      ['To', day % 2 ? 'bob@example.org' : 'ann@example.com'],
      ['Subject', subject],
      ['Date', `Mon, ${String(day).padStart(2, '0')} Nov 2009 08:00:00 +0000`],
      ['Message-ID', `<${id}>`],
      ...(refs.length
        ? ([
            ['In-Reply-To', `<${refs.at(-1)}>`],
            ['References', refs.map((r) => `<${r}>`).join(' ')],
          ] as Array<[string, string]>)
        : []),
    ],
    `${subject} (message ${id})\n`,
  );
}

const noMessageId = (body: string) =>
  mime(
    [
      ['From', 'printer@example.com'],
      ['To', 'ann@example.com'],
      ['Subject', 'Scan ready'],
      ['Date', 'Sat, 05 Dec 2009 12:00:00 +0000'],
    ],
    body,
  );

// Later steps build on the real messages of the first: without the shared corpus none can run.
describe(
  'ingest through the gateway: messy real-world mail, mail views, bad input, deletion',
  { skip: sharedSkip('corpus/mail') },
  () => {
    let stack: TestStack;
    let seq = 0;
    const send = async (items: IngestItem[]) => {
      const result = await stack.owner.call(Ingest, { items });
      seq = Math.max(seq, result.seq);
      return result.results;
    };
    const list = (params: Omit<ParamsOf<typeof MailList>, 'min_seq'>) =>
      stack.owner.call(MailList, { ...params, min_seq: seq });

    before(async () => {
      stack = await startStack(['ingest']);
    });
    after(async () => stack.stop());

    test('memex.types answers through the gateway', async () => {
      const { handlers } = await stack.owner.call(Types, {});
      assert.deepEqual(handlers.map((h) => h.name).sort(), [
        'agent-work',
        'calendar',
        'contacts',
        'document',
        'mail',
        'photo',
        'video-audio',
      ]);
    });

    test('messy real-world mail goes in: alternatives with attachments, charsets, encoded words, broken archives', async () => {
      const results = await send([
        mailItem(alternativeWithAttachment, 'archive-2009', 'a.mbox#0', { folder: 'INBOX', read: false }),
        mailItem(encodedWords, 'archive-2009', 'a.mbox#1', { folder: 'Work', starred: true }),
        mailItem(fixtureMail('mikel-mail/multi_charset/japanese_iso_2022.eml'), 'archive-2009', 'a.mbox#2'),
        mailItem(fixtureMail('spamassassin-testdata/nice/cjk/iso-2022-jp.1.eml'), 'archive-2009', 'a.mbox#3'),
        mailItem(fixtureMail('mikel-mail/attachment_emails/attachment_pdf.eml'), 'archive-2009', 'a.mbox#4'),
        mailItem(fixtureMail('mime4j-testmsgs/missing-boundary.eml'), 'archive-2009', 'a.mbox#5'),
      ]);
      assert.deepEqual(
        results.map((r) => r.status),
        ['created', 'created', 'created', 'created', 'created', 'created'],
      );
      const [alternative, encoded, japanese, sjis, pdf] = await Promise.all(
        results.slice(0, 5).map((r) => stack.owner.call(ItemsGet, { id: r.id!, min_seq: seq })),
      );

      assert.equal(alternative!.text, 'The plain agenda: budget, hiring.');
      assert.deepEqual(alternative!.meta['cc'], [{ name: 'Dee, D.', address: 'dee@example.com' }]);
      const [minutes] = alternative!.meta['attachments'] as Array<{ id: string; filename: string }>;
      assert.equal(minutes!.filename, 'minutes.txt');
      const minutesItem = await stack.owner.call(ItemsGet, { id: minutes!.id });
      assert.equal(minutesItem.kind, 'attachment');
      assert.equal(minutesItem.parent_id, alternative!.id);
      assert.equal(minutesItem.text, 'Minutes: the budget passed.');
      const raw = await stack.owner.call(ItemsContent, { id: alternative!.id });
      assert.deepEqual(Buffer.from(raw.data, 'base64'), alternativeWithAttachment);

      assert.equal(encoded!.title, 'Café crème and 日本');
      assert.deepEqual(encoded!.meta['from'], [{ name: 'Иван', address: 'ivan@example.ru' }]);
      assert.equal(encoded!.text.trim(), 'A naïve façade.');
      assert.equal(japanese!.title, 'まみむめも');
      assert.equal(japanese!.text.trim(), 'すみません。');
      const sjisChild = (sjis!.meta['attachments'] as Array<{ id: string }>)[0]!;
      assert.match(
        (await stack.owner.call(ItemsGet, { id: sjisChild.id })).text,
        /文字コード\(charset\)\s+: Shift_JIS/,
      );
      assert.deepEqual(
        (pdf!.meta['attachments'] as Array<{ filename: string }>).map((a) => a.filename),
        ['broken.pdf'],
      );
      assert.ok(
        results[5]!.warnings?.some((w) => /truncated|boundary/i.test(w)),
        `warnings: ${results[5]!.warnings}`,
      );
    });

    test('threads survive a missing middle message; no Message-ID, two sources and a Spam folder are handled', async () => {
      const [root, , last] = [
        threadMessage('t-root@example.com', 'Offsite', [], 1),
        threadMessage('t-middle@example.com', 'Re: Offsite', ['t-root@example.com'], 2),
        threadMessage('t-last@example.com', 'Re: Re: Offsite', ['t-root@example.com', 't-middle@example.com'], 3),
      ];
      const sent = await send([
        mailItem(last!, 'archive-2009', 't#3'),
        mailItem(root!, 'archive-2009', 't#1'),
        mailItem(noMessageId('Your scan is attached.\n'), 'archive-2009', 'scan#1'),
        mailItem(noMessageId('Your other scan is attached.\n'), 'archive-2009', 'scan#2'),
        mailItem(
          mime(
            [
              ['From', 'winner@lottery.example'],
              ['To', 'ann@example.com'],
              ['Subject', 'You won'],
              ['Message-ID', '<spam-1@lottery.example>'],
            ],
            'Claim now.\n',
          ),
          'archive-2009',
          'junk#1',
          { folder: 'Junk' },
        ),
      ]);
      assert.deepEqual(
        sent.map((r) => r.status),
        ['created', 'created', 'created', 'created', 'created'],
      );
      // The same messages from another archive (a Maildir copy): duplicates of the items there are.
      const copies = await send([
        mailItem(root!, 'laptop', 'INBOX/1', { folder: 'INBOX' }, 'maildir'),
        mailItem(noMessageId('Your scan is attached.\n'), 'laptop', 'INBOX/2', {}, 'maildir'),
      ]);
      assert.deepEqual(copies, [
        { status: 'duplicate', id: sent[1]!.id },
        { status: 'duplicate', id: sent[2]!.id },
      ]);

      const thread = await stack.owner.call(MailThread, { id: sent[0]!.id!, min_seq: seq });
      assert.deepEqual(
        thread.messages.map((m) => m.subject),
        ['Offsite', 'Re: Re: Offsite'],
      );
      // A thread keeps the key of its first message in the log (the reply arrived before its root).
      assert.equal(thread.thread_key, 't-last@example.com');
      assert.match(thread.messages[1]!.text, /message t-last/);

      const spam = await stack.owner.call(ItemsGet, { id: sent[4]!.id! });
      assert.equal(spam.spam, true);
      const spamView = await list({ view: 'spam' });
      assert.deepEqual(
        spamView.messages.map((m) => m.id),
        [sent[4]!.id],
      );
      assert.ok(!(await list({ view: 'all', limit: 500 })).messages.some((m) => m.id === sent[4]!.id));

      // An agent allowed mail sees mail, never spam.
      const token = await stack.owner.call(TokensCreate, { labels: ['mail'] });
      const agent = stack.clientFor(token.token);
      assert.equal((await agent.call(ItemsGet, { id: sent[1]!.id!, min_seq: token.seq })).title, 'Offsite');
      await assert.rejects(
        agent.call(ItemsGet, { id: sent[4]!.id! }),
        (error: MemexError) => error.code === 'not_found',
      );
      assert.deepEqual((await agent.call(MailList, { view: 'spam' })).messages, []);
      const other = await stack.owner.call(TokensCreate, { labels: ['research'] });
      assert.deepEqual(
        (await stack.clientFor(other.token).call(MailList, { view: 'all', min_seq: other.seq })).messages,
        [],
      );
    });

    test('mail views: accounts, inbox and labels, newest first, paged by a stable cursor; flags are events', async () => {
      const { accounts } = await stack.owner.call(MailAccounts, { min_seq: seq });
      const archive = accounts.find((a) => a.account === 'import:mbox:archive-2009')!;
      assert.equal(archive.origin, 'imported');
      assert.equal(archive.messages, 11);
      assert.equal(archive.unread, 1);
      assert.ok(!accounts.some((a) => a.account === 'import:maildir:laptop'), 'the copies were duplicates');

      const all = await list({ view: 'all', limit: 500 });
      const dates = all.messages.map((m) => m.date);
      assert.deepEqual(dates, [...dates].sort().reverse(), 'newest first');
      const paged: string[] = [];
      let cursor: string | undefined;
      do {
        const page = await list({ view: 'all', limit: 3, ...(cursor ? { cursor } : {}) });
        paged.push(...page.messages.map((m) => m.id));
        cursor = page.next_cursor ?? undefined;
      } while (cursor);
      assert.deepEqual(
        paged,
        all.messages.map((m) => m.id),
      );

      const work = await list({ view: 'label', label: 'Work' });
      assert.deepEqual(
        work.messages.map((m) => m.subject),
        ['Café crème and 日本'],
      );
      assert.equal(work.messages[0]!.inbox, false);
      assert.equal(work.messages[0]!.starred, true);
      const agenda = all.messages.find((m) => m.subject === 'Agenda for Thursday')!;
      assert.deepEqual(
        (await list({ view: 'unread' })).messages.map((m) => m.id),
        [agenda.id],
      );
      assert.equal(agenda.attachments, 1);

      const flagged = await stack.owner.call(MailFlags, {
        ids: [agenda.id],
        read: true,
        starred: true,
        add_labels: ['Projects'],
        archived: true,
      });
      assert.equal(flagged.changed, 1);
      seq = Math.max(seq, flagged.seq);
      assert.deepEqual((await list({ view: 'unread' })).messages, []);
      assert.ok(!(await list({ view: 'inbox' })).messages.some((m) => m.id === agenda.id), 'archived');
      assert.deepEqual(
        (await list({ view: 'label', label: 'Projects' })).messages.map((m) => m.id),
        [agenda.id],
      );
      assert.ok((await list({ view: 'starred' })).messages.some((m) => m.id === agenda.id));
      const unchanged = await stack.owner.call(MailFlags, { ids: [agenda.id], read: true });
      assert.equal(unchanged.changed, 0);
      const trashed = await stack.owner.call(MailFlags, {
        ids: [agenda.id],
        trashed: true,
        remove_labels: ['Projects'],
      });
      seq = Math.max(seq, trashed.seq);
      assert.deepEqual(
        (await list({ view: 'trash' })).messages.map((m) => m.id),
        [agenda.id],
      );
      assert.deepEqual((await list({ view: 'label', label: 'Projects' })).messages, []);
      await assert.rejects(
        stack.owner.call(MailFlags, { ids: ['01ARZ3NDEKTSV4RRFFQ69G5FAV'], read: true }),
        /no message 01ARZ3NDEKTSV4RRFFQ69G5FAV/,
      );
    });

    test('bad input: every bad item is rejected with its reason and the rest of its batch goes in', async () => {
      const good = (n: number) =>
        mailItem(
          mime(
            [
              ['From', 'ann@example.com'],
              ['Subject', `good ${n}`],
              ['Message-ID', `<good-${n}@example.com>`],
            ],
            'fine\n',
          ),
          'bad-batch',
          `g${n}`,
        );
      const items: IngestItem[] = [
        good(1),
        mailItem(Buffer.from([0x00, 0xff, 0x13, 0x37, 0x42, 0x00, 0x9c, 0x88, 0x01]), 'bad-batch', 'garbage'),
        {
          type: 'application/x-frobnicate',
          data: Buffer.from('x').toString('base64'),
          source: { kind: 'mbox', id: 'bad-batch' },
        },
        { ...good(2), attributes: { colour: 'red' } },
        { ...good(3), attributes: { read: 'yes' } },
        { ...good(4), source: { kind: 'gmail', id: 'me@example.com' } },
        { ...good(5), data: 'bm90IGJhc2U2NA$$==' },
        { ...good(6), text: 'both' },
        { type: 'text/plain', source: { kind: 'folder' } },
        good(7),
      ];
      const results = await send(items);
      assert.equal(results.length, items.length);
      const reasons = results.map((r) => (r.status === 'rejected' ? r.reason : r.status));
      assert.equal(reasons[0], 'created');
      assert.match(reasons[1]!, /^not an RFC 822 message/);
      assert.match(reasons[2]!, /no handler for type "application\/x-frobnicate"/);
      assert.match(reasons[3]!, /unknown attribute "colour"/);
      assert.match(reasons[4]!, /attribute "read": expected boolean/);
      assert.match(reasons[5]!, /source.kind "gmail" is reserved/);
      assert.match(reasons[6]!, /data is not valid base64/);
      assert.match(reasons[7]!, /exactly one of data \(base64\), text or location/);
      assert.match(reasons[8]!, /exactly one of data \(base64\), text or location/);
      assert.equal(reasons[9], 'created');
      for (const i of [0, 9])
        assert.equal((await stack.owner.call(ItemsGet, { id: results[i]!.id!, min_seq: seq })).kind, 'email');
    });

    test('deletion: the message and its attachment are gone from the read model, the blobs and the log, also after a replay', async () => {
      const marker = 'Quokka-7731';
      const secret = mime(
        [
          ['From', 'ann@example.com'],
          ['To', 'bob@example.org'],
          ['Subject', `The ${marker} plan`],
          ['Message-ID', `<${marker}@example.com>`],
          ['Content-Type', 'multipart/mixed; boundary="b"'],
        ],
        `--b\nContent-Type: text/plain\n\nBody about ${marker}.\n--b\nContent-Type: text/plain; name="${marker}.txt"\nContent-Disposition: attachment; filename="${marker}.txt"\n\nAttached ${marker} details.\n--b--\n`,
      );
      const [created] = await send([mailItem(secret, 'archive-2009', 'secret#1', { folder: 'Secrets' })]);
      const id = created!.id!;
      const flagged = await stack.owner.call(MailFlags, { ids: [id], starred: true, add_labels: [marker] });
      const item = await stack.owner.call(ItemsGet, { id, min_seq: flagged.seq });
      const child = (item.meta['attachments'] as Array<{ id: string }>)[0]!.id;

      const deleted = await stack.owner.call(ItemsDelete, { id });
      assert.deepEqual(deleted.deleted, [id, child]);
      // item.ingested ×2, identity.claimed ×2, mail.flags_changed
      assert.equal(deleted.erased_events, 5);
      await assert.rejects(
        stack.owner.call(ItemsGet, { id, min_seq: deleted.seq }),
        (error: MemexError) => error.code === 'not_found',
      );
      await assert.rejects(
        stack.owner.call(ItemsGet, { id: child }),
        (error: MemexError) => error.code === 'not_found',
      );

      const bus = await Bus.connect(stack.config.natsUrl, 'deletion-test');
      const foundNowhere = async (when: string) => {
        const rows = JSON.stringify(await snapshotSchema(stack.config.databaseUrl, 'ingest'));
        assert.ok(!rows.includes(marker), `${when}: the ingest tables still mention it`);
        assert.ok(!rows.includes(id) || /tombstones/.test(rows), `${when}: the ingest tables still hold it`);
        for (const file of fs.readdirSync(stack.config.blobsDir, { recursive: true, encoding: 'utf8' })) {
          const full = path.join(stack.config.blobsDir, file);
          if (fs.statSync(full).isFile())
            assert.ok(!fs.readFileSync(full).includes(marker), `${when}: blob ${file} holds it`);
        }
        for await (const { event } of readLog(bus, { untilCaughtUp: true })) {
          assert.ok(!JSON.stringify(event).includes(marker), `${when}: a ${event.type} event in the log holds it`);
        }
        // Erased means overwritten: not even the stream's files on disk hold it.
        for (const file of fs.readdirSync(path.join(stack.env.home, 'nats'), { recursive: true, encoding: 'utf8' })) {
          const full = path.join(stack.env.home, 'nats', file);
          if (fs.statSync(full).isFile())
            assert.ok(!fs.readFileSync(full).includes(marker), `${when}: NATS file ${file} holds it`);
        }
      };
      try {
        await foundNowhere('after deletion');
        const replay = await stack.owner.call(AdminReplay, { projector: 'ingest' });
        assert.ok(replay.events > 0);
        await foundNowhere('after a replay');
        await assert.rejects(stack.owner.call(ItemsGet, { id }), (error: MemexError) => error.code === 'not_found');
        assert.ok(!(await list({ view: 'all', limit: 500 })).messages.some((m) => m.id === id));
      } finally {
        await bus.close();
      }
      // Its identity was released with it: imported again, it is a new item.
      const [again] = await send([mailItem(secret, 'archive-2009', 'secret#1')]);
      assert.equal(again!.status, 'created');
      assert.notEqual(again!.id, id);
      await assert.rejects(
        stack.owner.call(ItemsDelete, { id: child }),
        (error: MemexError) => error.code === 'not_found',
      );
    });
  },
);
