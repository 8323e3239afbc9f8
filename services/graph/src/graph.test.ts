import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import pg from 'pg';
import {
  ContextBrief,
  EntityGet,
  EntityNeighbors,
  EntitySplit,
  Graph,
  LinkAdd,
  LinkRetract,
  MemexError,
  MentionComplete,
  Months,
  ReviewDecide,
  ReviewList,
  Timeline,
  TrailsAppend,
  TrailsComment,
  TrailsCreate,
  TrailsGet,
  TrailsList,
  TrailsMove,
} from '@memex/contracts';
import { EVENTS_STREAM, eventSubject } from '@memex/bus';
import { DATABASE, HandlerProjection, ProjectionRunner, ServiceHost } from '@memex/runtime';
import { sharedFile, sharedSkip } from '@memex/testing';
import { GraphProjector } from './projection/graph.projector.js';
import {
  agent,
  mailEvent,
  message,
  noteEvent,
  snapshot,
  splitMbox,
  startGraph,
  type GraphHarness,
} from './testing/harness.js';

/** A real-world file from the shared corpus's mail folder, read in place. */
const fixture = (name: string) => fs.readFileSync(sharedFile(`corpus/mail/${name}`));

/** The real archive: RFC 2822's examples, a 1996 Netscape mbox, SpamAssassin's nice mail, free-mail messages. */
function archive(): Buffer[] {
  return [
    ...[
      'mikel-mail/rfc2822/example01',
      'mikel-mail/rfc2822/example03',
      'mikel-mail/rfc2822/example04',
      'mikel-mail/rfc2822/example06',
      'mikel-mail/rfc2822/example07',
      'mikel-mail/rfc2822/example14',
      'mikel-mail/multi_charset/japanese',
      'flanker/bounce/gmail-invalid-address',
    ].map((name) => fixture(`${name}.eml`)),
    ...splitMbox(fixture('mimekit/netscape-1996-content-length.mbox')),
    ...splitMbox(fixture('spamassassin-testdata/nice.mbox')),
    // John Doe is the only writer at machine.example in RFC 2822's examples: one person's domain is
    // no organization (domain/orgs.ts), so a colleague of his writes too.
    message({
      From: 'Jane Roe <jroe@machine.example>',
      To: 'John Doe <jdoe@machine.example>',
      Subject: 'Room booking',
      Date: 'Fri, 21 Nov 1997 11:00:00 -0600',
      'Message-ID': '<room-booking@machine.example>',
    }),
  ];
}

/** Every row of every graph table, sorted: for row-for-row comparisons. */
async function notFound(promise: Promise<unknown>): Promise<void> {
  await assert.rejects(promise, (error: MemexError) => error.code === 'not_found');
}

