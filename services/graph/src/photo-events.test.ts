import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { EntityGet, MemexError } from '@memex/contracts';
import { newId, type NamedDraft } from '@memex/bus';
import { ServiceHost } from '@memex/runtime';
import { itemEvent, snapshot, startGraph, type GraphHarness } from './testing/harness.js';

const PARIS = { key: 'place:geonames:2988507', name: 'Paris' };
const LYON = { key: 'place:geonames:2996944', name: 'Lyon' };
const notFound = (e: unknown) => e instanceof MemexError && e.code === 'not_found';

/** What services/media publishes when its photo events and trips change (the whole list). */
function photoEventsFound(data: {
  events: Array<{ key: string; name: string; start: string; end: string; place: typeof PARIS | null; items: string[] }>;
  trips: Array<{
    key: string;
    name: string;
    start: string;
    end: string;
    nights: number;
    places: Array<typeof PARIS>;
    items: string[];
  }>;
}): NamedDraft {
  return {
    type: 'photo_events.found',
    subject: 'photo_events:all',
    actor: { kind: 'pipeline', id: 'media@1' },
    labels: [],
    data: { home: LYON, ...data },
  };
}

describe('graph: photo events and trips (media photo_events.found)', () => {
  let h: GraphHarness;
  const [louvre, seine, home1] = [newId(), newId(), newId()];
  const event = `event:photos-${louvre.toLowerCase()}`;
  const trip = `trip:${louvre.toLowerCase()}`;
  before(async () => {
    h = await startGraph();
    await h.publish([
      itemEvent(louvre, 'photo', 'image/jpeg', { format: 'jpeg' }, '2025-07-14T10:30:00.000Z'),
      itemEvent(seine, 'photo', 'image/jpeg', { format: 'jpeg' }, '2025-07-15T18:05:00.000Z'),
      itemEvent(home1, 'photo', 'image/jpeg', { format: 'jpeg' }, '2025-07-20T09:00:00.000Z'),
      photoEventsFound({
        events: [
          {
            key: event,
            name: 'Paris, 2025-07-14',
            start: '2025-07-14T10:30:00.000Z',
            end: '2025-07-14T10:30:00.000Z',
            place: PARIS,
            items: [louvre],
          },
          {
            key: `event:photos-${seine.toLowerCase()}`,
            name: 'Paris, 2025-07-15',
            start: '2025-07-15T18:05:00.000Z',
            end: '2025-07-15T18:05:00.000Z',
            place: PARIS,
            items: [seine],
          },
        ],
        trips: [
          {
            key: trip,
            name: 'Trip to Paris, 2025-07-14 (1 night)',
            start: '2025-07-14T10:30:00.000Z',
            end: '2025-07-15T18:05:00.000Z',
            nights: 1,
            places: [PARIS],
            items: [louvre, seine],
          },
        ],
      }),
    ]);
  });
  after(async () => h.stop());

  test('an event and a trip are things with their names; their photos are part_of them; they are located_at their place (the first photo as evidence)', async () => {
    const card = await h.call(EntityGet, { key: event });
    assert.equal(card.entity.kind, 'event');
    assert.equal(card.entity.name, 'Paris, 2025-07-14');
    assert.deepEqual(
      card.timeline.map((t) => [t.item.id, t.rels]),
      [[louvre, ['located_at', 'part_of']]],
    );
    const away = await h.call(EntityGet, { key: trip });
    assert.equal(away.entity.kind, 'trip');
    assert.equal(away.entity.name, 'Trip to Paris, 2025-07-14 (1 night)');
    assert.deepEqual(away.timeline.map((t) => t.item.id).sort(), [louvre, seine].sort());
    assert.ok(
      away.facts.some(
        (f) =>
          f.rel === 'located_at' && f.direction === 'out' && 'entity' in f.other && f.other.entity.key === PARIS.key,
      ),
      JSON.stringify(away.facts),
    );
  });

  test('a new list replaces the earlier one; deleting a photo takes it out; a replay agrees', async () => {
    let seq = await h.publish([
      photoEventsFound({
        events: [
          {
            key: event,
            name: 'Paris, 2025-07-14',
            start: '2025-07-14T10:30:00.000Z',
            end: '2025-07-15T18:05:00.000Z',
            place: PARIS,
            items: [louvre, seine],
          },
        ],
        trips: [],
      }),
    ]);
    await assert.rejects(h.call(EntityGet, { key: trip, min_seq: seq }), notFound);
    const card = await h.call(EntityGet, { key: event });
    assert.deepEqual(card.timeline.map((t) => t.item.id).sort(), [louvre, seine].sort());
    seq = await h.publish([
      { type: 'item.deleted', subject: `item:${seine}`, actor: { kind: 'user', id: 'owner' }, data: { id: seine } },
    ]);
    const after = await h.call(EntityGet, { key: event, min_seq: seq });
    assert.deepEqual(
      after.timeline.map((t) => t.item.id),
      [louvre],
    );
    const live = await snapshot(h.env.config.databaseUrl);
    await h.app.get(ServiceHost).projector!.rebuild(h.env.config.databaseUrl);
    assert.deepEqual(await snapshot(h.env.config.databaseUrl), live);
  });
});
