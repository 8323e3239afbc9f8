import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { KindAndMeta, MailMeta } from '@memex/contracts';
import { itemMeta } from '@memex/testing';
import { anyWord, normalizeKey, parseRef } from './keys.js';
import {
  cleanName,
  isFreeMail,
  isPersonalDomain,
  knownTime,
  orgDomainOf,
  participantsOf,
  registrableDomain,
} from './mail.js';

test('organizations come from registrable domains, never from free mail', () => {
  assert.equal(orgDomainOf('ann@mail.cs.example.ac.uk'), 'example.ac.uk');
  assert.equal(orgDomainOf('bob@navstar1.mcom.com'), 'mcom.com');
  assert.equal(orgDomainOf('carol@acme.co.jp'), 'acme.co.jp');
  for (const free of [
    'x@gmail.com',
    'x@googlemail.com',
    'x@yahoo.co.uk',
    'x@yahoo.fr',
    'x@hotmail.de',
    'x@outlook.com',
    'x@live.com',
    'x@gmx.net',
    'x@web.de',
    'x@proton.me',
    'x@yandex.ru',
    'x@qq.com',
    'x@163.com',
    'x@icloud.com',
  ]) {
    assert.equal(orgDomainOf(free), null, free);
  }
  assert.equal(orgDomainOf('mailusr1@navstar1'), null);
  assert.equal(orgDomainOf('root@[192.168.0.1]'), null);
  assert.equal(registrableDomain('example'), null);
  assert.ok(isFreeMail('aol.com') && !isFreeMail('example.com'));
});

/** A message's people as the mail handler writes them: every list present, empty unless given. */
const people = (fields: Partial<MailMeta>) => itemMeta('email', fields).meta;

test('participants: each (relation, address) once, names cleaned, malformed addresses skipped', () => {
  const found = participantsOf(
    people({
      from: [{ name: '"Ann Lee"', address: 'Ann@Example.com' }],
      to: [
        { name: 'bob@example.com', address: 'bob@example.com' },
        { name: 'Undisclosed', address: '' },
        { name: '', address: 'ann@example.com' },
      ],
      cc: [
        { name: 'Carol', address: 'carol@example.org' },
        { name: 'Carol', address: 'carol@example.org' },
      ],
    }),
  );
  assert.deepEqual(found, [
    { rel: 'sent', address: 'ann@example.com', name: 'Ann Lee' },
    { rel: 'received', address: 'bob@example.com', name: '' },
    { rel: 'received', address: 'ann@example.com', name: '' },
    { rel: 'cc', address: 'carol@example.org', name: 'Carol' },
  ]);
});

test('keys are normalized; refs name items or things', () => {
  assert.equal(normalizeKey('person:Ann@Example.COM'), 'person:ann@example.com');
  assert.equal(normalizeKey('topic:Machine Learning!'), 'topic:machine-learning');
  assert.equal(normalizeKey('place:geonames:2950159'), 'place:geonames:2950159');
  assert.deepEqual(parseRef('item:01J00000000000000000000000'), { item: '01J00000000000000000000000' });
  assert.throws(() => parseRef('no key'), /not a key|neither a key/);
  assert.equal(anyWord('What about the renewal?'), 'what | about | the | renewal');
  assert.equal(anyWord('?!'), null);
});

test("a personal domain is its owner's own, not an organization; gateways are neither", () => {
  const own = (address: string, name: string) =>
    isPersonalDomain(orgDomainOf(address)!, { address, name: cleanName(name, address) });
  assert.equal(own('zed@zedshaw.example', 'Zed Shaw'), true);
  assert.equal(own('ann@annlee.example', 'Ann Lee'), true);
  assert.equal(own('jo@jo.example', ''), true);
  assert.equal(own('zoe@zoemuller.example', 'Zoë Müller'), true);
  assert.equal(own('ann@acme.example', 'Ann Lee'), false);
  assert.equal(own('zed@shaw.example', 'Zed Shaw'), false, 'a surname may be a family or a firm');
  for (const gateway of ['zed-Ab3dE9xQ@public.gmane.org', 'dev@googlegroups.com'])
    assert.equal(orgDomainOf(gateway), null);
});

test('participants: a list-rewritten From is the Reply-To person, list addresses are nobody', () => {
  const meta = people({
    from: [{ name: 'Zed Shaw via Dev', address: 'dev@lists.example.org' }],
    replyTo: [{ name: 'Zed Shaw', address: 'zed@zedshaw.example' }],
    to: [{ name: '', address: 'dev@lists.example.org' }],
    mailingList: 'dev.lists.example.org',
  });
  assert.deepEqual(participantsOf(meta), [{ rel: 'sent', address: 'zed@zedshaw.example', name: 'Zed Shaw' }]);
  // Rewritten, with no address to stand for: the person its name says, never the list as one.
  const zedByName = { rel: 'sent', address: '', name: 'Zed Shaw', key: 'person:zed-shaw' };
  assert.deepEqual(participantsOf({ ...meta, replyTo: [] }), [zedByName]);
  assert.deepEqual(
    participantsOf({ ...meta, replyTo: [], from: [{ name: '', address: 'dev@lists.example.org' }] }),
    [],
  );
});

/**
 * From lines as list gateways write them (shapes seen in public kernel, git and U-Boot archives:
 * gmane's `<local>-<hash of the domain>@public.gmane.org`, the hash holding + and /; groups.io's
 * `"<name> via groups.io" <<local>=<domain>@groups.io>`; Google Groups' "<name> via <group>").
 */
