import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import { ItemsGet, MailList, SourcesAdd, SourcesRescan, type ResultOf } from '@memex/contracts';
import { buildTakeout } from '@memex/exports/testing';
import { waitUntil } from '@memex/testing';
import { startSourcesHarness, type SourcesHarness } from './testing/harness.js';

type Message = ResultOf<typeof MailList>['messages'][number];

describe('sources: a Google Takeout and a photo library as sources', () => {
  let h: SourcesHarness;
  before(async () => {
    h = await startSourcesHarness();
  });
  after(async () => h.stop());

  async function messages(count: number): Promise<Map<string, Message>> {
    let found = new Map<string, Message>();
    await waitUntil(async () => {
      found = new Map();
      for (const view of ['all', 'spam', 'trash'] as const) {
        const { messages } = await h.call(MailList, { view, account: 'import:takeout:me', limit: 500 });
        for (const m of messages) found.set(m.subject, m);
      }
      return found.size >= count;
    }, `${count} messages`);
    return found;
  }

  test("a Takeout's zip is no source (a source is a folder): refused, saying what reads it", async () => {
    const zip = path.join(h.env.home, 'takeout-20241201T101010Z-001.zip');
    fs.writeFileSync(zip, 'PK\x05\x06');
    await assert.rejects(
      h.call(SourcesAdd, { kind: 'takeout', path: zip, id: 'zipped' }),
      /takeout-20241201T101010Z-001\.zip is a zip archive, and a source is a folder: memex import takeout \(or import folder\) reads a zip as it is/,
    );
  });

  test('memex sources add takeout: mail with its labels and photos with albums; a rescan on a newer export unpacked there adds what is new and updates labels, nothing twice', async () => {
    const root = path.join(h.env.home, 'Takeout-me');
    await buildTakeout(root, 'first');
    await h.call(SourcesAdd, { kind: 'takeout', path: root, id: 'me', media: 'copy' });
    let mail = await messages(5);
    assert.equal(mail.size, 5);
    assert.deepEqual(mail.get('Photos of the kids')!.labels, ['Family']);
    assert.equal(mail.get('Photos of the kids')!.read, false);
    assert.equal(mail.get('You won')!.spam, true);

    // The newer export unpacked over the old one (the source's watcher may see it first; the rescan catches up).
    await buildTakeout(root, 'newer');
    const scan = await h.call(SourcesRescan, { id: 'me' });
    assert.equal(scan.failed, 0);
    mail = await messages(6);
    assert.equal(mail.size, 6, 'no message twice');
    // The new message can be listed before the relabel of the old one is applied: wait (bounded) for it.
    const relabelled = (m: typeof mail) => m.get('Photos of the kids')!.labels.includes('Travel');
    await waitUntil(async () => relabelled((mail = await messages(6))), 'the relabel applied', {
      timeoutMs: 60_000,
    }).catch(() => undefined);
    const kids = mail.get('Photos of the kids')!;
    assert.deepEqual(
      { read: kids.read, labels: [...kids.labels].sort() },
      { read: true, labels: ['Family', 'Travel'] },
      'the relabelled message follows the newer export',
    );
    assert.equal(mail.get('Dinner?')!.read, false);
    await waitUntil(async () => (await h.items('me', 'import:takeout')).length >= 9, '6 messages and 3 photos');
    assert.equal((await h.items('me', 'import:takeout')).length, 9, '6 messages and 3 photos, none twice');
    const again = await h.call(SourcesRescan, { id: 'me' });
    assert.deepEqual(
      { ingested: again.ingested, updated: again.updated, files: again.files },
      { ingested: 0, updated: 0, files: 9 },
      'the same export again sends nothing',
    );
  });

  test('memex sources add photo-library: an Apple Photos export read in place with its XMP', async () => {
    const root = path.join(h.env.home, 'apple-export');
    fs.mkdirSync(root, { recursive: true });
    fs.writeFileSync(
      path.join(root, 'IMG_0001.JPG'),
      await sharp({ create: { width: 40, height: 30, channels: 3, background: { r: 9, g: 99, b: 199 } } })
        .jpeg()
        .toBuffer(),
    );
    fs.writeFileSync(
      path.join(root, 'IMG_0001.xmp'),
      `<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">
<rdf:Description rdf:about="" xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:photoshop="http://ns.adobe.com/photoshop/1.0/">
<dc:title><rdf:Alt><rdf:li xml:lang="x-default">Lake</rdf:li></rdf:Alt></dc:title>
<dc:subject><rdf:Bag><rdf:li>water</rdf:li></rdf:Bag></dc:subject>
<photoshop:DateCreated>2022-08-01T07:00:00+02:00</photoshop:DateCreated>
</rdf:Description></rdf:RDF></x:xmpmeta>`,
    );
    await h.call(SourcesAdd, { kind: 'photo-library', path: root, id: 'apple' });
    await waitUntil(async () => (await h.items('apple', 'import:photo-library')).length > 0, 'the photo as an item');
    const [item] = await h.items('apple', 'import:photo-library');
    assert.ok(item, 'the photo is an item of the source');
    const got = await h.call(ItemsGet, { id: item.id });
    assert.equal(got.title, 'Lake');
    assert.deepEqual(got.labels, ['keyword:water']);
    assert.equal(got.occurred_at, '2022-08-01T05:00:00.000Z');
    assert.equal(got.location, `file:${path.join(root, 'IMG_0001.JPG')}`, 'read in place');
  });
});
