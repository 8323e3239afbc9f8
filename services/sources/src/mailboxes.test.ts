import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import path from 'node:path';
import { sql, type Kysely } from 'kysely';
import { SourceMailboxRead, SourcesAdd, SourcesGet, SourcesRescan, type DataOf } from '@memex/contracts';
import { readLog, typeFilter } from '@memex/bus';
import { waitUntil } from '@memex/testing';
import { watchedFolder } from './testing/watched-folder.js';

/** A message as Thunderbird keeps it in an mbox: its flags in the header, rewritten in place. */
const mail = (subject: string, status = '0001') =>
  `From - Mon Jan  4 10:00:00 2010\nSubject: ${subject}\nX-Mozilla-Status: ${status}\nX-Mozilla-Status2: 00000000\n` +
  `From: Ann <ann@example.com>\nTo: bob@example.com\nDate: Mon, 4 Jan 2010 10:00:00 +0000\n` +
  `Message-ID: <${subject}@example.com>\n\n${subject} body\n\n`;

interface MessageRow {
  item_id: string;
  subject: string;
  mail_labels: string[];
  inbox: boolean;
  read: boolean;
  starred: boolean;
  trashed: boolean;
}

/** A watched folder's messages as the mail views show them (ingest's schema, read as a check from outside). */
async function messagesOf(db: Kysely<Record<string, never>>, source: string): Promise<MessageRow[]> {
  const { rows } = await sql<MessageRow>`select item_id, subject, mail_labels, inbox, read, starred, trashed
    from messages where account = ${`import:folder:${source}`} order by subject`.execute(db);
  return rows;
}

/**
 * Thunderbird's Local Folders watched while Thunderbird works in them: an mbox per folder (no
 * extension, subfolders in `.sbd`), messages appended, marked read in place, deleted by a flag
 * until the folder is compacted, moved between folders, a Trash emptied to nothing.
 */
