import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { Ingest } from '@memex/contracts';
import { createDatabase } from '@memex/db';
import { ServiceHost } from '@memex/runtime';
import { debianSourceTree, sharedFile, sharedSkip } from '@memex/testing';
import { b64, startIngest } from '../testing/service.js';
import type { IngestDatabase } from './schema.js';

const notmuchMissing = spawnSync('notmuch', ['--version']).error
  ? 'notmuch is not installed (apt-get install notmuch)'
  : false;

/** The messages of an mbox whose separators are `From ` lines followed by a header field. */
function splitMbox(file: string): Buffer[] {
  const text = fs.readFileSync(file, 'latin1');
  return text
    .split(/\n(?=From [^\n]*\n[\x21-\x39\x3b-\x7e]+:)/)
    .map((chunk) => Buffer.from(chunk.replace(/^From [^\n]*\n/, ''), 'latin1'));
}

function mail(id: string, refs: { references?: string[]; inReplyTo?: string } = {}, subject = id): Buffer {
  const headers = [
    `From: Dev <dev@example.org>`,
    `To: list@example.org`,
    `Subject: ${subject}`,
    `Date: Tue, 1 Mar 2011 10:00:00 +0000`,
    `Message-ID: <${id}@gen>`,
    ...(refs.references ? [`References: ${refs.references.map((r) => `<${r}@gen>`).join(' ')}`] : []),
    ...(refs.inReplyTo ? [`In-Reply-To: <${refs.inReplyTo}@gen>`] : []),
  ];
  return Buffer.from(`${headers.join('\r\n')}\r\n\r\n${subject}\r\n`);
}

/**
 * A generated list archive with what splits threads in real ones, in arrival order: a 100-patch
 * series whose replies' mailers trimmed References to the parent alone (seen in LKML and git's
 * list: git send-email threads on the cover letter, Outlook and old Eudora keep one id);
 * replies to a root that was never archived (ghosts); a References loop (two broken clients
 * naming each other, JWZ's test case); replies that arrive before their parents; and a middle
 * message that arrives last and joins two halves that had no id in common.
 */
function generatedArchive(): Buffer[] {
  const out: Buffer[] = [];
  out.push(mail('series-0', {}, '[PATCH 0/100] cover letter'));
  for (let i = 1; i <= 100; i++)
    out.push(mail(`series-${i}`, { references: ['series-0'], inReplyTo: 'series-0' }, `[PATCH ${i}/100]`));
  for (let i = 1; i <= 100; i += 3) {
    out.push(mail(`review-${i}`, { references: [`series-${i}`], inReplyTo: `series-${i}` }, `Re: [PATCH ${i}/100]`));
    out.push(mail(`ack-${i}`, { inReplyTo: `review-${i}` }, `Re: [PATCH ${i}/100]`));
  }
  for (let i = 0; i < 20; i++)
    out.push(mail(`orphan-${i}`, { references: ['never-archived-root', `orphan-${i - 1}`] }, 'Re: lost root'));
  out.push(mail('loop-a', { references: ['loop-b'] }), mail('loop-b', { references: ['loop-a'] }));
  // Arrival out of order: grandchild, then child, then root.
  out.push(
    mail('late-3', { references: ['late-1', 'late-2'] }),
    mail('late-2', { references: ['late-1'] }),
    mail('late-1'),
  );
  // Two halves with no id in common, joined when the middle arrives last.
  out.push(
    mail('half-root'),
    mail('half-leaf', { references: ['half-middle'] }),
    mail('half-middle', { references: ['half-root'] }),
  );
  for (let i = 0; i < 30; i++) out.push(mail(`single-${i}`));
  return out;
}

/**
 * Every message of the shared corpus's mail (mail-parsing suites' .eml files and mboxes, and
 * SpamAssassin's test mail: decades of MUA output, broken headers, replies to messages that are
 * not there), read in place, in a stable order.
 */
