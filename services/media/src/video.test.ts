import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { INestApplicationContext } from '@nestjs/common';
import {
  Ingest,
  OWNER_SCOPE,
  ItemsDelete,
  MediaGet,
  MediaKeyframe,
  MediaMoments,
  MemexError,
  Search,
  type ResultOf,
} from '@memex/contracts';
import { BlobStore } from '@memex/blobs';
import { IngestModule } from '@memex/ingest';
import { callMethod } from '@memex/bus';
import { startService } from '@memex/runtime';
import { SearchHarness } from '@memex/search/testing';
import { createTestEnv, waitUntil } from '@memex/testing';
import { MediaModule } from './media.module.js';
import { fakeTranscriber, recordingToolsSkip, spokenVideo, type FakeTranscriber } from './testing/recordings.js';

const SPEECH = 'the meeting moves to thursday. please bring the banana bread.';
const SPEECH_AT = 4;

describe(
  'video: keyframes at scene changes, and a transcript hit at the right second',
  { skip: await recordingToolsSkip() },
  () => {
    let h: SearchHarness;
    let services: INestApplicationContext[] = [];
    let transcriber: FakeTranscriber;
    before(async () => {
      // What the whisper endpoint would say about the clip: the speech, at the second it starts.
      transcriber = await fakeTranscriber([
        {
          start: SPEECH_AT,
          end: SPEECH_AT + 3.6,
          text: ' The meeting moves to Thursday. Please bring the banana bread.',
        },
      ]);
      process.env['MEMEX_TRANSCRIBE_URL'] = transcriber.url;
      const env = await createTestEnv();
      h = await SearchHarness.start({ env, workers: 1 });
      services = [
        await startService((config) => IngestModule.register(config), env.config),
        await startService((config) => MediaModule.register(config), env.config),
      ];
    });
    after(async () => {
      delete process.env['MEMEX_TRANSCRIBE_URL'];
      for (const app of services.reverse()) await app.close();
      await h?.stop();
      await transcriber?.close();
    });

    it('reads the container, finds the scene changes, transcribes through the endpoint, and search opens the video at the second the words were said', async () => {
      const video = await spokenVideo(SPEECH, SPEECH_AT);
      const { results, seq } = await callMethod(
        h.bus,
        Ingest,
        {
          items: [
            {
              type: 'video/mp4',
              data: video.toString('base64'),
              source: { kind: 'folder', id: 'videos' },
              external_id: 'clip.mp4',
              attributes: { filename: 'clip.mp4' },
            },
          ],
        },
        // Transcripts run while ingest parses: slow on a busy machine.
        { scope: OWNER_SCOPE, timeoutMs: 300_000 },
      );
      const id = results[0]!.id!;
      assert.equal(results[0]!.status, 'created', results[0]!.reason);
      // The endpoint got 16 kHz mono WAV and was asked for segments.
      assert.deepEqual(
        transcriber.requests.map((r) => [r.model, r.format, r.audioIsWav]),
        [['whisper-1', 'verbose_json', true]],
      );

      let item: ResultOf<typeof MediaGet> | undefined;
      await waitUntil(
        async () =>
          (item = await h.call(MediaGet, { item_id: id, min_seq: seq }).catch(() => undefined))?.status === 'analyzed',
        'the video analyzed',
        { timeoutMs: 60_000 },
      );
      assert.equal(item!.kind, 'video');
      assert.equal(item!.occurred_at, '2024-05-01T10:00:00.000Z');
      const meta = item!.meta as {
        duration: number;
        video: { codec: string; width: number };
        audio: { codec: string };
        gps: { latitude: number };
      };
      assert.ok(Math.abs(meta.duration - 9) < 0.2, `duration ${meta.duration}`);
      assert.deepEqual([meta.video.codec, meta.video.width, meta.audio.codec], ['h264', 320, 'aac']);
      assert.equal(meta.gps.latitude, 48.8584);
      // The nearest GeoNames place to the Eiffel tower's coordinates is Neuilly-sur-Seine's centre, not Paris's.
      assert.deepEqual([item!.place?.name, item!.place?.country], ['Neuilly-sur-Seine', 'FR']);
      // Keyframes: the first frame and the two scene changes, each a thumbnail in the blob store.
      assert.deepEqual(
        item!.keyframes.map((k) => Math.round(k.at)),
        [0, 3, 6],
      );
      const blobs = new BlobStore(h.env.config.blobsDir);
      for (const frame of item!.keyframes) assert.ok(await blobs.has(frame.sha256));
      // memex.media.keyframe serves each one's WebP bytes by its second; a second with none is not found, saying which there are.
      for (const frame of item!.keyframes) {
        const picture = await h.call(MediaKeyframe, { item_id: id, at: frame.at });
        const webp = Buffer.from(picture.data, 'base64');
        assert.equal(webp.subarray(8, 12).toString('latin1'), 'WEBP');
        assert.deepEqual([picture.width, picture.height], [frame.width, frame.height]);
      }
      await assert.rejects(
        h.call(MediaKeyframe, { item_id: id, at: 1.5 }),
        (e: MemexError) => e.code === 'not_found' && e.message.includes('its keyframes are at '),
      );

      await h.settle();
      await waitUntil(
        async () => (await h.call(Search, { q: 'banana', mode: 'keyword' })).hits.length > 0,
        'the transcript in the keyword index',
        { timeoutMs: 60_000 },
      );
      const hits = (await h.call(Search, { q: 'banana bread', mode: 'keyword' })).hits;
      assert.deepEqual(
        hits.map((hit) => hit.id),
        [id],
      );
      const { moments } = await h.call(MediaMoments, { item_id: id, q: 'banana bread' });
      assert.deepEqual(
        moments.map((m) => m.start),
        [SPEECH_AT],
      );

      // Deleting the video removes its keyframes.
      const deleted = await h.call(ItemsDelete, { id });
      // Read at the deletion: its keyframes go inside the transaction that drops the row, a moment before it commits.
      await assert.rejects(
        h.call(MediaGet, { item_id: id, min_seq: deleted.seq }),
        (e: MemexError) => e.code === 'not_found',
      );
      for (const frame of item!.keyframes) assert.equal(await blobs.has(frame.sha256), false, 'keyframe removed');
    });
  },
);
