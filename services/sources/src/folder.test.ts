import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { SourcesAdd, SourcesGet, SourcesList, SourcesPause, SourcesRescan, SourcesResume } from '@memex/contracts';
import { waitUntil } from '@memex/testing';
import { startSourcesHarness, type IngestedItem, type SourcesHarness } from './testing/harness.js';

/**
 * A watched folder on a real file system, with ingest and sources running: files arrive, change,
 * move and go while the service runs and while it is stopped, and the items follow the folder.
 */
describe('a watched folder', () => {
  let h: SourcesHarness;
  let dir: string;
  let id: string;
  before(async () => {
    h = await startSourcesHarness();
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'memex-watched-'));
  });
  after(async () => {
    await h.stop();
    await fs.rm(dir, { recursive: true, force: true });
  });

  const write = async (relative: string, text: string) => {
    await fs.mkdir(path.dirname(path.join(dir, relative)), { recursive: true });
    await fs.writeFile(path.join(dir, relative), text);
  };
  /** Each file's one word, by path, read from the disk. */
  const onDisk = async (): Promise<string[]> => {
    const files = (await fs.readdir(dir, { recursive: true, withFileTypes: true })).filter(
      (e) => e.isFile() && !e.name.startsWith('.') && /\.(md|txt)$/.test(e.name),
    );
    const words = await Promise.all(
      files.map(async (e) => (await fs.readFile(path.join(e.parentPath, e.name), 'utf8')).match(/\b[a-z]+-\w+\b/)![0]),
    );
    return words.sort();
  };
  /** The memex holds exactly one item per file, with that file's content, and nothing else. */
  const matches = async (): Promise<boolean> => {
    const items = await h.items(id);
    const words = await onDisk();
    const held = items.map((item) => item.text.match(/\b[a-z]+-\w+\b/)?.[0] ?? '?').sort();
    return JSON.stringify(held) === JSON.stringify(words);
  };
  const byWord = async (word: string): Promise<IngestedItem | undefined> =>
    (await h.items(id)).find((item) => item.text.includes(word));
  const settled = async (what: string) => {
    await waitUntil(matches, what, { timeoutMs: 30_000, everyMs: 100 });
    // The source's counts follow its own read model, which may apply the last file a moment after ingest's.
    const files = (await onDisk()).length;
    let counts = (await h.call(SourcesGet, { id })).source.counts;
    for (
      const deadline = Date.now() + 10_000;
      Date.now() < deadline && (counts.files !== files || counts.items !== files);
    ) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      counts = (await h.call(SourcesGet, { id })).source.counts;
    }
    assert.equal(counts.files, files, `${what}: the source counts every file`);
    assert.equal(counts.items, files, `${what}: one item per file`);
  };

  test('scanned when added, then every change while running and across a restart; paused ignores changes', async () => {
    await write('alpha.md', '# Alpha\n\nalpha-one\n');
    await write('bravo.txt', 'bravo-one');
    await write('sub/charlie.md', 'charlie-one');
    await write('.hidden.md', 'hidden-one');
    await write('notes.xyz', 'xray-one');
    // A photo export's sidecar: a data file the document handler would read, but no item from a folder.
    await write('IMG_0001.jpg.json', '{ "title": "sidecar-one" }');
    await write('broken.pdf', 'not a PDF at all');
    ({ id } = await h.call(SourcesAdd, { kind: 'folder', path: dir, labels: ['client:acme'], rescan_seconds: 5 }));
    await settled('the first scan');
    // A file ingest refuses is listed with the reason, and counted; it is not an item.
    const first = await h.call(SourcesGet, { id });
    assert.equal(first.source.counts.failed, 1);
    assert.deepEqual(
      first.failures.map((f) => f.path),
      ['broken.pdf'],
    );
    assert.match(first.failures[0]!.reason, /pdf/i);
    const bravo = (await byWord('bravo-one'))!;
    const charlie = (await byWord('charlie-one'))!;

    // While the service runs: a new file, a change, a rename into another folder, a deletion.
    await write('delta.txt', 'delta-one');
    await write('bravo.txt', 'bravo-two');
    await fs.mkdir(path.join(dir, 'archive'));
    await fs.rename(path.join(dir, 'sub/charlie.md'), path.join(dir, 'archive/charlie-renamed.md'));
    await fs.rm(path.join(dir, 'alpha.md'));
    await settled('the changes while running');
    assert.equal((await byWord('bravo-two'))!.id, bravo.id, 'a changed file updates its item');
    assert.equal((await byWord('bravo-two'))!.revision, 2);
    assert.equal((await byWord('charlie-one'))!.id, charlie.id, 'a moved file keeps its item');

    // While the service is stopped; it catches up when it starts again, ingesting nothing twice.
    await h.stopSources();
    await write('echo.txt', 'echo-one');
    await fs.rm(path.join(dir, 'delta.txt'));
    await write('bravo.txt', 'bravo-three');
    await fs.rename(path.join(dir, 'archive/charlie-renamed.md'), path.join(dir, 'charlie-top.md'));
    await h.startSources();
    await settled('the changes while stopped');
    assert.equal((await byWord('bravo-three'))!.id, bravo.id);
    assert.equal((await byWord('bravo-three'))!.revision, 3);
    assert.equal((await byWord('charlie-one'))!.id, charlie.id);

    // Paused: changes wait; resumed: a rescan catches up.
    await h.call(SourcesPause, { id });
    await write('foxtrot.txt', 'foxtrot-one');
    await new Promise((resolve) => setTimeout(resolve, 1500));
    assert.equal(await byWord('foxtrot-one'), undefined, 'a paused source ignores changes');
    assert.equal((await h.call(SourcesGet, { id })).source.state, 'paused');
    await h.call(SourcesResume, { id });
    await settled('the catch-up after resuming');

    // Emptied at once (an unmounted volume's mount point stays as an empty folder): away, not deleted.
    const before = (await h.items(id)).map((item) => item.id);
    const parked = await fs.mkdtemp(path.join(os.tmpdir(), 'memex-parked-'));
    for (const name of await fs.readdir(dir)) await fs.rename(path.join(dir, name), path.join(parked, name));
    await waitUntil(async () => (await h.call(SourcesGet, { id })).source.state === 'error', 'the source away', {
      timeoutMs: 20_000,
      everyMs: 100,
    });
    assert.match((await h.call(SourcesGet, { id })).source.reason ?? '', /empty .*not mounted/);
    await assert.rejects(h.call(SourcesRescan, { id }), /empty/);
    assert.deepEqual(
      (await h.items(id)).map((item) => item.id),
      before,
      'nothing deleted',
    );
    for (const name of await fs.readdir(parked)) await fs.rename(path.join(parked, name), path.join(dir, name));
    await waitUntil(async () => (await h.call(SourcesGet, { id })).source.state === 'active', 'the source back', {
      timeoutMs: 20_000,
      everyMs: 100,
    });
    await settled('the folder back');
    assert.deepEqual(
      (await h.items(id)).map((item) => item.id),
      before,
    );

    // The folder missing when the service starts (a volume not mounted yet): nothing deleted.
    await h.stopSources();
    await fs.rename(dir, `${dir}-unmounted`);
    await h.startSources();
    await waitUntil(
      async () => (await h.call(SourcesGet, { id })).source.state === 'error',
      'the source away at start',
      {
        timeoutMs: 20_000,
        everyMs: 100,
      },
    );
    assert.match((await h.call(SourcesGet, { id })).source.reason ?? '', /gone/);
    assert.deepEqual(
      (await h.items(id)).map((item) => item.id),
      before,
      'nothing deleted',
    );
    await fs.rename(`${dir}-unmounted`, dir);
    await waitUntil(async () => (await h.call(SourcesGet, { id })).source.state === 'active', 'the source back', {
      timeoutMs: 20_000,
      everyMs: 100,
    });
    await settled('the volume mounted');

    // Everything above is in the log: a replay rebuilds the same rows.
    const rows = await h.sourcesRows();
    await h.replaySources();
    assert.deepEqual(await h.sourcesRows(), rows);

    const listed = (await h.call(SourcesList, {})).sources.find((s) => s.id === id)!;
    assert.equal(listed.state, 'active');
    assert.deepEqual(listed.settings?.labels, ['client:acme']);
    assert.equal(listed.counts.in_place, 0, 'documents are copied (media auto)');

    // A refused file is recorded once and left alone by the scans, until a rescan asked for
    // sends it again: refused while it holds a NUL byte, an item once the same size and time hold text.
    const golf = path.join(dir, 'golf.txt');
    await fs.writeFile(golf, 'golf-one\0');
    const refused = async () => (await h.call(SourcesGet, { id })).failures.map((f) => f.path).sort();
    await waitUntil(async () => (await refused()).includes('golf.txt'), 'the text with a NUL byte refused');
    assert.match((await h.call(SourcesGet, { id })).failures.find((f) => f.path === 'golf.txt')!.reason, /NUL/);
    const { mtime } = await fs.stat(golf);
    await fs.writeFile(golf, 'golf-one\n');
    await fs.utimes(golf, mtime, mtime);
    const rescanned = await h.call(SourcesRescan, { id });
    assert.deepEqual([rescanned.ingested, rescanned.failed], [1, 1], 'golf.txt read again; broken.pdf refused again');
    await settled('the refused file read again on a rescan');
    assert.deepEqual(await refused(), ['broken.pdf']);
  });

  test("files whose names tell no type are read by their content: a Maildir's and an MH folder's messages", async () => {
    const mail = await fs.mkdtemp(path.join(os.tmpdir(), 'memex-maildir-'));
    try {
      const message = (subject: string, word: string) =>
        `From: Ann <ann@example.com>\r\nTo: bob@example.com\r\nSubject: ${subject}\r\n` +
        `Date: Fri, 1 Jan 2010 10:00:00 +0000\r\nMessage-ID: <${word}@example.com>\r\n\r\n${word}\r\n`;
      await fs.mkdir(path.join(mail, 'Maildir/cur'), { recursive: true });
      await fs.mkdir(path.join(mail, 'Mail/inbox'), { recursive: true });
      await fs.writeFile(path.join(mail, 'Maildir/cur/1262340000.M1P1.host:2,S'), message('Maildir', 'maildir-one'));
      await fs.writeFile(path.join(mail, 'Mail/inbox/17'), message('MH', 'mh-one'));
      // Text without a header tells nothing: not a file of the source, nor a failure; it is
      // passed over, as is a settings file, each counted with why (an empty zip is read: nothing in it).
      await fs.writeFile(path.join(mail, 'LICENSE'), 'Permission is hereby granted, free of charge\n');
      await fs.writeFile(path.join(mail, 'Old mail.zip'), Buffer.from('PK\x05\x06'.padEnd(22, '\0'), 'latin1'));
      await fs.writeFile(path.join(mail, 'settings.json'), '{"theme":"dark"}\n');
      const { id: source } = await h.call(SourcesAdd, { kind: 'folder', path: mail });
      const texts = async () => (await h.items(source)).map((item) => item.text);
      await waitUntil(async () => (await texts()).length === 2, 'both messages an item');
      const held = await texts();
      assert.ok(held.some((text) => text.includes('maildir-one')) && held.some((text) => text.includes('mh-one')));
      const { source: read, failures } = await h.call(SourcesGet, { id: source });
      assert.deepEqual([read.counts.files, read.counts.items, failures.length], [2, 2, 0]);
      let scanned = read.last_scan;
      await waitUntil(
        async () => Boolean((scanned = (await h.call(SourcesGet, { id: source })).source.last_scan)),
        'the scan',
      );
      assert.deepEqual(scanned!.passed_over, [
        {
          reason: 'a data file (.json): settings, exports and photo sidecars are not imported from folders',
          count: 1,
          examples: ['settings.json'],
        },
        { reason: 'no extension to tell its type', count: 1, examples: ['LICENSE'] },
      ]);
    } finally {
      await fs.rm(mail, { recursive: true, force: true });
    }
  });
});
