import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { EntityGet, MemexError } from '@memex/contracts';
import { newId, type NamedDraft } from '@memex/bus';
import { ServiceHost } from '@memex/runtime';
import { itemEvent, snapshot, startGraph, type GraphHarness } from './testing/harness.js';

/** What services/media publishes when the named people whose faces are in a photo change. */
function peopleSeen(itemId: string, people: Array<{ key: string; name: string }>): NamedDraft {
  return {
    type: 'faces.people_seen',
    subject: `item:${itemId}`,
    actor: { kind: 'user', id: 'owner' },
    labels: [],
    data: { item_id: itemId, people: people.map((p) => ({ ...p, faces: 1 })) },
  };
}

const ADA = { key: 'person:ada-lovelace', name: 'Ada Lovelace' };
const GRACE = { key: 'person:grace-hopper', name: 'Grace Hopper' };
const notFound = (e: unknown) => e instanceof MemexError && e.code === 'not_found';

describe('graph: the people in photos (media faces.people_seen)', () => {
  let h: GraphHarness;
  const picnic = newId();
  const party = newId();
  before(async () => {
    h = await startGraph();
    await h.publish([
      itemEvent(picnic, 'photo', 'image/jpeg', { format: 'jpeg' }, '2025-07-14T10:30:00.000Z'),
      itemEvent(party, 'photo', 'image/jpeg', { format: 'jpeg' }, '2025-08-01T20:00:00.000Z'),
      peopleSeen(picnic, [ADA, GRACE]),
      peopleSeen(party, [ADA]),
    ]);
  });
  after(async () => h.stop());

  test('a named person is a person thing with its name; its photos are on its timeline (appears_in)', async () => {
    const ada = await h.call(EntityGet, { key: ADA.key });
    assert.equal(ada.entity.kind, 'person');
    assert.equal(ada.entity.name, 'Ada Lovelace');
    assert.deepEqual(
      ada.timeline.map((t) => [t.item.id, t.rels]).sort(),
      [
        [picnic, ['appears_in']],
        [party, ['appears_in']],
      ].sort(),
    );
  });

  test('a new list replaces the earlier one; deleting the photo takes its people away; a replay agrees', async () => {
    let seq = await h.publish([peopleSeen(picnic, [ADA])]);
    await assert.rejects(h.call(EntityGet, { key: GRACE.key, min_seq: seq }), notFound);
    seq = await h.publish([
      { type: 'item.deleted', subject: `item:${party}`, actor: { kind: 'user', id: 'owner' }, data: { id: party } },
    ]);
    const ada = await h.call(EntityGet, { key: ADA.key, min_seq: seq });
    assert.deepEqual(
      ada.timeline.map((t) => t.item.id),
      [picnic],
    );
    const live = await snapshot(h.env.config.databaseUrl);
    await h.app.get(ServiceHost).projector!.rebuild(h.env.config.databaseUrl);
    assert.deepEqual(await snapshot(h.env.config.databaseUrl), live);
  });
});
