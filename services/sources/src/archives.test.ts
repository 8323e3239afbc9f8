import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs/promises';
import path from 'node:path';
import { SourcesAdd, SourcesGet, SourcesRescan } from '@memex/contracts';
import { damageZipMember, zipOf } from '@memex/exports/testing';
import { pdf } from '@memex/ingest/testing';
import { waitUntil } from '@memex/testing';
import type { IngestedItem } from './testing/harness.js';
import { watchedFolder } from './testing/watched-folder.js';

/** A note of a generated Evernote export: made at `created` (its identity), its text a word to search. */
interface Note {
  title: string;
  created: string;
  text: string;
}

/** An Evernote export as Evernote writes a notebook (built here: no third-party data), with one note whose XML is broken. */
function enex(notes: Note[]): string {
  const note = ({ title, created, text }: Note) =>
    `<note><title>${title}</title><content><![CDATA[<?xml version="1.0" encoding="UTF-8" standalone="no"?>\n` +
    `<!DOCTYPE en-note SYSTEM "http://xml.evernote.com/pub/enml2.dtd">\n<en-note><div>${text}</div></en-note>]]>` +
    `</content><created>${created}</created><updated>${created}</updated><tag>notebook</tag></note>`;
  return (
    `<?xml version="1.0" encoding="UTF-8"?>\n<!DOCTYPE en-export SYSTEM "http://xml.evernote.com/pub/evernote-export3.dtd">\n` +
    `<en-export export-date="20240101T090000Z" application="Evernote" version="10.0">\n` +
    `${notes.map(note).join('\n')}\n<note><title>Oops</title><created>20200101T000000Z<created></note>\n</en-export>\n`
  );
}

/** Ingest and sources running and a folder to watch, around the tests of a `describe`. */
function watching(prefix: string) {
  // Gone members take their items a few seconds after they went, as the watched-mbox tests run it.
  const t = Object.assign(watchedFolder(prefix, { goneGraceSeconds: 2 }), { id: '' });
  return Object.assign(t, {
    items: () => t.h.items(t.id),
    /** The source once its first whole scan is recorded (items show before the scan's end is projected). */
    async scanned() {
      await waitUntil(async () => Boolean((await t.h.call(SourcesGet, { id: t.id })).source.last_scan), 'the scan');
      return t.h.call(SourcesGet, { id: t.id });
    },
    /** The item whose text holds `word`. */
    async itemWith(word: string): Promise<IngestedItem | undefined> {
      return (await t.h.items(t.id)).find((item) => item.text.includes(word));
    },
    async files(): Promise<Array<{ path: string; item_id: string | null; mailbox: boolean; archive: string | null }>> {
      const rows = (await t.h.sourcesRows()) as Array<Record<string, unknown>>;
      return rows
        .filter((row) => row.source_id === t.id)
        .map((row) => ({
          path: row.path as string,
          item_id: row.item_id as string | null,
          mailbox: row.mailbox as boolean,
          archive: row.archive as string | null,
        }));
    },
  });
}