function corpusMessages(): Array<{ name: string; bytes: Buffer }> {
  const root = sharedFile('corpus/mail');
  const names = (fs.readdirSync(root, { recursive: true }) as string[])
    .filter((name) => fs.statSync(path.join(root, name)).isFile())
    .sort();
  return names.flatMap((name) =>
    name.endsWith('.mbox')
      ? splitMbox(path.join(root, name)).map((bytes, i) => ({ name: `${name}#${i + 1}`, bytes }))
      : [{ name, bytes: fs.readFileSync(path.join(root, name)) }],
  );
}

/**
 * notmuch's threads over the same messages, as sets of message numbers (each message is a file
 * named by its number): comparing messages rather than ids leaves each side its own reading of
 * odd Message-IDs (comments, 8-bit bytes, none at all). A file notmuch takes for no mail is in
 * no thread.
 */
function notmuchThreads(dir: string, messages: Buffer[]): number[][] {
  const maildir = path.join(dir, 'mail');
  for (const sub of ['cur', 'new', 'tmp']) fs.mkdirSync(path.join(maildir, sub), { recursive: true });
  messages.forEach((bytes, i) => fs.writeFileSync(path.join(maildir, 'cur', `${i}.gen:2,S`), bytes));
  const config = path.join(dir, 'notmuch-config');
  fs.writeFileSync(
    config,
    `[database]\npath=${maildir}\n[new]\ntags=\n[user]\nname=test\nprimary_email=test@example.org\n`,
  );
  const env = { ...process.env, NOTMUCH_CONFIG: config };
  const notmuch = (...args: string[]) =>
    execFileSync('notmuch', args, { env, encoding: 'utf8', maxBuffer: 64 << 20, stdio: ['ignore', 'pipe', 'ignore'] });
  notmuch('new', '--quiet');
  const threads = notmuch('search', '--output=threads', '*').split('\n').filter(Boolean);
  return threads.map((thread) =>
    notmuch('search', '--output=files', thread)
      .split('\n')
      .filter(Boolean)
      .map((file) => Number(path.basename(file).split('.')[0])),
  );
}

/** Our threads as sets of message numbers: each message's item, the item's thread. */
function partition(ids: Array<string | undefined>, rows: Array<{ item_id: string; thread_key: string }>): number[][] {
  const threadOf = new Map(rows.map((row) => [row.item_id, row.thread_key]));
  const byThread = new Map<string, number[]>();
  ids.forEach((id, i) => {
    const key = id === undefined ? undefined : threadOf.get(id);
    if (key !== undefined) byThread.set(key, [...(byThread.get(key) ?? []), i]);
  });
  return [...byThread.values()];
}

/**
 * notmuch's threads with the files ingest found to be one message joined: identity is not
 * threading. Two files without a Message-ID and with the same sender, date, subject and text
 * (the test suites' variants of one message) are one item here and two messages to notmuch,
 * which names a message without an id by a hash of its file.
 */
function asOneMessage(threads: number[][], ids: Array<string | undefined>): number[][] {
  const threadOf = new Map<number, number>();
  threads.forEach((thread, t) => thread.forEach((i) => threadOf.set(i, t)));
  const parent = threads.map((_, t) => t);
  const root = (t: number): number => (parent[t] === t ? t : (parent[t] = root(parent[t]!)));
  const firstOfItem = new Map<string, number>();
  ids.forEach((id, i) => {
    const t = threadOf.get(i);
    if (id === undefined || t === undefined) return;
    const first = firstOfItem.get(id);
    if (first === undefined) firstOfItem.set(id, t);
    else parent[root(t)] = root(first);
  });
  const joined = new Map<number, number[]>();
  threads.forEach((thread, t) => joined.set(root(t), [...(joined.get(root(t)) ?? []), ...thread]));
  return [...joined.values()];
}

/** Threads over the messages both sides read, comparable as text. */
const sorted = (threads: number[][], both: Set<number>) =>
  threads
    .map((thread) => thread.filter((i) => both.has(i)).sort((a, b) => a - b))
    .filter((thread) => thread.length > 0)
    .map((thread) => thread.join(' '))
    .sort();

