import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { ItemsGet } from '@memex/contracts';
import { Bus, readLog } from '@memex/bus';
import { startStack, type TestStack } from '@memex/e2e';
import { buildEnex } from '@memex/exports/testing';
import { pdf } from '@memex/ingest/testing';
import { assertAccounted, importInto, lastSeq } from './testing.js';

describe('memex import folder: an Evernote export', () => {
  let stack: TestStack;
  before(async () => {
    stack = await startStack(['ingest']);
  });
  after(async () => stack.stop());

  /** The items the log holds, by title: their ids. */
  async function itemsByTitle(): Promise<Map<string, string>> {
    const bus = await Bus.connect(stack.env.config.natsUrl, 'evernote-test');
    const ids = new Map<string, string>();
    try {
      for await (const { event } of readLog(bus, { filter: 'memex.evt.item.ingested.>', untilCaughtUp: true })) {
        const data = event.data as { id: string; title?: string };
        if (data.title) ids.set(data.title, data.id);
      }
    } finally {
      await bus.close();
    }
    return ids;
  }

  test('each note an item with its title, date and tags, each attachment an item, everything accounted for; a newer export updates the edited note', async () => {
    const root = path.join(stack.env.home, 'Evernote');
    fs.mkdirSync(root);
    const receipt = pdf([['Bakery receipt: flour 3.20']]);
    const notebook = buildEnex(path.join(root, 'Recipes.enex'), { pdf: receipt, cutShort: true });
    const first = await importInto(stack, 'folder', root, 'evernote');
    assert.equal(first.error, undefined);
    // Three notes, the receipt and a note's text file; the zip attachment (no handler takes it) and two unreadable notes skipped.
    assertAccounted(first.summary, 8);
    assert.deepEqual([first.summary.run.created, first.summary.run.skipped], [5, 3]);
    const reasons = first.summary.skipped.map((s) => s.reason).sort();
    assert.equal(reasons[0], 'an attachment of a note, of a type no handler takes (application/zip)');
    assert.match(reasons[1]!, /^an unreadable note \(its XML is broken at line 1: /);
    assert.match(reasons[2]!, /^an unreadable note \(its XML is broken at line 1: /);

    const ids = await itemsByTitle();
    const bread = await stack.owner.call(ItemsGet, { id: ids.get('Bread & butter')!, min_seq: await lastSeq(stack) });
    assert.deepEqual(
      [bread.kind, bread.occurred_at, [...bread.labels].sort()],
      ['document', '2013-08-01T10:00:00.000Z', ['evernote:baking', 'evernote:family']],
    );
    assert.match(bread.text, /Mix the flour\.[^]*\[attachment: receipt\.pdf\][^]*☑ buy flour/);
    assert.ok(ids.has('Second') && ids.has('Untitled note'));
    const attached = await stack.owner.call(ItemsGet, { id: ids.get('receipt.pdf')! });
    assert.deepEqual([attached.occurred_at, /Bakery receipt/.test(attached.text)], ['2013-08-01T10:00:00.000Z', true]);

    // Exported again after the bread note was edited: that note is updated, nothing else sent twice.
    fs.writeFileSync(notebook, fs.readFileSync(notebook, 'utf8').replace('Mix the flour.', 'Mix the flour slowly.'));
    const second = await importInto(stack, 'folder', root, 'evernote');
    assert.deepEqual([second.summary.run.created, second.summary.run.updated, second.summary.run.duplicate], [0, 1, 4]);
    const edited = await stack.owner.call(ItemsGet, { id: bread.id, min_seq: await lastSeq(stack) });
    assert.deepEqual([edited.revision, /slowly/.test(edited.text)], [2, true]);
  });
});