describe('a watched folder of mboxes', () => {
  // As a user runs it, with a grace before a message that went takes its item: a move's two
  // writes may reach the watcher apart, the deletion first (the grace has tests of its own below).
  const t = watchedFolder('memex-local-folders-', { goneGraceSeconds: 3 });
  let id: string;

  const read = (relative: string) => fs.readFile(path.join(t.dir, relative), 'utf8');
  /** Thunderbird's mark: the message's flags rewritten in place (the file keeps its size). */
  const mark = async (relative: string, subject: string, status: string) => {
    const text = await read(relative);
    const marked = text.replace(new RegExp(`(Subject: ${subject}\\nX-Mozilla-Status: )[0-9a-f]{4}`), `$1${status}`);
    assert.notEqual(marked, text);
    await t.write(relative, marked);
  };
  const messages = () => messagesOf(t.ingestDb, id);
  const subjects = async () => (await messages()).map((m) => m.subject);
  const rescan = () => t.h.call(SourcesRescan, { id });
  /** Each item and its revision: a message sent again would show as a new item or revision. */
  const revisions = async () => (await t.h.items(id)).map((item) => `${item.id}@${item.revision}`);

  /** Each message as the mail views show it: subject, folder labels, in the inbox. */
  const filed = async () =>
    (await messages()).map((m): [string, string[], boolean] => [m.subject, m.mail_labels.sort(), m.inbox]);
  /** Ingest applies what a scan sent a moment after the scan: waits for the mail views to show `expected`. */
  const shows = (expected: Array<[string, string[], boolean]>, what: string) =>
    waitUntil(async () => JSON.stringify(await filed()) === JSON.stringify(expected), what, { timeoutMs: 30_000 });
  /** Long enough for what a scan sent by mistake to show. */
  const quiet = () => new Promise((resolve) => setTimeout(resolve, 500));

  test('each message is an item, labelled with its folder, read and starred as Thunderbird marked it', async () => {
    await t.write('Inbox', mail('alpha', '0001') + mail('bravo', '0000') + mail('charlie', '0005'));
    await t.write('Inbox.msf', '// <!-- <mdb:mork:z v="1.4"/> -->\n< <(a=c)> // (f=iso-8859-1)\n');
    // The same message in two folders (its flags there differ): one item with both labels.
    await t.write('Trash', mail('delta') + mail('echo', '0001'));
    // A folder with subfolders is an empty mbox beside its `.sbd` folder.
    await t.write('Work', '');
    await t.write('Work.sbd/Projects', mail('echo', '0000'));
    ({ id } = await t.h.call(SourcesAdd, { kind: 'folder', path: t.dir, rescan_seconds: 3600 }));
    await shows(
      [
        ['alpha', [], true],
        ['bravo', [], true],
        ['charlie', [], true],
        ['delta', ['Trash'], false],
        ['echo', ['Trash', 'Work/Projects'], false],
      ],
      'every message an item, labelled with its folders',
    );
    assert.deepEqual(
      (await messages()).slice(0, 4).map((m) => [m.subject, m.read, m.starred]),
      [
        ['alpha', true, false],
        ['bravo', false, false],
        ['charlie', true, true],
        ['delta', true, false],
      ],
    );
    const { source, failures } = await t.h.call(SourcesGet, { id });
    // Six paths (echo's two), five items.
    assert.deepEqual([source.counts.files, source.counts.items, failures], [6, 5, []]);
  });

  test('read, deleted, appended, moved and compacted while watched: the items follow', async () => {
    const before = new Map((await messages()).map((m) => [m.subject, m.item_id]));
    const held = await revisions();
    // Marked read and starred in Thunderbird: the file changed, the message did not. The marks
    // reach the mail views; no item or revision is made.
    await mark('Inbox', 'bravo', '0005');
    await rescan();
    const marks = async () => (await messages()).find((m) => m.subject === 'bravo')!;
    await waitUntil(async () => (await marks()).read && (await marks()).starred, 'bravo read and starred', {
      timeoutMs: 30_000,
    });
    assert.deepEqual(await revisions(), held, 'nothing stored again for a mark');
    // Unstarred, still read.
    await mark('Inbox', 'bravo', '0001');
    await rescan();
    await waitUntil(async () => !(await marks()).starred, 'bravo unstarred', { timeoutMs: 30_000 });
    assert.equal((await marks()).read, true);

    // Deleted (expunged, still in the file) and new mail appended: the watcher sees it.
    await mark('Inbox', 'alpha', '0009');
    await t.write('Inbox', (await read('Inbox')) + mail('foxtrot'));
    await waitUntil(
      async () => JSON.stringify(await subjects()) === JSON.stringify(['bravo', 'charlie', 'delta', 'echo', 'foxtrot']),
      'alpha deleted and foxtrot an item, from the watcher alone',
      { timeoutMs: 30_000 },
    );

    // Moved to another folder as Thunderbird moves: copied there, then deleted here. The item
    // stays, filed there and out of the inbox.
    await t.write('Work.sbd/Projects', (await read('Work.sbd/Projects')) + mail('charlie', '0005'));
    await mark('Inbox', 'charlie', '000d');
    await rescan();
    await shows(
      [
        ['bravo', [], true],
        ['charlie', ['Work/Projects'], false],
        ['delta', ['Trash'], false],
        ['echo', ['Trash', 'Work/Projects'], false],
        ['foxtrot', [], true],
      ],
      'charlie moved to Projects',
    );
    assert.equal((await messages()).find((m) => m.subject === 'charlie')?.item_id, before.get('charlie'));

    // Compacted: the expunged messages leave the file; nothing else changes.
    const inbox = (await read('Inbox')).split(/(?=^From - )/m).filter((m) => !/X-Mozilla-Status: 000[9d]/.test(m));
    const compacted = await revisions();
    await t.write('Inbox', inbox.join(''));
    await rescan();
    await quiet();
    assert.deepEqual(await revisions(), compacted, 'compacting sends and removes nothing');
    assert.equal((await messages()).find((m) => m.subject === 'bravo')?.item_id, before.get('bravo'));

    // Trash emptied (the file cut to nothing): its message goes, and the Trash label of the copy
    // left in Projects. Then a folder deleted with its subfolders.
    await t.write('Trash', '');
    await rescan();
    await shows(
      [
        ['bravo', [], true],
        ['charlie', ['Work/Projects'], false],
        ['echo', ['Work/Projects'], false],
        ['foxtrot', [], true],
      ],
      'Trash emptied',
    );
    await fs.rm(path.join(t.dir, 'Work.sbd'), { recursive: true });
    await rescan();
    await shows(
      [
        ['bravo', [], true],
        ['foxtrot', [], true],
      ],
      'Work/Projects deleted',
    );
    const { source } = await t.h.call(SourcesGet, { id });
    assert.deepEqual([source.counts.files, source.counts.items], [2, 2]);
  });

  test('an mbox that cannot be read is refused with the reason and keeps its messages until it can', async () => {
    const inbox = await read('Inbox');
    const held = await revisions();
    await t.write('Inbox', 'Not mail any more.\n');
    await rescan();
    await quiet();
    const { failures } = await t.h.call(SourcesGet, { id });
    assert.deepEqual(
      failures.map((f) => [f.path, f.reason]),
      [['Inbox', 'the mbox cannot be read (not an mbox: it does not start with a From line); its messages are kept']],
    );
    assert.deepEqual(await revisions(), held);
    await t.write('Inbox', inbox);
    await rescan();
    await quiet();
    assert.deepEqual((await t.h.call(SourcesGet, { id })).failures, []);
    assert.deepEqual(await revisions(), held);
  });

  test('the sources read model is rebuilt the same from the log', async () => {
    const rows = await t.h.sourcesRows();
    await t.h.replaySources();
    assert.deepEqual(await t.h.sourcesRows(), rows);
  });
});