/**
 * notmuch's own test corpora, from its Debian source package: real LKML mail (a 100-message
 * patch series and a 48-message one whose mailers trimmed References — the threads that split
 * into 9 and 16 before threading followed every id), early notmuch-list mail, and its threading
 * cases. Fetched once per machine and read in place (see debianSourceTree).
 */
const notmuchSource = await debianSourceTree({
  name: 'notmuch',
  version: '0.39',
  file: 'notmuch_0.39.orig.tar.xz',
  sha256: 'b88bb02a76c46bad8d313fd2bb4f8e39298b51f66fcbeb304d9f80c3eef704e3',
  members: ['notmuch-0.39/test/corpora'],
});

/** Every file of some of notmuch's corpora, in a stable order. */
function notmuchCorpusMessages(dir: string, corpora: string[]): Array<{ name: string; bytes: Buffer }> {
  return corpora.flatMap((corpus) => {
    const root = path.join(dir, 'notmuch-0.39/test/corpora', corpus);
    return (fs.readdirSync(root, { recursive: true }) as string[])
      .filter((name) => fs.statSync(path.join(root, name)).isFile())
      .sort()
      .map((name) => ({ name: `${corpus}/${name}`, bytes: fs.readFileSync(path.join(root, name)) }));
  });
}

/**
 * Ours and notmuch's threads over the same messages, ingested 100 at a time in arrival order into
 * a fresh ingest service.
 */
async function threadsBeside(messages: Array<{ name: string; bytes: Buffer }>) {
  const h = await startIngest();
  const ids: Array<string | undefined> = [];
  let seq = 0;
  for (let i = 0; i < messages.length; i += 100) {
    const batch = messages.slice(i, i + 100).map((message, j) => ({
      type: 'message/rfc822',
      data: b64(message.bytes),
      source: { kind: 'mbox', id: 'threads' },
      external_id: `m${i + j}`,
    }));
    const answer = await h.call(Ingest, { items: batch });
    // A file that is no message (the suites' broken inputs) is rejected: in no thread.
    ids.push(...answer.results.map((result) => (result.status === 'rejected' ? undefined : result.id)));
    seq = answer.seq;
  }
  const db = createDatabase<IngestDatabase>(h.env.config.databaseUrl, { schema: 'ingest' });
  try {
    await h.app.get(ServiceHost).projector!.waitFor(seq, 60_000);
    const ours = partition(ids, await db.selectFrom('messages').select(['item_id', 'thread_key']).execute());
    const dir = fs.mkdtempSync(path.join(h.env.home, 'notmuch-'));
    const theirs = asOneMessage(
      notmuchThreads(
        dir,
        messages.map((m) => m.bytes),
      ),
      ids,
    );
    const read = (threads: number[][]) => new Set(threads.flat());
    const both = new Set([...read(ours)].filter((i) => read(theirs).has(i)));
    // The threads one side has and the other has not, each message by its file.
    const [a, b] = [sorted(ours, both), sorted(theirs, both)];
    const named = (threads: string[]) => threads.map((t) => t.split(' ').map((i) => messages[Number(i)]!.name));
    return {
      ours,
      both,
      readBy: `${both.size} of ${messages.length} messages read by both (ours ${read(ours).size}, notmuch ${read(theirs).size})`,
      threads: a,
      difference: {
        onlyOurs: named(a.filter((t) => !b.includes(t))),
        onlyNotmuch: named(b.filter((t) => !a.includes(t))),
      },
    };
  } finally {
    await db.destroy();
    await h.stop();
  }
}