describe('a watched Evernote export', () => {
  const t = watching('memex-enex-');
  const first: Note[] = [
    { title: 'Bread', created: '20200101T100000Z', text: 'alphasourdough starter' },
    { title: 'Garden', created: '20200102T100000Z', text: 'bravotomato seedlings' },
    { title: 'Books', created: '20200103T100000Z', text: 'charliereading list' },
  ];

  test('each note of the export is an item, known by the note', async () => {
    await t.write('Notebook.enex', enex(first));
    ({ id: t.id } = await t.h.call(SourcesAdd, { kind: 'folder', path: t.dir, rescan_seconds: 3600 }));
    await waitUntil(async () => (await t.items()).length === 3, 'three notes, three items', { timeoutMs: 30_000 });
    for (const word of ['alphasourdough', 'bravotomato', 'charliereading'])
      assert.ok(await t.itemWith(word), `the note with ${word} is an item`);
    // Each note at `<export>#<when it was made>`; the export's own row is no item.
    // Once the scan is recorded, so is every row it wrote (its end is the last of its events).
    const { source } = await t.scanned();
    const rows = (await t.files()).sort((a, b) => (a.path < b.path ? -1 : 1));
    assert.deepEqual(
      rows.map((row) => [row.path, row.item_id !== null, row.archive]),
      [
        ['Notebook.enex', false, 'enex'],
        ['Notebook.enex#2020-01-01T10:00:00.000Z', true, null],
        ['Notebook.enex#2020-01-02T10:00:00.000Z', true, null],
        ['Notebook.enex#2020-01-03T10:00:00.000Z', true, null],
      ],
    );
    // The note it could not read is accounted for, with why.
    assert.deepEqual(
      source.last_scan?.passed_over?.map((p) => [p.reason.replace(/ at line.*/, ''), p.count, p.examples]),
      [['an unreadable note (its XML is broken', 1, ['Notebook.enex#4']]],
    );
    assert.deepEqual(source.counts.items, 3);
  });

  test('the notebook exported again: an edited note updated in place, a removed one deleted after the grace, a new one created', async () => {
    const before = new Map((await t.items()).map((item) => [item.text, item]));
    const bread = [...before.values()].find((item) => item.text.includes('alphasourdough'))!;
    const garden = [...before.values()].find((item) => item.text.includes('bravotomato'))!;
    const books = [...before.values()].find((item) => item.text.includes('charliereading'))!;
    // Evernote writes the whole notebook again, in another order: Bread edited, Garden gone, Travel new.
    await t.write(
      'Notebook.enex',
      enex([
        { title: 'Travel', created: '20200104T100000Z', text: 'deltaitinerary rome' },
        first[2]!,
        { ...first[0]!, text: 'alphasourdough starter, fed twice a day echoedited' },
      ]),
    );
    const scanned = await t.h.call(SourcesRescan, { id: t.id });
    assert.deepEqual([scanned.ingested, scanned.updated, scanned.failed], [1, 1, 0], 'Travel created, Bread updated');
    await waitUntil(
      async () => Boolean((await t.itemWith('echoedited')) && (await t.itemWith('deltaitinerary'))),
      'the edited note updated, the new one created',
    );
    const edited = (await t.itemWith('echoedited'))!;
    assert.equal(edited.id, bread.id, 'the edited note is the same item');
    assert.ok(edited.revision > bread.revision);
    assert.ok(await t.itemWith('deltaitinerary'), 'the new note an item');
    const unchanged = (await t.itemWith('charliereading'))!;
    assert.deepEqual([unchanged.id, unchanged.revision], [books.id, books.revision], 'the same note not sent again');
    // Garden went from the export: its item is deleted once the grace is over (a scan is scheduled then).
    await waitUntil(async () => (await t.itemWith('bravotomato')) === undefined, 'the removed note deleted', {
      timeoutMs: 30_000,
    });
    assert.equal((await t.items()).length, 3);
    assert.ok(!(await t.items()).some((item) => item.id === garden.id));
    // An unchanged export is not read again, and its note that cannot be read is still accounted for.
    const asked = Date.now();
    const again = await t.h.call(SourcesRescan, { id: t.id });
    assert.deepEqual([again.ingested, again.updated, again.removed, again.failed], [0, 0, 0, 0]);
    const thisScan = async () => (await t.h.call(SourcesGet, { id: t.id })).source.last_scan;
    await waitUntil(async () => Date.parse((await thisScan())?.started_at ?? '') >= asked - 1000, 'the scan recorded');
    const { source } = await t.h.call(SourcesGet, { id: t.id });
    assert.deepEqual(
      source.last_scan?.passed_over?.map((p) => p.examples),
      [['Notebook.enex#4']],
    );
  });

  test('an export cut short (written still) is read up to there, says so, and keeps the notes it held', async () => {
    const held = (await t.items()).map((item) => `${item.id}@${item.revision}`).sort();
    const whole = await fs.readFile(path.join(t.dir, 'Notebook.enex'), 'utf8');
    // Cut inside its first note: nothing of it can be read, and nothing it held goes.
    await t.write('Notebook.enex', whole.slice(0, whole.indexOf('deltaitinerary')));
    const scanned = await t.h.call(SourcesRescan, { id: t.id });
    assert.deepEqual([scanned.removed, scanned.failed], [0, 1]);
    const failed = async () => (await t.h.call(SourcesGet, { id: t.id })).failures;
    await waitUntil(async () => (await failed()).length === 1, 'the export listed as read in part');
    const [failure] = await failed();
    assert.equal(failure!.path, 'Notebook.enex');
    assert.match(failure!.reason, /cut short .*those it held are kept/);
    await new Promise((resolve) => setTimeout(resolve, 3000)); // past the grace
    await t.h.call(SourcesRescan, { id: t.id });
    assert.deepEqual((await t.items()).map((item) => `${item.id}@${item.revision}`).sort(), held);
    // Written whole again: no failure, nothing sent again.
    await t.write('Notebook.enex', whole);
    const again = await t.h.call(SourcesRescan, { id: t.id });
    assert.deepEqual([again.ingested, again.updated, again.removed, again.failed], [0, 0, 0, 0]);
    await waitUntil(async () => (await failed()).length === 0, 'the failure cleared');
    assert.deepEqual((await t.items()).map((item) => `${item.id}@${item.revision}`).sort(), held);
  });

  test('the sources read model is rebuilt the same from the log', async () => {
    const rows = await t.h.sourcesRows();
    await t.h.replaySources();
    assert.deepEqual(await t.h.sourcesRows(), rows);
  });
});