/**
 * An mbox of years of mail that Thunderbird appends to: read on from its last message while the
 * bytes before it are as they were, read through after any other change.
 */
describe('a watched mbox that grows', () => {
  const t = watchedFolder('memex-growing-mbox-');
  let id: string;
  const inbox = () => fs.readFile(path.join(t.dir, 'Inbox'), 'utf8');
  const put = (text: string) => t.replace('Inbox', text);
  /** New mail, not read yet. */
  const append = async (...subjects: string[]) => put((await inbox()) + subjects.map((s) => mail(s, '0000')).join(''));
  /** Where a message's `From ` line is in the Inbox now. */
  const offsetOf = async (subject: string) => {
    const text = await inbox();
    return Buffer.byteLength(text.slice(0, text.indexOf(`From - Mon Jan  4 10:00:00 2010\nSubject: ${subject}\n`)));
  };
  let readsSeen = 0;
  /** The first read of the Inbox as it is now on disk since the last one looked at (the watcher's). */
  const lastRead = async () => {
    const { size } = await fs.stat(path.join(t.dir, 'Inbox'));
    let found: DataOf<typeof SourceMailboxRead> | undefined;
    await waitUntil(
      async () => {
        const reads: Array<DataOf<typeof SourceMailboxRead>> = [];
        for await (const { event } of readLog(t.h.bus, {
          filter: typeFilter(SourceMailboxRead.type),
          untilCaughtUp: true,
        }))
          if (event.subject === `source:${id}`) reads.push(event.data as DataOf<typeof SourceMailboxRead>);
        const at = reads.findIndex((read, i) => i >= readsSeen && read.size === size);
        if (at < 0) return false;
        found = reads[at];
        readsSeen = at + 1;
        return true;
      },
      'the Inbox read as it is now',
      { timeoutMs: 30_000 },
    );
    return { from: found!.read_from, messages: found!.messages, tail: found!.tail?.offset };
  };
  const marks = async () =>
    (await messagesOf(t.ingestDb, id)).map((m) => `${m.subject}${m.read ? ' read' : ''}`).join(', ');
  const revisions = async () => (await t.h.items(id)).map((item) => `${item.id}@${item.revision}`);

  test('appended mail is read from the last message on; a mark or a deletion before it reads it through', async () => {
    await put(mail('alpha', '0000') + mail('bravo', '0000') + mail('charlie', '0000'));
    ({ id } = await t.h.call(SourcesAdd, { kind: 'folder', path: t.dir, rescan_seconds: 3600 }));
    assert.deepEqual(await lastRead(), { from: 0, messages: 3, tail: await offsetOf('charlie') });
    const held = await revisions();

    // New mail: read from charlie on, nothing before it sent again.
    await append('delta', 'echo');
    assert.deepEqual(await lastRead(), { from: await offsetOf('charlie'), messages: 5, tail: await offsetOf('echo') });
    await waitUntil(async () => (await revisions()).length === 5, 'delta and echo items', { timeoutMs: 30_000 });
    assert.deepEqual((await revisions()).filter((r) => held.includes(r)).length, 3, 'the first three untouched');

    // The last message marked read where it is, and new mail: still read from the last message.
    const echoRead = (await inbox()).replace(/(Subject: echo\nX-Mozilla-Status: )0000/, '$10001');
    assert.notEqual(echoRead, await inbox());
    await put(echoRead + mail('foxtrot', '0000'));
    assert.deepEqual(await lastRead(), { from: await offsetOf('echo'), messages: 6, tail: await offsetOf('foxtrot') });
    await waitUntil(async () => (await marks()).includes('echo read'), 'echo read', { timeoutMs: 30_000 });

    // A message before the last one marked read in place: the bytes before the last one changed,
    // so the mbox is read through and the mark reaches the mail views.
    const alphaRead = (await inbox()).replace(/(Subject: alpha\nX-Mozilla-Status: )0000/, '$10001');
    assert.notEqual(alphaRead, await inbox());
    await put(alphaRead + mail('golf'));
    assert.deepEqual(await lastRead(), { from: 0, messages: 7, tail: await offsetOf('golf') });
    await waitUntil(async () => (await marks()).startsWith('alpha read'), 'alpha read', { timeoutMs: 30_000 });

    // The last message deleted (flagged, not yet compacted away) and new mail: read through, and
    // the deleted one goes.
    const golfDeleted = (await inbox()).replace(/(Subject: golf\nX-Mozilla-Status: )0001/, '$10009');
    assert.notEqual(golfDeleted, await inbox());
    await put(golfDeleted + mail('hotel'));
    assert.deepEqual(await lastRead(), { from: 0, messages: 7, tail: await offsetOf('hotel') });
    await waitUntil(
      async () => (await marks()) === 'alpha read, bravo, charlie, delta, echo read, foxtrot, hotel read',
      'golf gone, hotel an item',
      { timeoutMs: 30_000 },
    );
  });

  test('the sources read model, tails and all, is rebuilt the same from the log', async () => {
    const rows = await t.h.sourcesRows();
    await t.h.replaySources();
    assert.deepEqual(await t.h.sourcesRows(), rows);
  });
});