describe('mail threads equal notmuch’s', { skip: notmuchMissing }, () => {
  test(
    'every message of the shared corpus (list mail, Netscape’s mbox, test suites’ .eml) and a generated archive of the troubles, in arrival order',
    { skip: sharedSkip('corpus/mail') },
    async () => {
      const corpus = corpusMessages();
      assert.ok(corpus.length >= 400, `the corpus has ${corpus.length} messages`);
      const generated = generatedArchive().map((bytes, i) => ({ name: `generated#${i + 1}`, bytes }));
      const threads = await threadsBeside([...corpus, ...generated]);
      assert.ok(threads.both.size >= corpus.length * 0.9, threads.readBy);
      assert.ok(
        threads.ours.some((t) => t.length >= 100),
        'the patch series is one thread',
      );
      assert.deepEqual(threads.difference, { onlyOurs: [], onlyNotmuch: [] });
      assert.ok(threads.threads.length > 300, `${threads.threads.length} threads`);
    },
  );

  test(
    'a real list archive with long threads: notmuch’s LKML corpus (patch series of 100 and 48 messages), its notmuch-list mail and threading cases',
    { skip: 'skip' in notmuchSource ? notmuchSource.skip : false },
    async () => {
      const messages = notmuchCorpusMessages((notmuchSource as { dir: string }).dir, ['lkml', 'default', 'threading']);
      assert.ok(messages.length >= 250, `${messages.length} files`);
      const threads = await threadsBeside(messages);
      assert.ok(threads.both.size >= messages.length * 0.8, threads.readBy);
      const lengths = threads.ours.map((t) => t.length).sort((x, y) => y - x);
      assert.ok(
        lengths[0]! >= 100 && lengths[1]! >= 48,
        `the longest threads have ${lengths.slice(0, 3).join(', ')} files`,
      );
      assert.deepEqual(threads.difference, { onlyOurs: [], onlyNotmuch: [] });
    },
  );
});

describe('Outlook conversations', () => {
  test('a reply Exchange sent without References or In-Reply-To joins its thread by Thread-Index; another conversation stays apart', async () => {
    // Thread-Index: 22 bytes (when the conversation began, its GUID), then 5 bytes per reply.
    const start = Buffer.concat([Buffer.from([0x01, 0xd9, 0x1a, 0x2b, 0x3c, 0x4d]), Buffer.alloc(16, 0x5e)]);
    const other = Buffer.concat([Buffer.from([0x01, 0xd9, 0x1a, 0x2b, 0x3c, 0x4d]), Buffer.alloc(16, 0x6f)]);
    const outlook = (id: string, subject: string, index: Buffer) =>
      Buffer.from(
        `From: Ann <ann@corp.example>\r\nTo: bob@corp.example\r\nSubject: ${subject}\r\n` +
          `Date: Tue, 1 Mar 2011 10:00:00 +0000\r\nMessage-ID: <${id}@corp.example>\r\n` +
          `Thread-Topic: Budget\r\nThread-Index: ${index.toString('base64')}\r\n\r\n${subject}\r\n`,
      );
    const h = await startIngest();
    const db = createDatabase<IngestDatabase>(h.env.config.databaseUrl, { schema: 'ingest' });
    try {
      const messages = [
        outlook('root', 'Budget', start),
        outlook('reply', 'RE: Budget', Buffer.concat([start, Buffer.from([0, 0, 0, 0x12, 0x34])])),
        outlook('again', 'RE: Budget', Buffer.concat([start, Buffer.from([0, 0, 0, 0x12, 0x34, 0, 0, 1, 0x56, 0x78])])),
        outlook('new', 'Budget', other),
      ];
      const answer = await h.call(Ingest, {
        items: messages.map((bytes, i) => ({
          type: 'message/rfc822',
          data: b64(bytes),
          source: { kind: 'mbox', id: 'outlook' },
          external_id: `o${i}`,
        })),
      });
      await h.app.get(ServiceHost).projector!.waitFor(answer.seq, 60_000);
      const rows = await db.selectFrom('messages').select(['item_id', 'thread_key']).execute();
      const keyOf = (i: number) => rows.find((row) => row.item_id === answer.results[i]!.id)?.thread_key;
      assert.ok(keyOf(0));
      assert.equal(keyOf(1), keyOf(0));
      assert.equal(keyOf(2), keyOf(0));
      assert.notEqual(keyOf(3), keyOf(0));
    } finally {
      await db.destroy();
      await h.stop();
    }
  });
});
