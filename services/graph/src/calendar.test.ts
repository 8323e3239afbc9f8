import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { EntityGet, EntityNeighbors, MemexError, ReviewList } from '@memex/contracts';
import { newId, type NamedDraft } from '@memex/bus';
import { itemEvent, startGraph, type GraphHarness } from './testing/harness.js';

const PERSON = (name: string, address: string, status = 'accepted') => ({
  name,
  address,
  status,
  role: 'req-participant',
});

/** The item.ingested event services/ingest publishes for a calendar file (meta as its calendar handler writes it). */
function calendarItem(id: string, events: Array<Record<string, unknown>>, method: string | null = null): NamedDraft {
  return itemEvent(id, 'event', 'text/calendar', {
    format: 'icalendar',
    method,
    calendarName: null,
    timeZone: null,
    filename: null,
    otherComponents: {},
    events,
  });
}

/** The item.ingested event of a vCard file (meta as the contacts handler writes it). */
function contactsItem(id: string, cards: Array<{ fullName: string; emails: string[] }>): NamedDraft {
  return itemEvent(id, 'contact', 'text/vcard', {
    format: 'vcard',
    filename: null,
    cards: cards.map((c) => ({
      fullName: c.fullName,
      emails: c.emails.map((address) => ({ address, types: [] })),
      phones: [],
    })),
  });
}

const REVIEW = {
  uid: 'review-42@example.com',
  summary: 'Quarterly review',
  location: 'Room 4',
  start: '2026-03-18T09:00:00.000Z',
  end: '2026-03-18T10:00:00.000Z',
  status: 'confirmed',
  organizer: { name: 'Ada Lovelace', address: 'ada@example.com' },
  attendees: [
    PERSON('Bob', 'bob@example.com'),
    PERSON('Carol', 'carol@example.com'),
    PERSON('Dan', 'dan@example.com', 'declined'),
  ],
};

describe('graph: meetings from calendar items', () => {
  let h: GraphHarness;
  const item = newId();
  before(async () => {
    h = await startGraph();
    await h.publish([calendarItem(item, [REVIEW])]);
  });
  after(async () => h.stop());

  test('an event is a thing with its time and place; its organizer and attendees (not who declined) attended it', async () => {
    const card = await h.call(EntityGet, { key: 'event:review-42@example.com' });
    assert.equal(card.entity.name, 'Quarterly review');
    const place = card.facts.find((f) => f.rel === 'located_at');
    assert.equal(place?.other && 'entity' in place.other && place.other.entity.key, 'place:room 4');
    const attended = card.facts
      .filter((f) => f.rel === 'attended')
      .map((f) => f.other && 'entity' in f.other && f.other.entity.key)
      .sort();
    assert.deepEqual(attended, ['person:ada@example.com', 'person:bob@example.com', 'person:carol@example.com']);
    assert.ok(card.facts.every((f) => f.evidence.some((e) => 'item' in e && e.item === item)));
  });

  test('people who meet get met_with links with the event as evidence, and the names the invitation gives', async () => {
    const bob = await h.call(EntityGet, { key: 'person:bob@example.com' });
    assert.equal(bob.entity.name, 'Bob');
    const met = bob.facts
      .filter((f) => f.rel === 'met_with')
      .map((f) => f.other && 'entity' in f.other && f.other.entity.key)
      .sort();
    assert.deepEqual(met, ['person:ada@example.com', 'person:carol@example.com']);
    const neighbors = await h.call(EntityNeighbors, { key: 'person:bob@example.com' });
    assert.ok(neighbors.neighbors.some((n) => n.entity.key === 'event:review-42@example.com'));
  });

  test('deleting the calendar item takes the event, its links and its names away', async () => {
    await h.publish([
      { type: 'item.deleted', subject: `item:${item}`, actor: { kind: 'user', id: 'owner' }, data: { id: item } },
    ]);
    await assert.rejects(
      h.call(EntityGet, { key: 'event:review-42@example.com' }),
      (e: unknown) => e instanceof MemexError && e.code === 'not_found',
    );
    await assert.rejects(
      h.call(EntityGet, { key: 'person:bob@example.com' }),
      (e: unknown) => e instanceof MemexError && e.code === 'not_found',
    );
  });
});

describe('graph: people from contact cards', () => {
  let h: GraphHarness;
  before(async () => {
    h = await startGraph();
    await h.publish([
      contactsItem(newId(), [{ fullName: 'Eve Example', emails: ['eve@example.com', 'Eve@Work.example'] }]),
    ]);
  });
  after(async () => h.stop());

  test('a card names the person of each of its addresses; two addresses of one card are a merge the review queue asks about', async () => {
    for (const key of ['person:eve@example.com', 'person:eve@work.example']) {
      const card = await h.call(EntityGet, { key });
      assert.equal(card.entity.name, 'Eve Example');
      assert.ok(
        card.timeline.some((t) => t.rels.includes('appears_in')),
        'the card is on their timeline',
      );
    }
    const { items } = await h.call(ReviewList, { kind: 'merge' });
    const merge = items.find((i) => i.entities.some((e) => e.key === 'person:eve@example.com'));
    assert.deepEqual(merge?.entities.map((e) => e.key).sort(), ['person:eve@example.com', 'person:eve@work.example']);
  });
});