/**
 * A Maildir as Dovecot, mbsync or offlineimap keep one and a client works in it: Maildir++
 * folders (`.Work`), mail delivered through `tmp/` into `new/`, seen and flagged by renaming it
 * (`:2,FS`), moved between folders by renaming it there.
 */
describe('a watched Maildir', () => {
  const t = watchedFolder('memex-maildir-');
  let id: string;

  const message = (subject: string) =>
    `From: Ann <ann@example.com>\nTo: bob@example.com\nSubject: ${subject}\n` +
    `Date: Mon, 4 Jan 2010 10:00:00 +0000\nMessage-ID: <${subject}@example.com>\n\n${subject} body\n`;
  const rename = async (from: string, to: string) => {
    await fs.mkdir(path.dirname(path.join(t.dir, to)), { recursive: true });
    await fs.rename(path.join(t.dir, from), path.join(t.dir, to));
  };
  /** Each message: subject, folder labels, in the inbox, read, starred, trashed. */
  const shown = async () =>
    (await messagesOf(t.ingestDb, id)).map((m) => [m.subject, m.mail_labels, m.inbox, m.read, m.starred, m.trashed]);
  const shows = (expected: unknown[][], what: string) =>
    waitUntil(async () => JSON.stringify(await shown()) === JSON.stringify(expected), what, { timeoutMs: 30_000 });

  test('folders and flags come from the Maildir, and follow what the client renames', async () => {
    await t.write('cur/1262599201.M1P1.host:2,S', message('alpha'));
    await t.write('new/1262599202.M2P1.host', message('bravo'));
    await t.write('.Work/cur/1262599203.M3P1.host:2,FS', message('charlie'));
    await t.write('.Work/tmp/1262599204.M4P1.host', message('delta'));
    await t.write('.Work/maildirfolder', '');
    await t.write('dovecot-uidlist', '3 V1262599200 N5\n');
    ({ id } = await t.h.call(SourcesAdd, { kind: 'folder', path: t.dir, rescan_seconds: 3600 }));
    await shows(
      [
        ['alpha', [], true, true, false, false],
        ['bravo', [], true, false, false, false],
        ['charlie', ['Work'], false, true, true, false],
      ],
      'three messages, in their folders, as their names mark them; the delivery under way not yet',
    );
    const items = new Map((await messagesOf(t.ingestDb, id)).map((m) => [m.subject, m.item_id]));

    // The client sees bravo, flags alpha, files charlie into Archive and alpha into Work, and
    // trashes bravo; delta's delivery finishes. The watcher alone follows (each rename an unlink
    // and, a moment later, an add).
    await rename('new/1262599202.M2P1.host', 'cur/1262599202.M2P1.host:2,S');
    await rename('cur/1262599201.M1P1.host:2,S', 'cur/1262599201.M1P1.host:2,FS');
    await rename('.Work/cur/1262599203.M3P1.host:2,FS', '.Archive/cur/1262599203.M3P1.host:2,FS');
    await rename('cur/1262599201.M1P1.host:2,FS', '.Work/cur/1262599201.M1P1.host:2,FS');
    await rename('cur/1262599202.M2P1.host:2,S', 'cur/1262599202.M2P1.host:2,ST');
    await rename('.Work/tmp/1262599204.M4P1.host', '.Work/new/1262599204.M4P1.host');
    await shows(
      [
        ['alpha', ['Work'], false, true, true, false],
        ['bravo', [], true, true, false, true],
        ['charlie', ['Archive'], false, true, true, false],
        ['delta', ['Work'], false, false, false, false],
      ],
      'the renames followed',
    );
    const now = new Map((await messagesOf(t.ingestDb, id)).map((m) => [m.subject, m.item_id]));
    for (const subject of ['alpha', 'bravo', 'charlie']) assert.equal(now.get(subject), items.get(subject), subject);
  });

  test('a folder the client makes, the folder first and its cur/ a moment later, is followed', async () => {
    await fs.mkdir(path.join(t.dir, '.Lists'));
    // The watcher has looked at the new folder (and, before, passed over it: no cur/ in it).
    await new Promise((resolve) => setTimeout(resolve, 500));
    for (const sub of ['cur', 'new', 'tmp']) await fs.mkdir(path.join(t.dir, '.Lists', sub));
    await rename('.Archive/cur/1262599203.M3P1.host:2,FS', '.Lists/cur/1262599203.M3P1.host:2,FS');
    await shows(
      [
        ['alpha', ['Work'], false, true, true, false],
        ['bravo', [], true, true, false, true],
        ['charlie', ['Lists'], false, true, true, false],
        ['delta', ['Work'], false, false, false, false],
      ],
      'charlie moved into the new folder',
    );
  });
});

