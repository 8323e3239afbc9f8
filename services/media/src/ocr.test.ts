import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { INestApplicationContext } from '@nestjs/common';
import { Ingest, OWNER_SCOPE, ItemsGet, Search } from '@memex/contracts';
import { IngestModule } from '@memex/ingest';
import { callMethod } from '@memex/bus';
import { startService } from '@memex/runtime';
import { SearchHarness } from '@memex/search/testing';
import { createTestEnv, waitUntil } from '@memex/testing';
import { characterAccuracy, imageOnlyPdf, photographedSign, scannedPage } from './testing/scans.js';

const SIGN = ['MAPLE STREET BAKERY', 'Open daily 7am to 3pm'];
const PAGE = [
  'Minutes of the garden committee, 14 March 2019.',
  'Present: Ann Hartley, Bob Okafor and Chen Wei.',
  'The committee agreed to plant forty hornbeam saplings',
  'along the northern fence before the end of April.',
  'Bob will ask the council for a quote on compost bins.',
  'The next meeting is on Thursday at the library.',
];

describe('OCR: text in photos and scanned PDF pages is found by search', () => {
  let h: SearchHarness;
  let ingest: INestApplicationContext;
  before(async () => {
    const env = await createTestEnv();
    h = await SearchHarness.start({ env, workers: 1 });
    ingest = await startService((config) => IngestModule.register(config), env.config);
  });
  after(async () => {
    await ingest?.close();
    await h?.stop();
  });

  it('reads a photographed sign and a scanned page, reports character accuracy, and search finds both by words only their pixels hold', async () => {
    const sign = await photographedSign(SIGN);
    const pdf = await imageOnlyPdf(await scannedPage(PAGE));
    const { results, seq } = await callMethod(
      h.bus,
      Ingest,
      {
        items: [
          {
            type: 'image/jpeg',
            data: sign.toString('base64'),
            source: { kind: 'folder', id: 'ocr' },
            external_id: 'sign.jpg',
            attributes: { filename: 'IMG_2041.jpg' },
          },
          {
            type: 'application/pdf',
            data: pdf.toString('base64'),
            source: { kind: 'folder', id: 'ocr' },
            external_id: 'scan.pdf',
            attributes: { filename: 'scan0001.pdf' },
          },
        ],
      },
      // OCR and transcripts run while ingest parses: slow on a busy machine.
      { scope: OWNER_SCOPE, timeoutMs: 300_000 },
    );
    const [photoId, scanId] = results.map((r) => {
      assert.ok(r.id, `${r.status}: ${r.reason ?? ''}`);
      return r.id;
    });
    const photo = await h.call(ItemsGet, { id: photoId!, min_seq: seq });
    const ocr = photo.meta['ocr'] as { text: string; provider: string; engine: string };
    const scan = await h.call(ItemsGet, { id: scanId!, min_seq: seq });
    const signAccuracy = characterAccuracy(ocr.text, SIGN.join('\n'));
    const pageAccuracy = characterAccuracy(scan.text, PAGE.join('\n'));
    console.log(
      `OCR character accuracy (${ocr.engine} on ${ocr.provider}): sign ${(signAccuracy * 100).toFixed(1)}%, scanned page ${(pageAccuracy * 100).toFixed(1)}%`,
    );
    assert.ok(signAccuracy >= 0.9, `sign read as ${JSON.stringify(ocr.text)}`);
    assert.ok(pageAccuracy >= 0.9, `page read as ${JSON.stringify(scan.text)}`);
    assert.match((scan.meta['warnings'] as string[]).join(), /read by OCR/);

    await h.settle();
    const find = async (q: string) => (await h.call(Search, { q, mode: 'keyword' })).hits.map((hit) => hit.id);
    // Settled means every job is done; the keyword index may still be a batch behind under load.
    await waitUntil(async () => (await find('bakery')).length > 0, 'the photo in the keyword index', {
      timeoutMs: 60_000,
    });
    assert.deepEqual(await find('bakery'), [photoId]);
    assert.deepEqual(await find('hornbeam saplings'), [scanId]);
    assert.deepEqual(await find('giraffe'), []);
  });
});