test('participants: a gateway-munged sender with no X-Original-From or Reply-To is known by name, or by the address the munging kept', () => {
  const sent = (from: Partial<MailMeta>['from'], extra: Partial<MailMeta> = {}) =>
    participantsOf(people({ from, ...extra }));
  const jane = { rel: 'sent', address: '', name: 'Jane Doe', key: 'person:jane-doe' };
  assert.deepEqual(sent([{ name: 'Jane Doe', address: 'jane.doe-Re5JQEeQqe8AvxtiuMwx3w@public.gmane.org' }]), [jane]);
  assert.deepEqual(sent([{ name: 'Christoph Lameter', address: 'clameter-sJ/iWh9BUns@public.gmane.org' }]), [
    { rel: 'sent', address: '', name: 'Christoph Lameter', key: 'person:christoph-lameter' },
  ]);
  assert.deepEqual(sent([{ name: 'Jane Doe via Group', address: 'group@googlegroups.com' }]), [jane]);
  assert.deepEqual(sent([{ name: 'Zoë Müller via Group', address: 'group@googlegroups.com' }]), [
    { rel: 'sent', address: '', name: 'Zoë Müller', key: 'person:zoe-muller' },
  ]);
  // The address is still there, behind an equals sign: that is the person.
  assert.deepEqual(sent([{ name: 'Saravana Kannan via groups.io', address: 'saravanak=google.com@groups.io' }]), [
    { rel: 'sent', address: 'saravanak@google.com', name: 'Saravana Kannan' },
  ]);
  assert.deepEqual(sent([{ name: 'Jane Doe', address: 'jane=example.com@lists.example.net' }]), [
    { rel: 'sent', address: 'jane@example.com', name: 'Jane Doe' },
  ]);
  // gmane munges every field: a recipient it munged is known by name; a group's own address is nobody.
  assert.deepEqual(
    participantsOf(
      people({
        from: [{ name: 'Li Zefan', address: 'lizefan-hv44wF8Li93QT0dZR+AlfA@public.gmane.org' }],
        to: [
          { name: 'Tejun Heo', address: 'tj-DgEjT+Ai2ygdnm+yROfE0A@public.gmane.org' },
          { name: 'Cgroups', address: 'cgroups@googlegroups.com' },
          { name: '', address: 'ann=example.org@groups.io' },
        ],
      }),
    ),
    [
      { rel: 'sent', address: '', name: 'Li Zefan', key: 'person:li-zefan' },
      { rel: 'received', address: '', name: 'Tejun Heo', key: 'person:tejun-heo' },
      { rel: 'received', address: 'ann@example.org', name: '' },
    ],
  );
  // None of them makes the gateway an organization.
  for (const gateway of ['jane.doe-Re5JQEeQqe8AvxtiuMwx3w@public.gmane.org', 'group@googlegroups.com', 'x@groups.io'])
    assert.equal(orgDomainOf(gateway), null);
  // An ordinary address with no list about it is left alone; a nameless gmane sender is nobody.
  assert.deepEqual(sent([{ name: 'Ann', address: 'ann-lee@example.com' }]), [
    { rel: 'sent', address: 'ann-lee@example.com', name: 'Ann' },
  ]);
  assert.deepEqual(sent([{ name: '', address: 'ann-XyZ12abc@public.gmane.org' }]), []);
});

test('participants: X-Original-From names the sender a list rewrote, before Reply-To (which lists often set to themselves)', () => {
  const zed = { rel: 'sent', address: 'zed@zedshaw.example', name: 'Zed Shaw' };
  const originalFrom = [{ name: 'Zed Shaw', address: 'zed@zedshaw.example' }];
  // Mailman's DMARC munging: "via" in the name, Reply-To the list itself.
  const mailman = people({
    from: [{ name: 'Zed Shaw via Dev', address: 'dev@lists.example.org' }],
    replyTo: [{ name: '', address: 'dev@lists.example.org' }],
    mailingList: 'dev.lists.example.org',
    originalFrom,
  });
  assert.deepEqual(participantsOf(mailman), [zed]);
  // Google Groups: the group's address under the sender's own name, no "via", no List-Id match.
  const groups = people({ from: [{ name: 'Zed Shaw', address: 'dev@googlegroups.com' }], originalFrom });
  assert.deepEqual(participantsOf(groups), [zed]);
  // A From the list left alone is the sender, whatever else the message says.
  const untouched = people({ from: [{ name: 'Zed Shaw', address: 'zed@zedshaw.example' }], originalFrom });
  assert.deepEqual(participantsOf(untouched), [zed]);
  // A list that rewrote From to another address of its own, without saying "via": X-Original-From tells.
  const rewritten = people({ from: [{ name: 'Zed Shaw', address: 'noreply@lists.example.net' }], originalFrom });
  assert.deepEqual(participantsOf(rewritten), [zed]);
});

test('a time is known unless ingest says the item is undated, or the clock that stamped it ran ahead', () => {
  const at = (occurred_at: string, data: KindAndMeta) => ({ occurred_at, recorded_at: '2026-12-01T00:00:00Z', data });
  assert.equal(
    knownTime(at('2021-03-02T10:00:00Z', itemMeta('email', { dateSource: 'header' }))),
    '2021-03-02T10:00:00Z',
  );
  assert.equal(knownTime(at('2026-12-01T00:00:00Z', itemMeta('email', { dateSource: null }))), null);
  // A document with no date of its own: the envelope carries the import time, the meta says undated.
  assert.equal(knownTime(at('2026-12-01T00:00:00Z', itemMeta('paper', { undated: true }))), null);
  assert.equal(knownTime(at('3609-01-01T00:00:00Z', itemMeta('document'))), null);
});
