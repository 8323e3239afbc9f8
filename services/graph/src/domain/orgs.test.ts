import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Participant } from './mail.js';
import {
  domainWriterOf,
  evidenceOf,
  isOrganization,
  institutionSuffix,
  OrgLedger,
  peopleCount,
  standingEvidence,
  type DomainWriter,
} from './orgs.js';

let n = 0;
/** A message's writer: its sender unless `rel` says otherwise. */
const writer = (address: string, name: string, rel: Participant['rel'] = 'sent', mailingList: string | null = null) =>
  domainWriterOf({ rel, address, name }, `item${++n}`, '2024-01-01T00:00:00Z', mailingList);

/** The works_at each message gets, by person, from a fresh ledger. */
function works(messages: (DomainWriter | null)[][]): string[][] {
  const ledger = new OrgLedger(new Set(), new Map());
  return messages.map((m) => ledger.take(m.filter((w): w is DomainWriter => w !== null)).map((w) => w.person));
}

test("one person's vanity domain is theirs, however it is named; a second person makes it an organization", () => {
  // Not named after its writer, so isPersonalDomain alone cannot tell.
  const jane = () => writer('jane@moonbase.example', 'Jane Doe');
  assert.deepEqual(works([[jane()], [jane()], [writer('shop@moonbase.example', 'Jane Doe', 'received')]]), [
    [],
    [],
    [],
  ]);
  // Raj at the same domain: the domain is an organization, and Jane works there since her first message.
  assert.deepEqual(works([[jane()], [jane()], [writer('raj@moonbase.example', 'Raj Patel')], [jane()]]), [
    [],
    [],
    ['person:jane@moonbase.example', 'person:jane@moonbase.example', 'person:raj@moonbase.example'],
    ['person:jane@moonbase.example'],
  ]);
  // A colleague writing to another address at the domain, named or not, is evidence enough.
  assert.deepEqual(works([[writer('ann@acme.example', 'Ann Lee'), writer('carol@acme.example', '', 'cc')]]), [
    ['person:ann@acme.example', 'person:carol@acme.example'],
  ]);
  // Two colleagues in one message are evidence enough.
  assert.deepEqual(works([[writer('ann@acme.example', 'Ann Lee'), writer('bob@acme.example', 'Bob', 'cc')]]), [
    ['person:ann@acme.example', 'person:bob@acme.example'],
  ]);
});

test("a vanity domain's aliases under its owner's name, and unnamed recipients, are one person", () => {
  const aliases = [
    writer('me@moonbase.example', 'Jane Doe'),
    writer('amazon@moonbase.example', 'Jane Doe', 'received'),
    writer('github@moonbase.example', '', 'received'),
    writer('jane@moonbase.example', 'JANE DOE'),
    writer('me@moonbase.example', 'Jane'),
  ].filter((w): w is DomainWriter => w !== null);
  assert.equal(peopleCount(aliases), 1);
  assert.equal(peopleCount([...aliases, writer('raj@moonbase.example', 'Raj')!]), 2);
  // A name the domain is made of keeps the writer out of it altogether (isPersonalDomain).
  assert.equal(writer('zed@zedshaw.example', 'Zed Shaw'), null);
  assert.equal(writer('x@gmail.com', 'X'), null);
});

test("an institution's suffix or a list the domain hosts makes it an organization at once", () => {
  assert.equal(institutionSuffix('ox.ac.uk'), '.ac.uk');
  assert.equal(institutionSuffix('mit.edu'), '.edu');
  assert.equal(institutionSuffix('toyota.co.jp'), '.co.jp');
  assert.equal(institutionSuffix('acme.co.uk'), null);
  assert.equal(institutionSuffix('moonbase.example'), null);
  assert.match(standingEvidence('ox.ac.uk', null)!, /institution.*\.ac\.uk/);
  assert.match(standingEvidence('example.org', 'dev.lists.example.org')!, /mailing list dev\.lists\.example\.org/);
  assert.equal(standingEvidence('example.org', 'dev.lists.other.org'), null);
  assert.deepEqual(works([[writer('ann@cs.ox.ac.uk', 'Ann Lee')]]), [['person:ann@cs.ox.ac.uk']]);
  assert.deepEqual(works([[writer('ann@example.org', 'Ann Lee', 'sent', 'dev.lists.example.org')]]), [
    ['person:ann@example.org'],
  ]);
});

test('whether a domain is an organization is a function of its writers, whatever their order', () => {
  const ledger = new OrgLedger(new Set(['acme.example']), new Map());
  ledger.take([writer('ann@acme.example', 'Ann')!, writer('jane@moonbase.example', 'Jane')!]);
  ledger.take([writer('kim@solo.example', 'Kim')!]);
  const lee = writer('lee@solo.example', 'Lee')!;
  ledger.take([lee]);
  assert.deepEqual(
    ledger.added.map((w) => w.person),
    ['person:ann@acme.example', 'person:jane@moonbase.example', 'person:kim@solo.example', 'person:lee@solo.example'],
  );
  assert.deepEqual([...ledger.promoted], ['solo.example']);
  const kim = ledger.added[2]!;
  assert.ok(isOrganization([lee, kim]) && isOrganization([kim, lee]));
  // Lee's message deleted: Kim alone is no organization, as if Lee had never written.
  assert.ok(!isOrganization([kim]));
  assert.equal(evidenceOf([kim, lee]), 'several people write from it');
  const list = writer('ann@example.org', 'Ann', 'sent', 'dev.lists.example.org')!;
  assert.ok(isOrganization([list]));
  assert.equal(evidenceOf([kim, list]), 'it hosts the mailing list dev.lists.example.org');
});
