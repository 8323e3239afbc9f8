import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import {
  AccountsSync,
  ContactsCandidates,
  ContactsCandidatesDecide,
  ContactsCreate,
  ContactsSync,
  ContactsUpdate,
  MailAccounts,
  MemexError,
} from '@memex/contracts';
import { createDatabase } from '@memex/db';
import { startGoogleCalendar, type GoogleHarness } from './testing/google.js';

const ACCOUNT = 'owner@example.com';

describe('calendar-sync: Google contacts (People v1)', () => {
  let h: GoogleHarness;
  let db: ReturnType<typeof createDatabase<Record<string, never>>>;
  let seq = 0;
  const sync = async () => {
    const result = await h.call(ContactsSync, { account: ACCOUNT });
    seq = result.seq;
    return result.accounts[0]!;
  };
  /** The contact items ingest holds for the account (once its read model has the sync's writes), by title. */
  const items = async () => {
    await h.call(MailAccounts, { min_seq: seq });
    return (
      await sql<{
        id: string;
        title: string;
        meta: { cards: Array<{ emails: Array<{ address: string }>; categories: string[] }> };
      }>`
        select i.id, i.title, i.meta from ingest.items i where i.source_kind = 'contacts' and i.parent_id is null order by i.title`.execute(
        db,
      )
    ).rows.map((r) => ({
      id: r.id,
      title: r.title,
      emails: r.meta.cards[0]!.emails.map((e) => e.address),
      categories: r.meta.cards[0]!.categories,
    }));
  };

  before(async () => {
    h = await startGoogleCalendar();
    db = createDatabase<Record<string, never>>(h.env.config.databaseUrl, { schema: 'public' });
    const friends = h.people.addGroup('friends1', 'Friends');
    h.people.put({
      resourceName: 'people/c1',
      names: [{ displayName: 'Ann Lee', givenName: 'Ann', familyName: 'Lee' }],
      emailAddresses: [{ value: 'ann@example.com', type: 'home' }],
      phoneNumbers: [{ value: '+1 555 0100' }],
      memberships: [{ contactGroupMembership: { contactGroupResourceName: friends } }],
    });
    h.people.put({
      resourceName: 'people/c2',
      names: [{ displayName: 'Bob Stone' }],
      emailAddresses: [{ value: 'bob@example.com' }, { value: 'bob@work.example', type: 'work' }],
    });
    await h.connect(ACCOUNT);
  });
  after(async () => {
    await db?.destroy();
    await h?.stop();
  });

  it('first sync: each contact a vCard item under contacts:<account>, its groups as categories', async () => {
    assert.deepEqual(await sync(), { account: ACCOUNT, mode: 'first', changed: 2 });
    assert.deepEqual(
      (await items()).map(({ title, emails, categories }) => ({ title, emails, categories })),
      [
        { title: 'Ann Lee', emails: ['ann@example.com'], categories: ['Friends'] },
        { title: 'Bob Stone', emails: ['bob@example.com', 'bob@work.example'], categories: [] },
      ],
    );
  });

  it('incremental with the sync token: an edit updates the same item, a deletion deletes it', async () => {
    const [ann] = await items();
    h.people.put({
      resourceName: 'people/c1',
      names: [{ displayName: 'Ann Lee-Smith' }],
      emailAddresses: [{ value: 'ann@example.com' }],
    });
    h.people.remove('people/c2');
    assert.deepEqual(await sync(), { account: ACCOUNT, mode: 'incremental', changed: 2 });
    const after = await items();
    assert.deepEqual(
      after.map((i) => [i.id, i.title]),
      [[ann!.id, 'Ann Lee-Smith']],
    );
  });

  it('an expired sync token: everything listed again, nothing unchanged mirrored twice', async () => {
    h.people.expireTokens();
    assert.deepEqual(await sync(), { account: ACCOUNT, mode: 'resync', changed: 0 });
    assert.equal((await items()).length, 1);
  });

  it('an edit in the memex goes to Google with the etag; a 412-like stale etag re-reads, merges other fields, refuses the same field', async () => {
    const written = await h.call(ContactsUpdate, {
      account: ACCOUNT,
      resource_name: 'people/c1',
      phones: ['+1 555 0199'],
    });
    seq = written.seq;
    assert.equal(written.merged, false);
    assert.deepEqual(
      h.people.person('people/c1')?.phoneNumbers?.map((p) => p.value),
      ['+1 555 0199'],
    );
    // Someone renames Ann at Google; the memex has not synced since.
    h.people.edit('people/c1', { names: [{ displayName: 'Ann L.' }] });
    await assert.rejects(
      h.call(ContactsUpdate, { account: ACCOUNT, resource_name: 'people/c1', name: 'Ann Smith' }),
      (e: unknown) => e instanceof MemexError && e.code === 'conflict' && /name: "Ann L\." there/.test(e.message),
    );
    assert.equal(h.people.person('people/c1')?.names?.[0]?.displayName, 'Ann L.', 'their rename stands');
    const merged = await h.call(ContactsUpdate, {
      account: ACCOUNT,
      resource_name: 'people/c1',
      addresses: ['1 Main St, Springfield'],
    });
    seq = merged.seq;
    assert.equal(merged.merged, true);
    const ann = h.people.person('people/c1')!;
    assert.deepEqual(
      [ann.names?.[0]?.displayName, ann.addresses?.[0]?.formattedValue],
      ['Ann L.', '1 Main St, Springfield'],
    );
    assert.deepEqual(
      (await items()).map((i) => i.title),
      ['Ann L.'],
      "the memex card is Google's again",
    );
  });

  it('a contact the owner confirms is created at Google in the group "memex" and mirrored at once', async () => {
    const created = await h.call(ContactsCreate, {
      account: ACCOUNT,
      name: 'Carol Diaz',
      emails: ['carol@example.com'],
    });
    seq = created.seq;
    const carol = h.people.person(created.resource_name)!;
    assert.deepEqual(
      carol.emailAddresses?.map((e) => e.value),
      ['carol@example.com'],
    );
    const carolItem = (await items()).find((i) => i.title === 'Carol Diaz');
    assert.deepEqual(carolItem?.categories, ['memex']);
    assert.equal((await sync()).changed, 0, 'the next sync finds the etag it mirrored');
  });

  it('people written to (Sent) are offered as contacts, and made at Google only when accepted; a declined one is not offered again', async () => {
    const sent = (n: number, to: string) =>
      h.gmail
        .mailbox(ACCOUNT)
        .add(
          Buffer.from(
            `From: Owner <${ACCOUNT}>\r\nTo: ${to}\r\nSubject: note ${n}\r\nMessage-ID: <sent${n}@example.com>\r\nDate: Mon, 2 Nov 2026 10:0${n}:00 +0000\r\n\r\nHello.\r\n`,
          ),
          { labelIds: ['SENT'] },
        );
    sent(1, 'Carol Diaz <carol@example.com>'); // a contact already (made above)
    sent(2, 'Cy Park <cy@example.net>');
    sent(3, 'cy@example.net, Dee <dee@example.org>');
    const { seq: mailSeq } = await h.call(AccountsSync, { account: ACCOUNT });
    await h.call(MailAccounts, { min_seq: mailSeq });
    const offered = async () =>
      (await h.call(ContactsCandidates, { account: ACCOUNT })).candidates.map((c) => [c.address, c.name, c.sent]);
    assert.deepEqual(await offered(), [
      ['cy@example.net', 'Cy Park', 2],
      ['dee@example.org', 'Dee', 1],
    ]);
    const peopleBefore = h.people.count();

    const declined = await h.call(ContactsCandidatesDecide, {
      account: ACCOUNT,
      address: 'dee@example.org',
      accept: false,
    });
    assert.equal(declined.resource_name, null);
    assert.equal(h.people.count(), peopleBefore, 'declining writes nothing to Google');
    assert.deepEqual(await offered(), [['cy@example.net', 'Cy Park', 2]]);

    const accepted = await h.call(ContactsCandidatesDecide, {
      account: ACCOUNT,
      address: 'cy@example.net',
      accept: true,
    });
    const cy = h.people.person(accepted.resource_name!)!;
    assert.deepEqual(
      [cy.names?.[0]?.unstructuredName ?? cy.names?.[0]?.displayName, cy.emailAddresses?.map((e) => e.value)],
      ['Cy Park', ['cy@example.net']],
    );
    assert.deepEqual(await offered(), [], 'a contact now');
    await assert.rejects(
      h.call(ContactsCandidatesDecide, { account: ACCOUNT, address: 'cy@example.net', accept: true }),
      /already a Google contact/,
    );
  });
});
