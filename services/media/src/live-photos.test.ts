import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { MediaEvents, MediaGet } from '@memex/contracts';
import { missingTool, motionClip, withIphoneExif } from '@memex/testing';
import { MediaHarness } from './testing/harness.js';

describe(
  'Live Photos: an iPhone still and its motion clip are one photo',
  { skip: missingTool('ffmpeg', ['-version'], 'deploy/local/provision.sh --with-media') },
  () => {
    let h: MediaHarness;
    let dir: string;
    before(async () => {
      process.env['MEMEX_OCR'] = 'off';
      process.env['MEMEX_TRANSCRIBE'] = 'off';
      h = await MediaHarness.start();
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'memex-live-'));
    });
    after(async () => {
      delete process.env['MEMEX_OCR'];
      delete process.env['MEMEX_TRANSCRIBE'];
      await h?.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    });

    it('each names the other; the clip is no moment of its own; an ordinary video stays one', async () => {
      const id = '1F2E3D4C-AAAA-4BBB-8CCC-0123456789AB';
      const pixels = await sharp({ create: { width: 64, height: 48, channels: 3, background: '#3a6' } })
        .jpeg()
        .toBuffer();
      const files = {
        still: path.join(dir, 'IMG_0001.JPG'),
        motion: path.join(dir, 'IMG_0001.MOV'),
        other: path.join(dir, 'IMG_0002.MOV'),
      };
      fs.writeFileSync(
        files.still,
        withIphoneExif(pixels, { contentIdentifier: id, takenAt: '2023:07:14 18:30:05', offset: '+02:00' }),
      );
      fs.writeFileSync(files.motion, await motionClip(id, '2023-07-14T18:30:05+0200'));
      fs.writeFileSync(
        files.other,
        await motionClip('99999999-0000-4000-8000-000000000000', '2023-07-14T18:31:00+0200'),
      );
      // The clip first, as a folder import may send it: the pair forms whichever arrives last.
      const [motion, other, still] = await h.ingestFiles([files.motion, files.other, files.still]);

      const stillView = await h.analyzed(still!);
      assert.deepEqual(stillView.live_photo, { still, motion });
      const motionView = await h.call(MediaGet, { item_id: motion! });
      assert.equal(motionView.kind, 'video');
      assert.deepEqual(motionView.live_photo, { still, motion });
      assert.equal((await h.call(MediaGet, { item_id: other! })).live_photo, null);

      const { events } = await h.call(MediaEvents, {});
      const items = events.flatMap((event) => event.items).sort();
      assert.deepEqual(items, [other, still].sort());
    });
  },
);
