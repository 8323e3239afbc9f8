import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { Ingest } from '@memex/contracts';
import { createDatabase } from '@memex/db';
import { ServiceHost } from '@memex/runtime';
import { sharedFile, sharedSkip } from '@memex/testing';
import { b64, startIngest, type IngestHarness } from '../testing/service.js';
import type { IngestDatabase } from '../items/schema.js';

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

/** notmuch's threads over the same messages: sets of Message-IDs (lowercase), as sorted lists. */
function notmuchThreads(dir: string, messages: Buffer[]): string[][] {
  const maildir = path.join(dir, 'mail');
  for (const sub of ['cur', 'new', 'tmp']) fs.mkdirSync(path.join(maildir, sub), { recursive: true });
  messages.forEach((bytes, i) => fs.writeFileSync(path.join(maildir, 'cur', `${1300000000 + i}.M${i}.gen:2,S`), bytes));
  const config = path.join(dir, 'notmuch-config');
  fs.writeFileSync(
    config,
    `[database]\npath=${maildir}\n[new]\ntags=\n[user]\nname=test\nprimary_email=test@example.org\n`,
  );
  const env = { ...process.env, NOTMUCH_CONFIG: config };
  const notmuch = (...args: string[]) => execFileSync('notmuch', args, { env, encoding: 'utf8', maxBuffer: 64 << 20 });
  notmuch('new', '--quiet');
  const threads = notmuch('search', '--output=threads', '*').split('\n').filter(Boolean);
  return threads.map((thread) =>
    notmuch('search', '--output=messages', thread)
      .split('\n')
      .filter(Boolean)
      .map((id) => id.replace(/^id:/, '').toLowerCase())
      .sort(),
  );
}

function partition(rows: Array<{ message_id: string | null; thread_key: string }>): string[][] {
  const byThread = new Map<string, string[]>();
  for (const row of rows) {
    if (row.message_id === null) continue;
    byThread.set(row.thread_key, [...(byThread.get(row.thread_key) ?? []), row.message_id]);
  }
  return [...byThread.values()].map((ids) => [...new Set(ids)].sort());
}

const sorted = (threads: string[][]) => threads.map((t) => t.join(' ')).sort();

describe(
  'mail threads equal notmuch’s',
  { skip: notmuchMissing || sharedSkip('corpus/mail/mail-box-perl/mbox.src.mbox') },
  () => {
    let h: IngestHarness;
    before(async () => {
      h = await startIngest();
    });
    after(async () => h.stop());

    test('real list mail (Mail::Box’s and Netscape’s mboxes) and a generated archive of the troubles, in arrival order', async () => {
      const messages = [
        ...splitMbox(sharedFile('corpus/mail/mail-box-perl/mbox.src.mbox')),
        ...splitMbox(sharedFile('corpus/mail/mimekit/netscape-1996-content-length.mbox')),
        ...generatedArchive(),
      ];
      let seq = 0;
      for (let i = 0; i < messages.length; i += 100) {
        const batch = messages.slice(i, i + 100).map((bytes, j) => ({
          type: 'message/rfc822',
          data: b64(bytes),
          source: { kind: 'mbox', id: 'threads' },
          external_id: `m${i + j}`,
        }));
        const answer = await h.call(Ingest, { items: batch });
        assert.deepEqual(
          answer.results.filter((r) => r.status === 'rejected'),
          [],
        );
        seq = answer.seq;
      }
      const db = createDatabase<IngestDatabase>(h.env.config.databaseUrl, { schema: 'ingest' });
      try {
        await h.app.get(ServiceHost).projector!.waitFor(seq, 60_000);
        const ours = partition(await db.selectFrom('messages').select(['message_id', 'thread_key']).execute());
        // A message without a Message-ID is a thread of its own in both; notmuch names it by a hash.
        const all = notmuchThreads(fs.mkdtempSync(path.join(h.env.home, 'notmuch-')), messages);
        const theirs = all.filter((thread) => !thread.some((id) => id.startsWith('notmuch-sha1-')));
        assert.ok(
          all
            .filter((thread) => thread.some((id) => id.startsWith('notmuch-sha1-')))
            .every((thread) => thread.length === 1),
        );
        assert.ok(
          ours.some((t) => t.length >= 100),
          'the patch series is one thread',
        );
        assert.deepEqual(sorted(ours), sorted(theirs));
      } finally {
        await db.destroy();
      }
    });
  },
);