describe('a watched zip', () => {
  const t = watching('memex-zip-');

  test("a zip's files are read as a folder in the folder; what nothing reads, a zip bomb and a damaged zip are accounted for with why", async () => {
    await zipOf(path.join(t.dir, 'Docs.zip'), {
      'report.txt': 'foxtrotreport quarterly figures\n',
      'inner/paper.pdf': pdf([['golfpaper on attention']]),
      'inner/deep/notes.md': '# hotelnotes\n\nMeeting notes.\n',
      'tool.exe': 'MZ not read',
    });
    await t.touch('Docs.zip');
    // A zip bomb, generated: 40 MB of zeros deflate to some kilobytes.
    await zipOf(path.join(t.dir, 'bomb.zip'), { 'zeros.txt': Buffer.alloc(40 * 1024 * 1024) });
    await t.write('broken.zip', Buffer.from('PK\x03\x04 this is no zip at all, cut short', 'latin1'));
    // A zip one of whose files is compressed by a method nothing reads, another damaged.
    const odd = await zipOf(path.join(t.dir, 'odd.zip'), {
      'strange.txt': 'indiastrange text',
      'garbled.txt': Array.from({ length: 3000 }, (_, i) => ((i * 7919) % 100_003).toString(36)).join(' '),
      'fine.txt': 'kilofine text',
    });
    damageZipMember(odd, 'strange.txt', { method: 99 });
    damageZipMember(odd, 'garbled.txt', { garble: true });
    await t.touch('odd.zip');

    ({ id: t.id } = await t.h.call(SourcesAdd, { kind: 'folder', path: t.dir, rescan_seconds: 3600 }));
    await waitUntil(async () => (await t.items()).length === 4, 'the readable files of the zips, items', {
      timeoutMs: 30_000,
    });
    for (const word of ['foxtrotreport', 'golfpaper', 'hotelnotes', 'kilofine'])
      assert.ok(await t.itemWith(word), `the file with ${word} is an item`);
    const { source, failures } = await t.scanned();
    const rows = await t.files();
    assert.deepEqual(
      rows
        .filter((row) => row.item_id)
        .map((row) => row.path)
        .sort(),
      ['Docs.zip/inner/deep/notes.md', 'Docs.zip/inner/paper.pdf', 'Docs.zip/report.txt', 'odd.zip/fine.txt'],
    );
    assert.deepEqual(failures.map((f) => f.path).sort(), ['broken.zip', 'odd.zip/garbled.txt']);
    failures.sort((a, b) => (a.path < b.path ? -1 : 1));
    assert.match(failures[0]!.reason, /cannot be read as a zip archive.*the items of its files are kept/);
    assert.match(failures[1]!.reason, /damaged/);
    const passed = new Map(source.last_scan!.passed_over!.map((p) => [p.examples[0], p.reason]));
    assert.equal(passed.get('Docs.zip/tool.exe'), 'no handler takes .exe files');
    assert.match(passed.get('bomb.zip')!, /unpacks to 40 MB from \d+ KB .*zip bomb/);
    assert.match(passed.get('odd.zip/strange.txt')!, /method memex cannot read \(99\)/);
    assert.ok(![...passed.values()].some((reason) => /memex import folder reads it/.test(reason)));
  });

  test('a zip written again: only its changed files are sent, a new one created, one that went deleted after the grace', async () => {
    const report = (await t.itemWith('foxtrotreport'))!;
    const notes = (await t.itemWith('hotelnotes'))!;
    const paper = (await t.itemWith('golfpaper'))!;
    await zipOf(path.join(t.dir, 'Docs.zip'), {
      'report.txt': 'foxtrotreport quarterly figures, corrected limaedit\n',
      'inner/deep/notes.md': '# hotelnotes\n\nMeeting notes.\n',
      'inner/new.txt': 'mikenew file in the zip',
      'tool.exe': 'MZ not read',
    });
    await t.touch('Docs.zip');
    const scanned = await t.h.call(SourcesRescan, { id: t.id });
    assert.deepEqual([scanned.ingested, scanned.updated], [1, 1], 'new.txt created, report.txt updated');
    await waitUntil(
      async () => Boolean((await t.itemWith('limaedit')) && (await t.itemWith('mikenew'))),
      'the changed file updated, the new one created',
    );
    const changed = (await t.itemWith('limaedit'))!;
    assert.equal(changed.id, report.id, 'the changed file keeps its item');
    assert.ok(await t.itemWith('mikenew'));
    const same = (await t.itemWith('hotelnotes'))!;
    assert.deepEqual([same.id, same.revision], [notes.id, notes.revision], 'the unchanged file is not sent again');
    await waitUntil(async () => !(await t.items()).some((item) => item.id === paper.id), 'paper.pdf deleted', {
      timeoutMs: 30_000,
    });
    assert.ok(!(await t.files()).some((row) => row.path === 'Docs.zip/inner/paper.pdf'));
  });

  test('a zip that goes takes its files’ items with it, after the grace', async () => {
    const fine = (await t.itemWith('kilofine'))!;
    await fs.rm(path.join(t.dir, 'odd.zip'));
    await t.h.call(SourcesRescan, { id: t.id });
    await waitUntil(async () => !(await t.items()).some((item) => item.id === fine.id), 'odd.zip’s item deleted', {
      timeoutMs: 30_000,
    });
  });

  test('the sources read model is rebuilt the same from the log', async () => {
    const rows = await t.h.sourcesRows();
    await t.h.replaySources();
    assert.deepEqual(await t.h.sourcesRows(), rows);
  });
});