/**
 * A sync tool (mbsync, offlineimap) moving mail on the server into another folder writes it as a
 * deletion here and, seconds later, a new file there; a file sync may replace a file by deleting it
 * first. Within the grace, the item stays.
 */
describe('files that go from a watched folder keep their items a while', () => {
  const GRACE_SECONDS = 4;
  const t = watchedFolder('memex-leaving-', { goneGraceSeconds: GRACE_SECONDS });
  let id: string;

  const message = (subject: string) =>
    `From: Ann <ann@example.com>\nTo: bob@example.com\nSubject: ${subject}\n` +
    `Date: Mon, 4 Jan 2010 10:00:00 +0000\nMessage-ID: <${subject}@example.com>\n\n${subject} body\n`;
  const shown = async () =>
    (await messagesOf(t.ingestDb, id)).map((m) => `${m.subject} ${m.item_id} [${m.mail_labels.join(',')}]`);
  const itemOf = async (subject: string) =>
    (await messagesOf(t.ingestDb, id)).find((m) => m.subject === subject)?.item_id;
  /** Waits until a scan has found the path gone (its item kept: leaving). */
  const leaving = (at: string) =>
    waitUntil(
      async () =>
        (
          await sql<{ n: number }>`select count(*)::int as n from sources.files
            where source_id = ${id} and path = ${at} and leaving_since is not null`.execute(t.ingestDb)
        ).rows[0]!.n === 1,
      `${at} leaving`,
      { timeoutMs: 30_000 },
    );
  const remove = (at: string) => fs.rm(path.join(t.dir, at));

  test('a message deleted from one folder and written into another seconds later keeps its item', async () => {
    await t.write('cur/1262599201.M1P1.host:2,S', message('alpha'));
    await t.write('cur/1262599202.M2P1.host:2,S', message('bravo'));
    await t.write('.Archive/maildirfolder', '');
    for (const sub of ['cur', 'new', 'tmp']) await fs.mkdir(path.join(t.dir, '.Archive', sub), { recursive: true });
    ({ id } = await t.h.call(SourcesAdd, { kind: 'folder', path: t.dir, rescan_seconds: 3600 }));
    await waitUntil(async () => (await shown()).length === 2, 'alpha and bravo', { timeoutMs: 30_000 });
    const alpha = await itemOf('alpha');

    // mbsync syncs the inbox first: alpha is gone from it; a scan sees that alone.
    await remove('cur/1262599201.M1P1.host:2,S');
    await leaving('cur/1262599201.M1P1.host:2,S');
    assert.equal(await itemOf('alpha'), alpha, 'kept while leaving');
    // Then the archive: alpha there under the name mbsync gives it.
    await t.write('.Archive/cur/1262599299.M9P1.host,U=7:2,S', message('alpha'));
    await waitUntil(
      async () => (await shown()).includes(`alpha ${alpha} [Archive]`),
      'alpha filed in Archive, the same item',
      { timeoutMs: 30_000 },
    );
    // Past the grace, nothing more happens to it.
    await new Promise((resolve) => setTimeout(resolve, (GRACE_SECONDS + 1) * 1000));
    assert.ok((await shown()).includes(`alpha ${alpha} [Archive]`));
  });

  test('a file that does not come back takes its item when the grace is over; one put back keeps it', async () => {
    const bravo = await itemOf('bravo');
    await t.write('notes.txt', 'rhubarb crumble recipe');
    await waitUntil(
      async () => (await t.h.items(id)).some((item) => item.text.includes('rhubarb')),
      'notes.txt an item',
      {
        timeoutMs: 30_000,
      },
    );
    const notes = (await t.h.items(id)).find((item) => item.text.includes('rhubarb'))!.id;

    // A file sync replacing notes.txt deletes it, then writes it again.
    const kept = await fs.readFile(path.join(t.dir, 'notes.txt'), 'utf8');
    await remove('notes.txt');
    await leaving('notes.txt');
    await t.write('notes.txt', kept);
    // bravo deleted for good.
    await remove('cur/1262599202.M2P1.host:2,S');
    await leaving('cur/1262599202.M2P1.host:2,S');
    const started = Date.now();
    await waitUntil(async () => (await itemOf('bravo')) === undefined, 'bravo deleted after the grace', {
      timeoutMs: 30_000,
    });
    assert.ok(Date.now() - started >= (GRACE_SECONDS - 2) * 1000, 'not before the grace');
    assert.ok(
      (await t.h.items(id)).some((item) => item.id === notes),
      'notes.txt, put back, keeps its item',
    );
    assert.notEqual(bravo, undefined);
    const { rows } = await sql<{ n: number }>`select count(*)::int as n from sources.files
      where source_id = ${id} and leaving_since is not null`.execute(t.ingestDb);
    assert.equal(rows[0]!.n, 0, 'nothing left leaving');
  });

  test('a message that leaves an mbox and is appended to another later keeps its item', async () => {
    const mail = (subject: string) => `From - Mon Jan  4 10:00:00 2010\nX-Mozilla-Status: 0001\n${message(subject)}\n`;
    await t.write('Local/Inbox', mail('charlie') + mail('delta'));
    await t.write('Local/Archive', mail('echo'));
    await waitUntil(async () => (await itemOf('delta')) !== undefined, 'delta an item', { timeoutMs: 30_000 });
    const delta = await itemOf('delta');
    await t.write('Local/Inbox', mail('charlie'));
    await waitUntil(
      async () =>
        (
          await sql<{ n: number }>`select count(*)::int as n from sources.files
            where source_id = ${id} and path like 'Local/Inbox#%' and leaving_since is not null`.execute(t.ingestDb)
        ).rows[0]!.n === 1,
      'delta leaving the Inbox',
      { timeoutMs: 30_000 },
    );
    await t.write('Local/Archive', mail('echo') + mail('delta'));
    await waitUntil(
      async () => (await shown()).includes(`delta ${delta} [Local/Archive]`),
      'delta filed in Archive, the same item',
      { timeoutMs: 30_000 },
    );
  });

  test('the sources read model is rebuilt the same from the log', async () => {
    const rows = await t.h.sourcesRows();
    await t.h.replaySources();
    assert.deepEqual(await t.h.sourcesRows(), rows);
  });
});

