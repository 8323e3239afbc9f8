import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { MediaGet } from '@memex/contracts';
import { waitUntil } from '@memex/testing';
import { faceTestSetSkip } from './testing/faces.js';
import { MediaHarness } from './testing/harness.js';

// scikit-image's sample photos (Debian python3-skimage): a coffee cup and a motorcycle.
const SKIMAGE = '/usr/lib/python3/dist-packages/skimage/data';
const PICTURES = ['coffee.png', 'motorcycle_left.png'];

/** A vision model endpoint speaking OpenAI's chat completions: it captions what it is asked, once per request; the motorcycle makes it fail. */
async function fakeVision(): Promise<{
  url: string;
  requests: Array<{ model: string; image: string }>;
  close: () => Promise<void>;
}> {
  const requests: Array<{ model: string; image: string }> = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
        res.writeHead(404).end();
        return;
      }
      const request = JSON.parse(body) as {
        model: string;
        messages: Array<{ content: Array<{ type: string; image_url?: { url: string } }> }>;
      };
      const image = request.messages[0]!.content.find((c) => c.type === 'image_url')!.image_url!.url;
      requests.push({ model: request.model, image });
      // Told apart by size: the motorcycle's preview is the only one 741 px wide.
      void sharp(Buffer.from(image.split(',')[1]!, 'base64'))
        .metadata()
        .then(({ width }) => {
          if (width === 741) {
            res.writeHead(503, { 'content-type': 'text/plain' }).end('model is loading');
            return;
          }
          const content =
            'Here you go:\n```json\n{"caption": "A cup of coffee on a saucer.", "tags": ["Coffee", "cup", "saucer"]}\n```';
          res
            .writeHead(200, { 'content-type': 'application/json' })
            .end(JSON.stringify({ choices: [{ message: { role: 'assistant', content } }] }));
        });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

describe(
  'photo tags: objects from the offline detector, a caption from a vision endpoint',
  { skip: faceTestSetSkip() },
  () => {
    let h: MediaHarness;
    let vision: Awaited<ReturnType<typeof fakeVision>>;
    let dir: string;
    const ids = new Map<string, string>();

    before(async () => {
      vision = await fakeVision();
      process.env['MEMEX_VISION_URL'] = vision.url;
      process.env['MEMEX_VISION_MODEL'] = 'llava:13b';
      process.env['MEMEX_FACE_MODEL'] = 'off';
      h = await MediaHarness.start();
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'memex-tags-'));
      const files = await Promise.all(
        PICTURES.map(async (name) => {
          const file = path.join(dir, name.replace(/\.png$/, '.jpg'));
          fs.writeFileSync(file, await sharp(`${SKIMAGE}/${name}`).removeAlpha().jpeg().toBuffer());
          return file;
        }),
      );
      const itemIds = await h.ingestFiles(files);
      PICTURES.forEach((name, i) => ids.set(name, itemIds[i]!));
      for (const id of itemIds)
        await waitUntil(
          async () => ((await h.call(MediaGet, { item_id: id }).catch(() => null))?.tags.length ?? 0) > 0,
          `tags of ${id}`,
          { timeoutMs: 180_000 },
        );
    });

    after(async () => {
      await h?.stop();
      await vision?.close();
      fs.rmSync(dir, { recursive: true, force: true });
    });

    it('tags each photo with the COCO objects it shows', async () => {
      const coffee = await h.call(MediaGet, { item_id: ids.get('coffee.png')! });
      const motorcycle = await h.call(MediaGet, { item_id: ids.get('motorcycle_left.png')! });
      assert.ok(coffee.tags.includes('object:cup'), coffee.tags.join(' '));
      assert.deepEqual(motorcycle.tags, ['object:motorcycle']);
    });

    it('sends the preview to the configured vision model and keeps its caption and tags', async () => {
      const coffee = await h.call(MediaGet, { item_id: ids.get('coffee.png')! });
      assert.equal(coffee.caption, 'A cup of coffee on a saucer.');
      assert.ok(
        ['tag:coffee', 'tag:cup', 'tag:saucer'].every((t) => coffee.tags.includes(t)),
        coffee.tags.join(' '),
      );
      assert.equal(vision.requests.length, 2);
      assert.ok(vision.requests.every((r) => r.model === 'llava:13b' && r.image.startsWith('data:image/webp;base64,')));
    });

    it('a failing vision endpoint leaves the caption out, and the photo keeps its object tags', async () => {
      const motorcycle = await h.call(MediaGet, { item_id: ids.get('motorcycle_left.png')! });
      assert.equal(motorcycle.caption, null);
      assert.ok(motorcycle.tags.includes('object:motorcycle'), motorcycle.tags.join(' '));
    });
  },
);
