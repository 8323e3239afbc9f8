import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { readEnex, type NotebookEntry, type NotebookSkip } from './enex.js';
import { buildEnex } from './testing/index.js';

async function entriesOf(file: string, key: string): Promise<Array<NotebookEntry | NotebookSkip>> {
  const entries: Array<NotebookEntry | NotebookSkip> = [];
  for await (const entry of readEnex(file, key)) entries.push(entry);
  return entries;
}

test('an Evernote export: each note a page with its title, date, tags and source, its attachments items of their own', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'enex-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const pdf = Buffer.from('%PDF-1.4\n% the receipt\n');
  const file = buildEnex(path.join(dir, 'Recipes.enex'), { pdf, cutShort: true });
  const entries = await entriesOf(file, 'Evernote/Recipes.enex');

  assert.deepEqual(
    entries.map((e) => ('skipped' in e ? [e.key, e.skipped.replace(/ \(.*$/, '')] : [e.key, e.type])),
    [
      ['Evernote/Recipes.enex#2013-07-30T20:52:04.000Z', 'text/html'],
      ['Evernote/Recipes.enex#2013-07-30T20:52:04.000Z/receipt.pdf', 'application/pdf'],
      ['Evernote/Recipes.enex#2013-07-30T20:52:04.000Z/attachment-2', 'application/zip'],
      ['Evernote/Recipes.enex#2013-07-30T20:52:04.000Z-2', 'text/html'],
      ['Evernote/Recipes.enex#3', 'an unreadable note'],
      ['Evernote/Recipes.enex#note-4', 'text/html'],
      ['Evernote/Recipes.enex#note-4/todo.txt', 'text/plain'],
      ['Evernote/Recipes.enex#5', 'an unreadable note'],
    ],
  );
  const [page, receipt] = entries as NotebookEntry[];
  const html = page!.bytes.toString();
  assert.match(html, /<title>Bread &amp; butter<\/title>/);
  assert.match(html, /Mix the flour\./);
  assert.match(html, /\[attachment: receipt\.pdf\]/);
  assert.match(html, /☑ buy flour/);
  assert.match(html, /☐ buy yeast/);
  assert.match(html, /\[encrypted text\]/);
  assert.doesNotMatch(html, /en-note|en-media|en-todo|secret/);
  assert.deepEqual(page!.attributes, {
    title: 'Bread & butter',
    modified: '2013-08-01T10:00:00.000Z',
    url: 'https://example.com/bread',
  });
  assert.deepEqual(page!.labels, ['evernote:baking', 'evernote:family']);
  assert.deepEqual(receipt!.bytes, pdf);
  assert.deepEqual(receipt!.attributes, { filename: 'receipt.pdf', modified: '2013-08-01T10:00:00.000Z' });
  assert.deepEqual(receipt!.labels, page!.labels);
  // A note without dates: known by its place, dated nothing, not given a url that is none.
  const undated = entries[5] as NotebookEntry;
  assert.deepEqual(undated.attributes, { title: 'Untitled note' });
  // Its attachment is undated too: no made-up date.
  assert.deepEqual((entries[6] as NotebookEntry).attributes, { filename: 'todo.txt' });
});