describe('graph service', { skip: sharedSkip('corpus/mail') }, () => {
  let h: GraphHarness;
  let mailIds: string[] = [];
  before(async () => {
    h = await startGraph();
    const drafts = [];
    for (const raw of archive()) drafts.push(await mailEvent(h.blobs, raw));
    mailIds = drafts.map((d) => (d.data as { id: string }).id);
    await h.publish(drafts);
  });
  after(async () => h.stop());

  test('people and organizations from a real mail archive: names, aliases, works_at by domain, no free-mail orgs', async () => {
    const john = await h.call(EntityGet, { key: 'person:JDoe@machine.example' });
    assert.equal(john.entity.name, 'John Doe');
    assert.deepEqual(john.entity.attrs, { addresses: ['jdoe@machine.example'] });
    const worksAt = john.facts.find((f) => f.rel === 'works_at')!;
    assert.equal(worksAt.other && 'entity' in worksAt.other && worksAt.other.entity.key, 'org:machine.example');
    assert.equal(worksAt.basis, 'inferred');
    assert.equal(worksAt.made_by, 'ingest@1');
    assert.ok(worksAt.evidence.length >= 1);
    // John wrote four of the examples and received two: each a timeline entry with its relation.
    assert.ok(john.timeline.some((t) => t.rels.includes('sent')));
    assert.ok(john.timeline.some((t) => t.rels.includes('received')));
    assert.equal(john.timeline.find((t) => t.item.title === 'Saying Hello')?.item.kind, 'email');

    // Name variants of one address become aliases.
    const mikel = await h.call(EntityGet, { key: 'person:raasdnil@gmail.com' });
    assert.deepEqual([mikel.entity.name, ...mikel.entity.aliases].sort(), ['Mikel Lindsaar', 'みける'].sort());
    // An address never seen with a display name (a quoted message's headers are body text) is its own name.
    const atzet = await h.call(EntityGet, { key: 'person:atzet@netscape.com' });
    assert.equal(atzet.entity.name, 'atzet@netscape.com');
    assert.equal((await h.call(EntityGet, { key: 'person:jwz@netscape.com' })).entity.name, 'Jamie Zawinski');

    // Organizations from real domains (subdomains folded to the registrable one), never from free mail.
    const netscape = await h.call(EntityGet, { key: 'org:netscape.com' });
    assert.equal(netscape.entity.kind, 'org');
    const staff = netscape.facts
      .filter((f) => f.rel === 'works_at' && f.direction === 'in')
      .map((f) => 'entity' in f.other && f.other.entity.key);
    assert.ok(staff.includes('person:jwz@netscape.com') && staff.includes('person:atzet@netscape.com'), String(staff));
    await h.call(EntityGet, { key: 'org:winehq.com' });
    // mcom.com in the mbox: mailusr1@ writes from it (to netscape.com), and Jamie Zawinski writes
    // from netscape.com to his own unnamed jwz@urchin.mcom.com, who does not count: one person's
    // domain, no organization.
    await notFound(h.call(EntityGet, { key: 'org:mcom.com' }));
    assert.deepEqual((await h.call(EntityGet, { key: 'person:mailusr1@navstar1.mcom.com' })).own_domains, ['mcom.com']);
    for (const free of ['org:gmail.com', 'org:googlemail.com']) await notFound(h.call(EntityGet, { key: free }));
    const megan = await h.call(EntityGet, { key: 'person:awfawdadfawkofawooowowow@gmail.com' });
    assert.equal(megan.facts.filter((f) => f.rel === 'works_at').length, 0);
    assert.equal(
      (await h.call(EntityGet, { key: 'person:mailer-daemon@googlemail.com' })).entity.name,
      'Mail Delivery Subsystem',
    );

    // Every link has evidence.
    const client = new pg.Client({ connectionString: h.env.config.databaseUrl });
    await client.connect();
    const bare = await client.query(
      `select count(*)::int as n from graph.links l where not exists (select 1 from graph.evidence e where e.link = l.id)`,
    );
    await client.end();
    assert.equal(bare.rows[0].n, 0);
  });

  test('neighbours, the radial graph, months and the timeline', async () => {
    const neighbors = await h.call(EntityNeighbors, { key: 'person:jdoe@machine.example' });
    const mary = neighbors.neighbors.find((n) => n.entity.key === 'person:mary@example.net')!;
    assert.equal(mary.shared_items, 2, JSON.stringify(mary));
    const org = neighbors.neighbors.find((n) => n.entity.key === 'org:machine.example')!;
    assert.deepEqual(org.links, ['works_at']);
    assert.ok(neighbors.neighbors[0]!.weight >= neighbors.neighbors[neighbors.neighbors.length - 1]!.weight);

    const graph = await h.call(Graph, { key: 'person:jdoe@machine.example' });
    assert.equal(graph.center.key, 'person:jdoe@machine.example');
    const ids = new Set(graph.nodes.map((n) => n.entity.id));
    assert.ok(graph.edges.length > 0 && graph.edges.every((e) => ids.has(e.src) && ids.has(e.dst)));

    const months = await h.call(Months, { key: 'person:jwz@netscape.com' });
    const jwz = await h.call(EntityGet, { key: 'person:jwz@netscape.com' });
    assert.ok(months.months.some((m) => m.month === '1996-06'));
    assert.deepEqual(
      months.months.map((m) => m.month),
      months.months.map((m) => m.month).sort(),
    );
    assert.equal(
      months.months.reduce((s, m) => s + m.items, 0),
      jwz.stats.items,
    );
    const all = await h.call(Months, {});
    assert.equal(
      all.months.reduce((s, m) => s + m.items, 0),
      mailIds.length,
    );

    const page1 = await h.call(Timeline, { limit: 5 });
    assert.equal(page1.items.length, 5);
    const page2 = await h.call(Timeline, { limit: 5, cursor: page1.next_cursor! });
    assert.ok(page2.items.every((i) => i.item.occurred_at! <= page1.items[4]!.item.occurred_at!));
    assert.ok(!page2.items.some((i) => page1.items.some((j) => j.item.id === i.item.id)));
  });

  test('@-mentions: prefix on names, aliases and addresses, best first, within scope', async () => {
    const byName = await h.call(MentionComplete, { prefix: 'mary' });
    assert.ok(byName.items.length >= 2);
    assert.ok(byName.items.every((i) => i.kind === 'person' && /mary/i.test(i.name + i.detail)));
    assert.equal((await h.call(MentionComplete, { prefix: '@jamie z' })).items[0]?.key, 'person:jwz@netscape.com');
    assert.equal((await h.call(MentionComplete, { prefix: 'zawinski' })).items[0]?.key, 'person:jwz@netscape.com');
    assert.equal((await h.call(MentionComplete, { prefix: 'atzet@' })).items[0]?.key, 'person:atzet@netscape.com');
    const org = await h.call(MentionComplete, { prefix: 'netsc', kinds: ['org'] });
    assert.deepEqual(
      org.items.map((i) => i.key),
      ['org:netscape.com'],
    );
    const thread = await h.call(MentionComplete, { prefix: 'saying hel', kinds: ['thread'] });
    assert.equal(thread.items[0]?.name, 'Saying Hello');
    // An agent without mail knows none of these people.
    assert.deepEqual((await h.call(MentionComplete, { prefix: 'mary' }, agent(['client:acme']))).items, []);
    assert.ok((await h.call(MentionComplete, { prefix: 'mary' }, agent(['mail']))).items.length >= 2);
  });

  test('@-mentions rank as the terms say: a whole-term match first, then the heaviest, on every prefix', async () => {
    // Three busy writers (weights 18, 16, 20: past the tiers of one weight each, all three in one
    // tier, where the lighter ones come first by id).
    const drafts = [];
    for (const [n, messages] of [9, 8, 10].entries()) {
      for (let i = 0; i < messages; i++) {
        const raw = message({
          From: `Quill ${n} <quill${n}@quill.test>`,
          To: 'Quinn <quinn@elsewhere.test>',
          Subject: `Quill ${n} ${i}`,
          Date: new Date(Date.UTC(2020, 0, 1 + i)).toUTCString(),
          'Message-ID': `<quill-${n}-${i}@quill.test>`,
        });
        drafts.push(await mailEvent(h.blobs, raw));
      }
    }
    await h.publish(drafts);
    const client = new pg.Client({ connectionString: h.env.config.databaseUrl });
    await client.connect();
    try {
      const kinds = ['person', 'org'];
      const weights = await client.query(`select weight from graph.entities where key like 'person:quill%' order by 1`);
      assert.deepEqual(
        weights.rows.map((r) => r.weight),
        [16, 18, 20],
      );
      // The answer ends inside a tier of several weights: the heavier of the two is the one given.
      assert.deepEqual(
        (await h.call(MentionComplete, { prefix: 'quill', limit: 2, kinds: ['person'] })).items.map((i) => i.key),
        ['person:quill2@quill.test', 'person:quill0@quill.test'],
      );
      const prefixes = [
        ...'abcdefghijklmnopqrstuvwxyz',
        'ma',
        'ja',
        'jo',
        'ne',
        'qu',
        'quill',
        'mary',
        'zawinski',
        'jamie zawi',
      ];
      for (const prefix of prefixes) {
        const expected = await client.query<{ key: string }>(
          `select e.key from (select t.entity, bool_or(t.term = $1) as exact from graph.mention_terms t
             where t.term like $1 || '%' group by t.entity) m join graph.entities e on e.id = m.entity
           where e.merged_into is null and e.kind = any($2) order by m.exact desc, e.weight desc, e.id limit 10`,
          [prefix, kinds],
        );
        const got = await h.call(MentionComplete, { prefix, kinds });
        assert.deepEqual(
          got.items.map((i) => i.key).slice(0, expected.rows.length),
          expected.rows.map((r) => r.key),
          prefix,
        );
      }
    } finally {
      await client.end();
    }
  });

  test('review: same full name suggested, never merged by itself; merge then split restores every table; the old key resolves', async () => {
    const review = await h.call(ReviewList, { kind: 'merge' });
    const suggestion = review.items.find((i) => i.entities.every((e) => e.name === 'Mary Smith'))!;
    assert.ok(suggestion, JSON.stringify(review.items));
    assert.deepEqual(suggestion.entities.map((e) => e.key).sort(), ['person:mary@example.net', 'person:mary@x.test']);
    const [survivor, duplicate] = suggestion.entities;
    // A trail step on the duplicate moves with the merge.
    const trail = await h.call(TrailsCreate, { name: 'Mary' });
    const step = await h.call(TrailsAppend, {
      trail_id: trail.trail_id,
      target: duplicate!.key,
      comment: 'the x.test one',
    });
    await h.applied(step.seq);

    const before = await snapshot(h.env.config.databaseUrl);
    const decided = await h.call(ReviewDecide, { id: suggestion.id, decision: 'accept' });
    const card = await h.call(EntityGet, { key: duplicate!.key, min_seq: decided.seq });
    assert.equal(card.entity.id, survivor!.id);
    assert.equal(card.resolved_from, duplicate!.key);
    assert.deepEqual(card.entity.keys.sort(), ['person:mary@example.net', 'person:mary@x.test']);
    assert.deepEqual(card.entity.attrs, { addresses: ['mary@example.net', 'mary@x.test'] });
    assert.equal(card.merged.length, 1);
    assert.equal((await h.call(EntityGet, { id: duplicate!.id })).entity.id, survivor!.id);
    const moved = await h.call(TrailsGet, { trail_id: trail.trail_id });
    assert.deepEqual(
      moved.steps_list.map((s) => 'entity' in s.target && s.target.entity.id),
      [survivor!.id],
    );
    assert.ok((await h.call(ReviewList, { kind: 'merge' })).items.every((i) => i.id !== suggestion.id));
    const merged = await snapshot(h.env.config.databaseUrl);
    assert.notDeepEqual(merged, before);

    const split = await h.call(EntitySplit, { key: duplicate!.key });
    assert.equal(split.merge_id, card.merged[0]!.merge_id);
    await h.call(EntityGet, { key: duplicate!.key, min_seq: split.seq });
    assert.deepEqual(await snapshot(h.env.config.databaseUrl), before);

    // Rejecting the suggestion keeps it out of the queue.
    const dismissed = await h.call(ReviewDecide, { id: suggestion.id, decision: 'reject' });
    const after = await h.call(ReviewList, { kind: 'merge', min_seq: dismissed.seq });
    assert.ok(after.items.every((i) => i.id !== suggestion.id));
  });

  test("corrections outrank inferences; a pipeline's re-run replaces only its own links; inferences never support inferences", async () => {
    const item = mailIds[0]!;
    const infer = (version: string, links: unknown[]) => ({
      type: 'links.inferred',
      subject: `item:${item}`,
      actor: { kind: 'pipeline' as const, id: `understand-v1@${version}` },
      data: { made_by: `understand-v1@${version}`, item_id: item, links },
    });
    const guess = {
      src: 'person:jdoe@machine.example',
      rel: 'works_at',
      dst: 'org:acme.example',
      confidence: 0.4,
      evidence: [{ item, quote: 'Saying Hello' }],
    };
    const topic = (slug: string) => ({ src: `item:${item}`, rel: 'about', dst: `topic:${slug}`, confidence: 0.9 });
    let seq = await h.publish([infer('m1', [guess, topic('greetings')])]);
    let john = await h.call(EntityGet, { key: 'person:jdoe@machine.example', min_seq: seq });
    const inferred = john.facts.find(
      (f) => f.rel === 'works_at' && 'entity' in f.other && f.other.entity.key === 'org:acme.example',
    )!;
    assert.equal(inferred.basis, 'inferred');
    assert.equal(inferred.made_by, 'understand-v1@m1');
    assert.ok((await h.call(ReviewList, { kind: 'link' })).items.some((i) => i.id === `link:${inferred.link_id}`));

    // The owner says no: an observed correction. A better model infers the same again: still no.
    const retracted = await h.call(LinkRetract, { link_id: inferred.link_id, reason: 'he never worked there' });
    const corrected = await h.call(LinkAdd, {
      src: 'person:jdoe@machine.example',
      rel: 'works_at',
      dst: 'org:globex.example',
      names: { 'org:globex.example': 'Globex' },
    });
    seq = await h.publish([infer('m2', [guess, topic('salutations')])]);
    john = await h.call(EntityGet, {
      key: 'person:jdoe@machine.example',
      min_seq: Math.max(seq, corrected.seq, retracted.seq),
    });
    const worksAt = john.facts
      .filter((f) => f.rel === 'works_at')
      .map((f) => ['entity' in f.other && f.other.entity.key, f.basis, f.made_by]);
    assert.deepEqual(worksAt, [
      ['org:globex.example', 'observed', 'user'],
      ['org:machine.example', 'inferred', 'ingest@1'],
    ]);
    assert.equal((await h.call(EntityGet, { key: 'org:globex.example' })).entity.name, 'Globex');
    assert.ok((await h.call(ReviewList, { kind: 'link' })).items.every((i) => !i.summary.includes('acme.example')));
    // m2 replaced m1's topic; the structure's links are untouched.
    await notFound(h.call(EntityGet, { key: 'topic:greetings' }));
    assert.equal((await h.call(EntityGet, { key: 'topic:salutations' })).facts.length, 0);
    assert.equal((await h.call(EntityGet, { key: 'topic:salutations' })).timeline[0]?.item.id, item);

    // Honesty: an unconfirmed inference and an agent's note are not evidence; a confirmed one is.
    const card = await h.call(EntityGet, { key: 'person:mary@example.net' });
    const maryWorks = card.facts.find((f) => f.rel === 'works_at')!;
    const agentNote = await noteEvent('Mary probably runs the Example project', {
      actor: { kind: 'session', id: 'token:abc' },
    });
    const projectLink = (evidence: unknown[]) => ({
      src: 'person:mary@example.net',
      rel: 'member_of',
      dst: 'project:example',
      confidence: 0.6,
      evidence,
    });
    seq = await h.publish([
      agentNote,
      infer('m3', [projectLink([{ link: maryWorks.link_id }, { item: (agentNote.data as { id: string }).id }])]),
    ]);
    await notFound(h.call(EntityGet, { key: 'project:example', min_seq: seq }));
    const confirm = await h.call(ReviewDecide, { id: `link:${maryWorks.link_id}`, decision: 'accept' });
    await h.applied(confirm.seq);
    seq = await h.publish([infer('m4', [projectLink([{ link: maryWorks.link_id }])])]);
    const project = await h.call(EntityGet, { key: 'project:example', min_seq: seq });
    assert.equal(project.facts[0]?.made_by, 'understand-v1@m4');
    assert.ok(project.facts[0]!.evidence.length >= 1);
  });

  test('trails: create, append items and things, comment, list and get within scope', async () => {
    const trail = await h.call(TrailsCreate, {
      name: 'Netscape 1996',
      description: 'How the mail client was tested',
      labels: ['client:acme'],
    });
    const one = await h.call(TrailsAppend, {
      trail_id: trail.trail_id,
      target: `item:${mailIds[10]}`,
      comment: 'the first test',
    });
    await h.call(TrailsAppend, { trail_id: trail.trail_id, target: 'person:jwz@netscape.com' });
    await h.call(TrailsComment, {
      trail_id: trail.trail_id,
      step_id: one.step_id,
      comment: 'an attachment cache test',
    });
    const last = await h.call(TrailsComment, { trail_id: trail.trail_id, comment: 'Worth revisiting.' });
    const got = await h.call(TrailsGet, { trail_id: trail.trail_id, min_seq: last.seq });
    assert.deepEqual(
      got.steps_list.map((s) => [s.ordinal, s.comment]),
      [
        [1, 'an attachment cache test'],
        [2, null],
      ],
    );
    assert.deepEqual(
      got.comments.map((c) => [c.comment, c.made_by]),
      [['Worth revisiting.', 'user']],
    );
    const through = await h.call(TrailsList, { key: 'person:jwz@netscape.com' });
    assert.deepEqual(
      through.trails.map((t) => t.trail_id),
      [trail.trail_id],
    );
    // An agent of client:acme without mail sees the trail, but not its mail steps.
    const seen = await h.call(TrailsGet, { trail_id: trail.trail_id }, agent(['client:acme']));
    assert.deepEqual(seen.steps_list, []);
    await notFound(h.call(TrailsGet, { trail_id: trail.trail_id }, agent(['client:globex'])));
    await assert.rejects(
      h.call(TrailsAppend, { trail_id: trail.trail_id, target: `item:${mailIds[1]}` }, agent(['client:acme'])),
      /no item/,
    );

    // Writes check what they touch as reads do: a person known only from mail is "no thing" to the
    // agent for a trail step and a link alike, and the owner's card does not change.
    const acme = agent(['client:acme']);
    const jwz = 'person:jwz@netscape.com';
    const cardBefore = await h.call(EntityGet, { key: jwz });
    await notFound(h.call(EntityGet, { key: jwz }, acme));
    await notFound(h.call(TrailsAppend, { trail_id: trail.trail_id, target: jwz }, acme));
    const note = await noteEvent('Netscape test notes', { labels: ['client:acme'] });
    const noteId = (note.data as { id: string }).id;
    await h.publish([note]);
    const evidence = [{ item: noteId }];
    await notFound(h.call(LinkAdd, { src: jwz, rel: 'mentioned_in', dst: `item:${noteId}`, evidence }, acme));
    await notFound(
      h.call(LinkAdd, { src: `item:${noteId}`, rel: 'about', dst: `entity:${cardBefore.entity.id}`, evidence }, acme),
    );
    // A link the agent cannot see is absent to it, not "made by someone else".
    await notFound(h.call(LinkRetract, { link_id: cardBefore.facts[0]!.link_id }, acme));
    const step = await h.call(TrailsAppend, { trail_id: trail.trail_id, target: `item:${noteId}` }, acme);
    await h.applied(step.seq);
    assert.deepEqual(await h.call(EntityGet, { key: jwz }), cardBefore);

    // Counts leave out what the scope may not see: the owner counts three steps, the agent its one.
    const steps = async (scope?: ReturnType<typeof agent>) =>
      (await h.call(TrailsList, {}, scope)).trails.find((t) => t.trail_id === trail.trail_id)?.steps;
    assert.equal(await steps(), 3);
    assert.equal(await steps(acme), 1);
    assert.deepEqual(
      (await h.call(TrailsGet, { trail_id: trail.trail_id }, acme)).steps_list.map((s) => s.ordinal),
      [3],
    );
  });

  test('trails: a step moves among the steps the caller sees; hidden steps are neither moved nor counted', async () => {
    const notes = await Promise.all(['A', 'B', 'C'].map((n) => noteEvent(`Step ${n}`, { labels: ['client:acme'] })));
    await h.publish(notes);
    const [a, b, c] = notes.map((n) => `item:${(n.data as { id: string }).id}`) as [string, string, string];
    const trail = await h.call(TrailsCreate, { name: 'Reordered', labels: ['client:acme'] });
    const steps: Record<string, string> = {};
    for (const [name, target] of [
      ['A', a],
      ['M', `item:${mailIds[0]}`],
      ['B', b],
      ['C', c],
    ] as const)
      steps[name] = (await h.call(TrailsAppend, { trail_id: trail.trail_id, target })).step_id;
    const names = Object.fromEntries(Object.entries(steps).map(([name, id]) => [id, name]));
    const acme = agent(['client:acme']);
    const order = async (seq: number, scope?: ReturnType<typeof agent>) =>
      (await h.call(TrailsGet, { trail_id: trail.trail_id, min_seq: seq }, scope)).steps_list
        .map((s) => names[s.step_id])
        .join('');

    // The agent (no mail) sees A B C: C to first, then A to third. Only the moved step changes
    // place; the mail step M, hidden from it, keeps its own.
    let { seq } = await h.call(TrailsMove, { trail_id: trail.trail_id, step_id: steps.C!, to: 1 }, acme);
    assert.equal(await order(seq, acme), 'CAB');
    assert.equal(await order(seq), 'CAMB');
    ({ seq } = await h.call(TrailsMove, { trail_id: trail.trail_id, step_id: steps.A!, to: 3 }, acme));
    assert.equal(await order(seq, acme), 'CBA');
    assert.equal(await order(seq), 'CMBA');
    // A step it cannot see is absent to it; a place past its own count is refused by name.
    await notFound(h.call(TrailsMove, { trail_id: trail.trail_id, step_id: steps.M!, to: 1 }, acme));
    await assert.rejects(
      h.call(TrailsMove, { trail_id: trail.trail_id, step_id: steps.A!, to: 4 }, acme),
      (error: MemexError) =>
        error.code === 'invalid_params' && /past the end: the trail has 3 steps/.test(error.message),
    );
    await notFound(
      h.call(TrailsMove, { trail_id: trail.trail_id, step_id: steps.A!, to: 1 }, agent(['client:globex'])),
    );
    // The owner sees all four and moves the mail step last; ordinals are 1..n again.
    ({ seq } = await h.call(TrailsMove, { trail_id: trail.trail_id, step_id: steps.M!, to: 4 }));
    assert.equal(await order(seq), 'CBAM');
    const got = await h.call(TrailsGet, { trail_id: trail.trail_id });
    assert.deepEqual(
      got.steps_list.map((s) => s.ordinal),
      [1, 2, 3, 4],
    );
    const count = async (scope?: ReturnType<typeof agent>) =>
      (await h.call(TrailsList, {}, scope)).trails.find((t) => t.trail_id === trail.trail_id)?.steps;
    assert.deepEqual([await count(), await count(acme)], [4, 3]);
  });

  test('the radial graph within a time: only items and links of that time count', async () => {
    const mail = (to: string, date: string, id: string) =>
      mailEvent(
        h.blobs,
        message({
          From: 'Ada Time <ada@time.example>',
          To: to,
          Subject: `Hello ${id}`,
          Date: date,
          'Message-ID': `<${id}@time.example>`,
        }),
      );
    await h.publish([
      await mail('Bob Early <bob@early.example>', 'Mon, 1 Jan 2001 10:00:00 +0000', 'early'),
      await mail('Cy Late <cy@late.example>', 'Fri, 1 Jan 2010 10:00:00 +0000', 'late'),
    ]);
    // The owner's word without evidence has only its stated validity for a time.
    const knows = await h.call(LinkAdd, {
      src: 'person:ada@time.example',
      rel: 'knows',
      dst: 'person:dee@valid.example',
      valid_from: '1999-01-01T00:00:00.000Z',
      valid_to: '2000-06-01T00:00:00.000Z',
    });
    await h.applied(knows.seq);
    const keys = async (range: { from?: string; to?: string }) =>
      (await h.call(Graph, { key: 'person:ada@time.example', ...range })).nodes
        .map((n) => n.entity.key)
        .filter((k) => k.startsWith('person:'))
        .sort();
    assert.deepEqual(await keys({}), [
      'person:bob@early.example',
      'person:cy@late.example',
      'person:dee@valid.example',
    ]);
    assert.deepEqual(await keys({ to: '2005-01-01T00:00:00.000Z' }), [
      'person:bob@early.example',
      'person:dee@valid.example',
    ]);
    assert.deepEqual(await keys({ from: '2005-01-01T00:00:00.000Z' }), ['person:cy@late.example']);
    assert.deepEqual(await keys({ from: '2000-01-01T00:00:00.000Z', to: '2001-01-01T00:00:00.000Z' }), [
      'person:dee@valid.example',
    ]);
    const late = await h.call(Graph, { key: 'person:ada@time.example', from: '2005-01-01T00:00:00.000Z' });
    assert.ok(late.nodes.every((n) => n.shared_items <= 1) && late.edges.every((e) => e.shared_items <= 1));
    await assert.rejects(
      h.call(Graph, { key: 'person:ada@time.example', from: '2010-01-01T00:00:00Z', to: '2001-01-01T00:00:00Z' }),
      (error: MemexError) => error.code === 'invalid_params' && /must be before/.test(error.message),
    );
  });

  test('briefs: sources on every line, never over budget, inferred marked, nothing from mail without mail', async () => {
    const note = await noteEvent('Acme renewal\nJohn Doe asked about the renewal terms for machine.example.', {
      labels: ['client:acme'],
    });
    const noteId = (note.data as { id: string }).id;
    const agentNote = await noteEvent(
      'Summary of the renewal\nProbably decided by the main contact at machine.example.',
      {
        labels: ['client:acme'],
        actor: { kind: 'session', id: 'token:summarizer' },
      },
    );
    let seq = await h.publish([note, agentNote]);
    const about = await h.call(LinkAdd, {
      src: `item:${noteId}`,
      rel: 'about',
      dst: 'org:machine.example',
      labels: ['client:acme'],
    });
    seq = Math.max(seq, about.seq);
    const trail = await h.call(TrailsCreate, { name: 'Renewal', labels: ['client:acme'] });
    await h.call(TrailsAppend, { trail_id: trail.trail_id, target: `item:${noteId}` });
    const step = await h.call(TrailsAppend, { trail_id: trail.trail_id, target: 'org:machine.example' });
    seq = Math.max(seq, step.seq);

    const full = await h.call(ContextBrief, {
      labels: ['client:machine', 'person:jdoe@machine.example'],
      text: 'What about the renewal?',
      min_seq: seq,
    });
    assert.ok(full.bytes <= 4096 && Buffer.byteLength(full.text) === full.bytes);
    assert.deepEqual(full.things.map((t) => t.key).sort(), ['org:machine.example', 'person:jdoe@machine.example']);
    const sections = new Set(full.lines.map((l) => l.section));
    for (const s of ['fact', 'event', 'note', 'trail']) assert.ok(sections.has(s as never), `${s} in\n${full.text}`);
    for (const l of full.text.split('\n')) assert.match(l, /\[(link|item|trail):[^\]]+\]$/, l);
    assert.ok(full.lines.some((l) => l.inferred && l.text.includes('(inferred)') && l.text.includes('ingest@1')));
    assert.ok(
      full.lines.some((l) => l.section === 'note' && l.inferred && l.text.includes('session:token:summarizer')),
    );

    for (const budget of [1000, 300, 120, 64]) {
      const brief = await h.call(ContextBrief, {
        labels: ['person:jdoe@machine.example', 'client:machine'],
        text: 'renewal',
        budget_bytes: budget,
      });
      assert.ok(Buffer.byteLength(brief.text) <= budget, `${Buffer.byteLength(brief.text)} > ${budget}`);
      assert.ok(brief.lines.every((l) => l.refs.length > 0));
      assert.ok(brief.omitted > 0);
    }

    // An agent without `mail`: the note, its link and the trail, but no person, message or subject from mail.
    const scoped = await h.call(
      ContextBrief,
      { labels: ['client:acme', 'client:machine', 'person:jdoe@machine.example'], text: 'renewal' },
      agent(['client:acme']),
    );
    const mailRefs = new Set(mailIds.map((id) => `item:${id}`));
    assert.ok(scoped.lines.length > 0, 'the agent still gets its notes');
    for (const l of scoped.lines) {
      assert.ok(
        l.refs.every((r) => !mailRefs.has(r)),
        l.text,
      );
      assert.doesNotMatch(l.text, /jdoe@|Saying Hello|Mary Smith/, l.text);
    }
    assert.deepEqual(
      scoped.things.map((t) => t.key),
      ['org:machine.example'],
    );
    assert.ok(scoped.lines.some((l) => l.refs.includes(`item:${noteId}`)));
    await notFound(h.call(EntityGet, { key: 'person:jdoe@machine.example' }, agent(['client:acme'])));
    const org = await h.call(EntityGet, { key: 'org:machine.example' }, agent(['client:acme']));
    assert.deepEqual(org.facts, []);
    assert.ok(org.timeline.every((t) => t.item.kind === 'note'));
    const withMail = await h.call(
      ContextBrief,
      { labels: ['person:jdoe@machine.example'] },
      agent(['mail', 'client:acme']),
    );
    assert.ok(withMail.lines.some((l) => l.section === 'event' && l.refs.some((r) => mailRefs.has(r))));
  });

  test('deletion takes what rests on an item; replay (also after its events are erased) reproduces the graph row for row', async () => {
    const only = await mailEvent(
      h.blobs,
      message({
        From: 'Solo Sender <solo@unique.example>',
        To: 'mary@example.net',
        Subject: 'Once',
        Date: 'Mon, 2 Jan 2006 10:00:00 +0000',
        'Message-ID': '<once@unique.example>',
      }),
    );
    const id = (only.data as { id: string }).id;
    let seq = await h.publish([only]);
    assert.equal((await h.call(EntityGet, { key: 'person:solo@unique.example' })).entity.name, 'Solo Sender');
    // The owner's word resting on it, and a trail step through it.
    const said = await h.call(LinkAdd, {
      src: 'person:mary@example.net',
      rel: 'knows',
      dst: 'person:jdoe@machine.example',
      evidence: [{ item: id }],
      labels: ['client:acme'],
    });
    const trail = await h.call(TrailsCreate, { name: 'Once' });
    const step = await h.call(TrailsAppend, { trail_id: trail.trail_id, target: `item:${id}` });
    await h.applied(Math.max(said.seq, step.seq));
    seq = await h.publish([
      { type: 'item.deleted', subject: `item:${id}`, actor: { kind: 'user', id: 'owner' }, data: { id } },
    ]);
    await notFound(h.call(EntityGet, { key: 'person:solo@unique.example', min_seq: seq }));
    await notFound(h.call(EntityGet, { key: 'org:unique.example' }));
    assert.deepEqual((await h.call(TrailsGet, { trail_id: trail.trail_id })).steps_list, []);
    const knows = (await h.call(EntityGet, { key: 'person:mary@example.net' })).facts.find((f) => f.rel === 'knows')!;
    assert.deepEqual([knows.made_by, knows.evidence], ['user', []]);

    // As the ingest service does: the item's own events are erased from the log, the deletion stays.
    await h.bus.jsm.streams.purge(EVENTS_STREAM, { filter: eventSubject('item.ingested', `item:${id}`) });
    const live = await snapshot(h.env.config.databaseUrl);
    const runner = h.app.get(ServiceHost).projector!;
    const result = await runner.rebuild(h.env.config.databaseUrl);
    assert.ok(result.events >= mailIds.length);
    assert.deepEqual(await snapshot(h.env.config.databaseUrl), live);

    // The batches' bulk path leaves what applying each event alone leaves, also for a message
    // after other events that gives a known person a new name.
    const renamed = await mailEvent(
      h.blobs,
      message({
        From: 'J. Doe <jdoe@machine.example>',
        To: 'Solo Again <solo-again@unique.example>',
        Subject: 'Again',
        Date: 'Tue, 3 Jan 2006 10:00:00 +0000',
        'Message-ID': '<again@unique.example>',
      }),
    );
    await h.publish([await noteEvent('Between the messages'), renamed]);
    assert.deepEqual((await h.call(EntityGet, { key: 'person:jdoe@machine.example' })).entity.aliases, ['J. Doe']);
    const before = await snapshot(h.env.config.databaseUrl);
    const projector = h.app.get(GraphProjector);
    const handlers = HandlerProjection.of(projector);
    const oneByOne = new ProjectionRunner(h.bus, h.env.config.databaseUrl, h.app.get(DATABASE), runner.options, {
      apply: (trx, logged) => handlers.apply(trx, logged),
      afterBulkLoad: (db) => handlers.afterBulkLoad(db),
    });
    await oneByOne.rebuild(h.env.config.databaseUrl);
    assert.deepEqual(await snapshot(h.env.config.databaseUrl), before);
  });
});