describe('an mbox read on from its last message while one of its messages is leaving', () => {
  // Long enough that the leaving message is still leaving when the mail after it is read.
  const t = watchedFolder('memex-tail-leaving-', { goneGraceSeconds: 600 });

  test('counts the messages the mbox holds, not the one that left it', async () => {
    await t.replace('Drafts', mail('alpha') + mail('bravo') + mail('charlie'));
    const { id } = await t.h.call(SourcesAdd, { kind: 'folder', path: t.dir, rescan_seconds: 3600 });
    /** The last read of Drafts at its present size: where it was read from, and how many messages it held. */
    const lastRead = async () => {
      const { size } = await fs.stat(path.join(t.dir, 'Drafts'));
      let found: DataOf<typeof SourceMailboxRead> | undefined;
      await waitUntil(
        async () => {
          for await (const { event } of readLog(t.h.bus, {
            filter: typeFilter(SourceMailboxRead.type),
            untilCaughtUp: true,
          })) {
            const read = event.data as DataOf<typeof SourceMailboxRead>;
            if (event.subject === `source:${id}` && read.path === 'Drafts' && read.size === size) found = read;
          }
          return found !== undefined;
        },
        'Drafts read as it is now',
        { timeoutMs: 30_000 },
      );
      return { from: found!.read_from, messages: found!.messages };
    };
    assert.deepEqual(await lastRead(), { from: 0, messages: 3 });

    // bravo deleted (compacted away): read through, bravo leaving.
    await t.replace('Drafts', mail('alpha') + mail('charlie'));
    assert.deepEqual(await lastRead(), { from: 0, messages: 2 });
    // Then new mail: read on from charlie; the mbox holds alpha, charlie and delta, not bravo.
    // (A size the Drafts never had: the read is known by it.)
    await t.replace('Drafts', mail('alpha') + mail('charlie') + mail('delta-late'));
    assert.deepEqual(await lastRead(), { from: Buffer.byteLength(mail('alpha')), messages: 3 });
  });
});

