import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { EntityGet, MemexError, type Place } from '@memex/contracts';
import { newId, type NamedDraft } from '@memex/bus';
import { ServiceHost } from '@memex/runtime';
import { itemEvent, snapshot, startGraph, type GraphHarness } from './testing/harness.js';

const PARIS: Place = {
  key: 'place:geonames:2988507',
  geonames_id: 2988507,
  name: 'Paris',
  country: 'FR',
  admin1: '11',
  latitude: 48.85341,
  longitude: 2.3488,
  distance_km: 1.2,
};
const LYON: Place = {
  key: 'place:geonames:2996944',
  geonames_id: 2996944,
  name: 'Lyon',
  country: 'FR',
  admin1: '84',
  latitude: 45.74846,
  longitude: 4.84671,
  distance_km: 0.4,
};

/** What services/media publishes after reading a photo (no renditions: the graph reads only the place). */
function photoAnalyzed(itemId: string, place: Place | null, pipeline = 'media@1'): NamedDraft {
  return {
    type: 'photo.analyzed',
    subject: `item:${itemId}`,
    actor: { kind: 'pipeline', id: pipeline },
    labels: [],
    data: { item_id: itemId, revision: 1, pipeline, renditions: [], rendition_problem: null, place },
  };
}

function videoAnalyzed(itemId: string, place: Place | null): NamedDraft {
  return {
    type: 'video.analyzed',
    subject: `item:${itemId}`,
    actor: { kind: 'pipeline', id: 'media@1' },
    labels: [],
    data: { item_id: itemId, revision: 1, pipeline: 'media@1', keyframes: [], keyframe_problem: null, place },
  };
}

const notFound = (e: unknown) => e instanceof MemexError && e.code === 'not_found';

describe('graph: places of photos and videos (media events)', () => {
  let h: GraphHarness;
  const louvre = newId();
  const seine = newId();
  const clip = newId();
  before(async () => {
    h = await startGraph();
    await h.publish([
      itemEvent(louvre, 'photo', 'image/jpeg', { format: 'jpeg' }, '2025-07-14T10:30:00.000Z'),
      itemEvent(seine, 'photo', 'image/jpeg', { format: 'jpeg' }, '2025-07-14T18:05:00.000Z'),
      itemEvent(clip, 'video', 'video/mp4', { format: 'mp4' }, '2025-07-16T12:00:00.000Z'),
      photoAnalyzed(louvre, PARIS),
      photoAnalyzed(seine, PARIS),
      videoAnalyzed(clip, LYON),
    ]);
  });
  after(async () => h.stop());

  async function linksTo(key: string): Promise<Array<{ src_item: string; valid_from: Date; basis: string }>> {
    const client = new pg.Client({ connectionString: h.env.config.databaseUrl });
    await client.connect();
    try {
      return (
        await client.query(
          `select src_item, valid_from, basis from graph.links where dst_key = $1 and rel = 'located_at' order by src_item`,
          [key],
        )
      ).rows;
    } finally {
      await client.end();
    }
  }

  test('a place is a place:geonames thing with its name, country and admin area; its photos are located_at it at their capture time', async () => {
    const card = await h.call(EntityGet, { key: PARIS.key });
    assert.equal(card.entity.kind, 'place');
    assert.equal(card.entity.name, 'Paris');
    assert.equal(card.entity.attrs['country'], 'FR');
    assert.equal(card.entity.attrs['admin1'], '11');
    assert.equal(card.entity.attrs['geonames_id'], PARIS.geonames_id);
    assert.deepEqual(
      card.timeline.map((t) => [t.item.id, t.rels]).sort(),
      [
        [louvre, ['located_at']],
        [seine, ['located_at']],
      ].sort(),
    );
    const links = await linksTo(PARIS.key);
    assert.deepEqual(
      links.map((l) => [l.src_item, l.valid_from.toISOString(), l.basis]),
      [
        [louvre, '2025-07-14T10:30:00.000Z', 'observed'],
        [seine, '2025-07-14T18:05:00.000Z', 'observed'],
      ].sort((a, b) => (a[0]! < b[0]! ? -1 : 1)),
    );
    const lyon = await h.call(EntityGet, { key: LYON.key });
    assert.deepEqual(
      lyon.timeline.map((t) => t.item.id),
      [clip],
      'a video with a place is located there too',
    );
  });

  test('a new analysis replaces the earlier place; deleting the items takes the place away; a replay rebuilds the same rows', async () => {
    let seq = await h.publish([photoAnalyzed(seine, LYON, 'media@2')]);
    const paris = await h.call(EntityGet, { key: PARIS.key, min_seq: seq });
    assert.deepEqual(
      paris.timeline.map((t) => t.item.id),
      [louvre],
    );
    const lyon = await h.call(EntityGet, { key: LYON.key });
    assert.deepEqual(lyon.timeline.map((t) => t.item.id).sort(), [clip, seine].sort());
    assert.equal(lyon.entity.name, 'Lyon');

    seq = await h.publish([
      { type: 'item.deleted', subject: `item:${louvre}`, actor: { kind: 'user', id: 'owner' }, data: { id: louvre } },
    ]);
    await assert.rejects(h.call(EntityGet, { key: PARIS.key, min_seq: seq }), notFound);
    assert.deepEqual(await linksTo(PARIS.key), []);

    const live = await snapshot(h.env.config.databaseUrl);
    assert.equal(live['places']!.length, 1, 'Paris is forgotten, Lyon is kept');
    await h.app.get(ServiceHost).projector!.rebuild(h.env.config.databaseUrl);
    assert.deepEqual(await snapshot(h.env.config.databaseUrl), live);
  });
});
