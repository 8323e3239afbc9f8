import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { EntityGet, ReviewDecide, ReviewList } from '@memex/contracts';
import { newId, type NamedDraft } from '@memex/bus';
import { ServiceHost } from '@memex/runtime';
import { itemEvent, snapshot, startGraph, type GraphHarness } from './testing/harness.js';

/** A vCard item's event, its cards' phones as the contacts handler reads them (number and E.164). */
function cardsItem(cards: Array<{ fullName: string; email: string; phone: string | null }>): NamedDraft {
  return itemEvent(newId(), 'contact', 'text/vcard', {
    format: 'vcard',
    filename: null,
    cards: cards.map((c) => ({
      fullName: c.fullName,
      emails: [{ address: c.email, types: [] }],
      phones: c.phone ? [{ number: c.phone, e164: c.phone.replace(/[^+\d]/g, ''), types: [] }] : [],
    })),
  });
}

describe('graph: contacts joined by phone', () => {
  let h: GraphHarness;
  before(async () => {
    h = await startGraph();
    await h.publish([
      cardsItem([
        { fullName: 'Ann Lee', email: 'ann@home.example', phone: '+1 212 555 0142' },
        { fullName: 'Bob Stone', email: 'bob@example.com', phone: '+44 20 7946 0958' },
      ]),
      // Another card (another account's contacts, an old export): one number, another address and name.
      cardsItem([
        { fullName: 'A. Lee', email: 'ann@work.example', phone: '+1 212 555 0142' },
        { fullName: 'Cy Park', email: 'cy@example.net', phone: '+33 1 23 45 67 89' },
        { fullName: 'Dee Park', email: 'dee@example.net', phone: '+33 1 23 45 67 89' },
      ]),
    ]);
  });
  after(async () => h.stop());

  const phoneMerges = async (seq = 0) =>
    (await h.call(ReviewList, { kind: 'merge', min_seq: seq })).items
      .filter((i) => /both have the phone/.test(i.summary))
      .map((i) => ({ id: i.id, keys: i.entities.map((e) => e.key).sort(), summary: i.summary }));

  test('a card’s phone is a thing its people have; one number on two people is a merge the review queue asks about, nothing merged', async () => {
    const ann = await h.call(EntityGet, { key: 'person:ann@home.example' });
    assert.ok(
      ann.facts.some(
        (f) => f.rel === 'has_phone' && 'entity' in f.other && f.other.entity.key === 'phone:+12125550142',
      ),
      'has_phone phone:+12125550142',
    );
    const phone = await h.call(EntityGet, { key: 'phone:+12125550142' });
    assert.deepEqual(phone.facts.map((f) => ('entity' in f.other ? f.other.entity.key : '')).sort(), [
      'person:ann@home.example',
      'person:ann@work.example',
    ]);
    const merges = await phoneMerges();
    assert.deepEqual(
      merges.map((m) => m.keys),
      [
        ['person:ann@home.example', 'person:ann@work.example'],
        ['person:cy@example.net', 'person:dee@example.net'],
      ],
    );
    assert.match(merges[0]!.summary, /both have the phone \+12125550142/);
    assert.equal((await h.call(EntityGet, { key: 'person:ann@work.example' })).resolved_from, null, 'not merged');
  });

  test('the owner’s answer decides: accepted merges the two, declined is not asked again', async () => {
    const [ann, cy] = await phoneMerges();
    await h.call(ReviewDecide, { id: ann!.id, decision: 'accept' });
    const { seq } = await h.call(ReviewDecide, { id: cy!.id, decision: 'reject' });
    assert.deepEqual(await phoneMerges(seq), []);
    const merged = await h.call(EntityGet, { key: 'person:ann@work.example', min_seq: seq });
    assert.deepEqual(merged.entity.keys.sort(), ['person:ann@home.example', 'person:ann@work.example']);
    assert.equal((await h.call(EntityGet, { key: 'person:dee@example.net' })).entity.keys.length, 1);
  });
});

describe('graph: one address, two names (a contact card and mail)', () => {
  let h: GraphHarness;
  before(async () => {
    h = await startGraph();
    await h.publish([
      itemEvent(newId(), 'email', 'message/rfc822', {
        from: [{ name: 'Annie L.', address: 'ann@home.example' }],
        to: [{ name: 'Me', address: 'me@example.com' }],
      }),
      itemEvent(newId(), 'email', 'message/rfc822', {
        from: [{ name: 'Annie L.', address: 'ann@home.example' }],
        to: [{ name: 'Me', address: 'me@example.com' }],
      }),
      cardsItem([
        { fullName: 'Ann Lee', email: 'ann@home.example', phone: null },
        // The same name as mail's, in other case and spacing: no question.
        { fullName: 'me', email: 'me@example.com', phone: null },
      ]),
    ]);
  });
  after(async () => h.stop());

  test('the review queue asks which name; nothing is renamed until the owner answers, and the answer outranks readings on replay', async () => {
    const { items } = await h.call(ReviewList, { kind: 'name' });
    assert.deepEqual(
      items.map((i) => [i.entities[0]!.key, i.name]),
      [['person:ann@home.example', 'Ann Lee']],
    );
    assert.match(items[0]!.summary, /“Ann Lee” on a contact card and “Annie L\.” in mail/);
    assert.equal(
      (await h.call(EntityGet, { key: 'person:ann@home.example' })).entity.name,
      'Annie L.',
      'mail, seen most',
    );

    const { seq } = await h.call(ReviewDecide, { id: items[0]!.id, decision: 'accept' });
    const ann = await h.call(EntityGet, { key: 'person:ann@home.example', min_seq: seq });
    assert.equal(ann.entity.name, 'Ann Lee');
    assert.ok(ann.entity.aliases.includes('Annie L.'));
    assert.deepEqual((await h.call(ReviewList, { kind: 'name', min_seq: seq })).items, []);
    await assert.rejects(h.call(ReviewDecide, { id: 'name:x:y', decision: 'accept' }), /not a review entry id/);

    // A replay rebuilds the same graph: the owner's name stands over the two mails that say otherwise.
    const live = await snapshot(h.env.config.databaseUrl);
    await h.app.get(ServiceHost).projector!.rebuild(h.env.config.databaseUrl);
    assert.deepEqual(await snapshot(h.env.config.databaseUrl), live);
    assert.equal((await h.call(EntityGet, { key: 'person:ann@home.example' })).entity.name, 'Ann Lee');
  });
});