/** Apple Mail's store (`~/Library/Mail`) watched while Mail downloads an attachment it had left on the server. */
describe('a watched Apple Mail store', () => {
  const t = watchedFolder('memex-apple-mail-');

  /** An .emlx: the message's length, the message, Mail's property list. */
  const emlx = (message: string) =>
    `${Buffer.byteLength(message)}          \n${message}<?xml version="1.0" encoding="UTF-8"?>\n` +
    `<plist version="1.0">\n<dict>\n\t<key>flags</key>\n\t<integer>1</integer>\n</dict>\n</plist>\n`;
  /** The source's messages and the files in them, as ingest holds them: top-level items first. */
  const held = async (source: string) =>
    (
      await sql<{ id: string; parent_id: string | null; revision: number; text: string }>`
        select id, parent_id, revision, text from items
        where source_kind = 'import:folder' and source_id = ${source} order by parent_id nulls first, id`.execute(
        t.ingestDb,
      )
    ).rows;

  test('a .partial.emlx comes whole, its parts put back from where Mail keeps them, which are no items', async () => {
    const mailbox = 'V10/1C2B3A4D/Work.mbox/0C1D/Data/1';
    await t.write(
      `${mailbox}/Messages/102.partial.emlx`,
      emlx(
        `From: Ann <ann@example.org>\nTo: me@example.net\nSubject: Kick-off notes\nDate: Tue, 4 Jun 2024 09:30:00 +0200\n` +
          `Message-ID: <kickoff@example.org>\nMIME-Version: 1.0\nContent-Type: multipart/mixed; boundary=b\n\n` +
          `--b\nContent-Type: text/plain\n\nAbout the kick-off.\n` +
          `--b\nContent-Type: text/plain; name=agenda.txt\nContent-Disposition: attachment; filename=agenda.txt\n` +
          `Content-Transfer-Encoding: 7bit\nX-Apple-Content-Length: 29\n\n--b--\n`,
      ),
    );
    await t.write(`${mailbox}/Attachments/102/2/agenda.txt`, 'Agenda: the zeppelin budget.\n');
    const { id } = await t.h.call(SourcesAdd, { kind: 'folder', path: t.dir, rescan_seconds: 3600 });
    await waitUntil(async () => (await held(id)).length === 2, 'the message and its attachment', { timeoutMs: 30_000 });
    const [message, agenda] = await held(id);
    assert.deepEqual([message!.parent_id, message!.text], [null, 'About the kick-off.']);
    assert.deepEqual([agenda!.parent_id, agenda!.text.trim()], [message!.id, 'Agenda: the zeppelin budget.']);
    const { source } = await t.h.call(SourcesGet, { id });
    assert.deepEqual([source.counts.files, source.counts.items], [1, 1], 'the part is no file of its own');
  });
});
