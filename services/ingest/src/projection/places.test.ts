import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Ingest, ItemsDelete, ItemsGet, PhotoAnalyzed, type Place } from '@memex/contracts';
import { sql, type Kysely } from 'kysely';
import { EventPublisher } from '@memex/bus';
import { DATABASE } from '@memex/runtime';
import { b64, startIngest, type IngestHarness } from '../testing/service.js';

let h: IngestHarness;
before(async () => {
  h = await startIngest();
});
after(async () => h.stop());

const lyon: Place = {
  key: 'place:geonames:2996944',
  geonames_id: 2996944,
  name: 'Lyon',
  country: 'FR',
  admin1: '84',
  latitude: 45.748,
  longitude: 4.847,
  distance_km: 1.2,
};

test('memex.items.get shows where media placed a photo (the latest analysis); it goes with the item', async () => {
  const created = await h.call(Ingest, {
    items: [{ type: 'text/plain', data: b64('stand-in bytes'), source: { kind: 'test', id: 'x' }, external_id: 'a' }],
  });
  const id = created.results[0]!.id!;
  assert.equal((await h.call(ItemsGet, { id, min_seq: created.seq })).place, null);

  const media = new EventPublisher(h.bus, 'media');
  const analyzed = (place: Place | null) =>
    media.publish(PhotoAnalyzed, {
      subject: `item:${id}`,
      actor: { kind: 'pipeline', id: 'media@1' },
      data: { item_id: id, revision: 1, pipeline: 'media@1', renditions: [], rendition_problem: 'test', place },
    });
  let { seq } = await analyzed(lyon);
  assert.deepEqual((await h.call(ItemsGet, { id, min_seq: seq })).place, {
    key: 'place:geonames:2996944',
    name: 'Lyon',
    country: 'FR',
  });
  ({ seq } = await analyzed(null));
  assert.equal(
    (await h.call(ItemsGet, { id, min_seq: seq })).place,
    null,
    'a newer analysis without a place clears it',
  );
  ({ seq } = await analyzed(lyon));

  const deleted = await h.call(ItemsDelete, { id });
  await assert.rejects(h.call(ItemsGet, { id, min_seq: deleted.seq }), /no item/);
  const db = h.app.get<Kysely<unknown>>(DATABASE);
  const left = await sql<{ n: number }>`select count(*)::int as n from places`.execute(db);
  assert.equal(left.rows[0]!.n, 0, 'the place went with the item');
});
