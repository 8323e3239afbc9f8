import { test } from 'node:test';
import assert from 'node:assert/strict';
import { clusterEvents, findTrips, photoEventThings, type Moment } from './events.js';

const HOME = { placeKey: 'place:geonames:2950159', placeName: 'Berlin', latitude: 52.52, longitude: 13.405 };
const ROME = { placeKey: 'place:geonames:3169070', placeName: 'Rome', latitude: 41.894, longitude: 12.483 };
const NOWHERE = { placeKey: null, placeName: null, latitude: null, longitude: null };

let n = 0;
function at(iso: string, where: Omit<Moment, 'itemId' | 'at' | 'localDay'>): Moment {
  return { itemId: `p${String(n++).padStart(3, '0')}`, at: Date.parse(iso), localDay: iso.slice(0, 10), ...where };
}

test('photos become events at gaps of hours and moves of kilometres, and a trip is a run away from home over a night', () => {
  const moments = [
    // A birthday at home: three photos in an evening.
    at('2024-05-04T18:00:00Z', HOME),
    at('2024-05-04T19:30:00Z', HOME),
    at('2024-05-04T21:00:00Z', HOME),
    // The next morning at home: a new event (a gap of over four hours).
    at('2024-05-05T10:00:00Z', HOME),
    // A weekend in Rome, Friday to Sunday, one photo without GPS in the middle.
    at('2024-06-07T15:00:00Z', ROME),
    at('2024-06-08T11:00:00Z', NOWHERE),
    at('2024-06-09T17:00:00Z', ROME),
    // Home again.
    at('2024-06-10T08:00:00Z', HOME),
    at('2024-06-11T08:00:00Z', HOME),
    // A day trip to Rome (no night away): not a trip.
    at('2024-07-01T09:00:00Z', ROME),
    at('2024-07-01T20:00:00Z', HOME),
  ];
  const events = clusterEvents(moments);
  assert.deepEqual(
    events.map((e) => [e.items.length, e.placeName]),
    [
      [3, 'Berlin'],
      [1, 'Berlin'],
      [1, 'Rome'],
      [1, null],
      [1, 'Rome'],
      [1, 'Berlin'],
      [1, 'Berlin'],
      [1, 'Rome'],
      [1, 'Berlin'],
    ],
  );
  // Two photos an hour apart but a thousand kilometres apart are two events.
  const moved = clusterEvents([at('2024-08-01T10:00:00Z', HOME), at('2024-08-01T11:00:00Z', ROME)]);
  assert.equal(moved.length, 2);

  const { home, trips } = findTrips(moments);
  assert.equal(home?.name, 'Berlin');
  assert.equal(trips.length, 1);
  assert.deepEqual([trips[0]!.nights, trips[0]!.places.map((p) => p.name), trips[0]!.items.length], [2, ['Rome'], 3]);
});

test('events and trips as graph things: keyed by their first photo, named by place and local day', () => {
  const moments = [
    at('2024-06-07T15:00:00Z', ROME),
    at('2024-06-09T17:00:00Z', ROME),
    at('2024-06-10T08:00:00Z', HOME),
    at('2024-06-11T08:00:00Z', HOME),
    at('2024-06-12T08:00:00Z', NOWHERE),
  ];
  const things = photoEventThings(moments);
  assert.deepEqual(things.home, { key: HOME.placeKey, name: 'Berlin' });
  assert.deepEqual(
    things.events.map((e) => [e.key, e.name, e.items.length]),
    [
      [`event:photos-${moments[0]!.itemId}`, 'Rome, 2024-06-07', 1],
      [`event:photos-${moments[1]!.itemId}`, 'Rome, 2024-06-09', 1],
      [`event:photos-${moments[2]!.itemId}`, 'Berlin, 2024-06-10', 1],
      [`event:photos-${moments[3]!.itemId}`, 'Berlin, 2024-06-11', 1],
      [`event:photos-${moments[4]!.itemId}`, 'Photos, 2024-06-12', 1],
    ],
  );
  assert.deepEqual(
    things.trips.map((t) => [t.key, t.name, t.items]),
    [[`trip:${moments[0]!.itemId}`, 'Trip to Rome, 2024-06-07 (2 nights)', [moments[0]!.itemId, moments[1]!.itemId]]],
  );
});
