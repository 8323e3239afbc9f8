import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { EntityGet, EntityNeighbors, MemexError, ReviewList } from '@memex/contracts';
import { newId, type NamedDraft } from '@memex/bus';
import { ServiceHost } from '@memex/runtime';
import { calendarEvent } from '@memex/testing';
import { itemEvent, snapshot, startGraph, type GraphHarness } from './testing/harness.js';

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
    events: events.map(calendarEvent),
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

/** A CalendarEvent as calendar-sync's fromGoogleEvent reads one (the fields the graph uses, and the rest as Google gives them). */
function googleEvent(uid: string, summary: string, attendees: ReturnType<typeof PERSON>[]): Record<string, unknown> {
  return {
    uid,
    recurrenceId: null,
    sequence: 0,
    status: 'confirmed',
    summary,
    description: '',
    location: 'Harbour Café',
    start: '2026-04-02T12:00:00.000Z',
    end: '2026-04-02T13:00:00.000Z',
    allDay: false,
    startDate: null,
    endDate: null,
    timeZone: 'Europe/Berlin',
    recurrence: null,
    source: null,
    organizer: { name: 'Ada Lovelace', address: 'ada@example.com' },
    attendees,
    transparent: false,
    url: null,
  };
}

/** What calendar-sync publishes for a Google event it read (or found deleted at Google). */
function synced(googleId: string, event: Record<string, unknown> | null, etag = '"1"'): NamedDraft {
  const account = 'owner@example.com';
  return {
    type: 'calendar.event_synced',
    subject: `gcal:${account}/primary/${googleId}`,
    actor: { kind: 'connector', id: `google:${account}` },
    labels: [],
    data: {
      account,
      calendar_id: 'primary',
      google_id: googleId,
      etag,
      deleted: event === null,
      ...(event ? { event } : {}),
    },
  };
}

describe('graph: meetings from Google Calendar (calendar-sync)', () => {
  let h: GraphHarness;
  const invitation = newId();
  const source = 'google:owner@example.com/primary/';
  const attendedBy = async (key: string) =>
    (await h.call(EntityGet, { key })).facts
      .filter((f) => f.rel === 'attended')
      .map((f) => f.other && 'entity' in f.other && f.other.entity.key)
      .sort();
  before(async () => {
    h = await startGraph();
    await h.publish([
      // The same meeting as an .ics file and in Google; and one only Google has.
      calendarItem(invitation, [REVIEW]),
      synced(
        'rev42',
        googleEvent(REVIEW.uid, 'Quarterly review', [
          PERSON('Bob', 'bob@example.com'),
          PERSON('Erin', 'erin@example.com'),
        ]),
      ),
      synced(
        'lunch1',
        googleEvent('lunch-1@google.com', 'Lunch', [
          PERSON('Frank', 'frank@example.com'),
          PERSON('Grace', 'grace@example.com'),
        ]),
      ),
    ]);
  });
  after(async () => h.stop());

  test('a synced event is an event:<UID> thing like an imported one: attendees, place, met_with, the synced event as evidence', async () => {
    const lunch = await h.call(EntityGet, { key: 'event:lunch-1@google.com' });
    assert.equal(lunch.entity.name, 'Lunch');
    assert.deepEqual(await attendedBy('event:lunch-1@google.com'), [
      'person:ada@example.com',
      'person:frank@example.com',
      'person:grace@example.com',
    ]);
    assert.ok(
      lunch.facts.some(
        (f) => f.rel === 'located_at' && f.other && 'entity' in f.other && f.other.entity.key === 'place:harbour café',
      ),
    );
    assert.ok(lunch.facts.every((f) => f.evidence.some((e) => e.item === `${source}lunch1`)));
    const frank = await h.call(EntityGet, { key: 'person:frank@example.com' });
    assert.equal(frank.entity.name, 'Frank');
    const met = frank.facts.find(
      (f) =>
        f.rel === 'met_with' && f.other && 'entity' in f.other && f.other.entity.key === 'person:grace@example.com',
    );
    assert.deepEqual(
      met?.evidence.map((e) => e.item),
      [`${source}lunch1`],
    );

    // The meeting both the .ics file and Google know is one thing with both as evidence; Google's attendee joins it.
    assert.deepEqual(await attendedBy('event:review-42@example.com'), [
      'person:ada@example.com',
      'person:bob@example.com',
      'person:carol@example.com',
      'person:erin@example.com',
    ]);
    const review = await h.call(EntityGet, { key: 'event:review-42@example.com' });
    const bob = review.facts.find(
      (f) => f.rel === 'attended' && f.other && 'entity' in f.other && f.other.entity.key === 'person:bob@example.com',
    );
    assert.deepEqual(bob?.evidence.map((e) => e.item).sort(), [`${source}rev42`, invitation].sort());
  });

  test('a change at Google replaces what the event said, a deletion takes it away, and a replay rebuilds the same rows', async () => {
    // Grace declined and the lunch moved: she no longer attended it, and nothing else knows her.
    let seq = await h.publish([
      synced(
        'lunch1',
        googleEvent('lunch-1@google.com', 'Team lunch', [
          PERSON('Frank', 'frank@example.com'),
          PERSON('Grace', 'grace@example.com', 'declined'),
        ]),
        '"2"',
      ),
    ]);
    const lunch = await h.call(EntityGet, { key: 'event:lunch-1@google.com', min_seq: seq });
    assert.equal(lunch.entity.name, 'Team lunch');
    assert.deepEqual(await attendedBy('event:lunch-1@google.com'), [
      'person:ada@example.com',
      'person:frank@example.com',
    ]);
    await assert.rejects(
      h.call(EntityGet, { key: 'person:grace@example.com' }),
      (e: unknown) => e instanceof MemexError && e.code === 'not_found',
    );

    // Deleted at Google: the lunch and Frank go; the review stays on the .ics file's word, without Erin.
    seq = await h.publish([synced('lunch1', null), synced('rev42', null)]);
    await assert.rejects(
      h.call(EntityGet, { key: 'event:lunch-1@google.com', min_seq: seq }),
      (e: unknown) => e instanceof MemexError && e.code === 'not_found',
    );
    await assert.rejects(
      h.call(EntityGet, { key: 'person:frank@example.com' }),
      (e: unknown) => e instanceof MemexError && e.code === 'not_found',
    );
    assert.deepEqual(await attendedBy('event:review-42@example.com'), [
      'person:ada@example.com',
      'person:bob@example.com',
      'person:carol@example.com',
    ]);

    const live = await snapshot(h.env.config.databaseUrl);
    await h.app.get(ServiceHost).projector!.rebuild(h.env.config.databaseUrl);
    assert.deepEqual(await snapshot(h.env.config.databaseUrl), live);
  });
});
