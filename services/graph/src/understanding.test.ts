import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { INestApplicationContext } from '@nestjs/common';
import pg from 'pg';
import {
  CommitmentsList,
  CommitmentsSet,
  JobsStatus,
  LinkAdd,
  LinkRetract,
  ModelsAdd,
  Rerun,
  Summarize,
} from '@memex/contracts';
import { FakeChatServer, PipelinesModule, type FakeChatRequest } from '@memex/pipelines';
import { ServiceHost, startService } from '@memex/runtime';
import { waitUntil } from '@memex/testing';
import { agent, mailEvent, snapshot, startGraph, type GraphHarness } from './testing/harness.js';

const MAIL = `From: Ann Lee <ann@example.org>
To: Bob <bob@example.org>
Subject: The grant draft
Date: Mon, 04 Mar 2024 09:15:00 +0000
Message-ID: <grant-1@example.org>
Content-Type: text/plain; charset=utf-8

Hi Bob,

about the Memex grant: I'll send the draft by Friday.

Ann
`;

/** A model's answers; version 2 of the model (asked as fake-llm-2) reads one more topic. */
function answer(request: FakeChatRequest) {
  const v2 = request.model === 'fake-llm-2';
  switch (request.task) {
    case 'synthesis': {
      const cited = /\[item:([0-9A-Z]{26})\]/.exec(request.user)?.[1] ?? 'none';
      return {
        json: {
          sentences: [
            { text: 'Ann promised Bob the grant draft by Friday.', sources: [cited] },
            { text: 'The grant was approved.', sources: ['01HZZZZZZZZZZZZZZZZZZZZZZZ'] },
          ],
        },
      };
    }
    case 'summary':
      return { json: { summary: 'Ann will send the grant draft by Friday.' } };
    case 'topics':
      return {
        json: {
          topics: [
            { name: 'Grant Application', quote: 'grant' },
            ...(v2 ? [{ name: 'Deadlines', quote: 'by Friday' }] : [{ name: 'Drafts', quote: 'draft' }]),
          ],
        },
      };
    case 'entities':
      return { json: { entities: [{ kind: 'project', name: 'Memex', key: '', quote: 'Memex' }] } };
    case 'commitments':
      return {
        json: {
          commitments: [
            {
              kind: 'promise',
              by: [{ address: 'ann@example.org', name: 'Ann Lee' }],
              to: [{ address: 'bob@example.org', name: 'Bob' }],
              what: v2 ? 'send the grant draft' : 'send the draft',
              due: '2024-03-08',
              due_text: 'by Friday',
              quote: "I'll send the draft by Friday.",
            },
          ],
        },
      };
  }
  return { raw: '' };
}

interface LinkRow {
  id: string;
  src_key: string | null;
  src_item: string | null;
  rel: string;
  dst_key: string | null;
  basis: string;
  made_by: string;
}

describe('tier 2 outputs in the graph, re-runs and replay', () => {
  let h: GraphHarness;
  let pipelines: INestApplicationContext;
  let fake: FakeChatServer;
  let db: pg.Client;

  before(async () => {
    h = await startGraph();
    fake = new FakeChatServer(answer);
    await fake.start();
    pipelines = await startService((config) => PipelinesModule.register(config, { workers: 0 }), h.env.config);
    db = new pg.Client({ connectionString: h.env.config.databaseUrl });
    await db.connect();
  });
  after(async () => {
    await db?.end();
    await pipelines?.close();
    await fake?.stop();
    await h?.stop();
  });

  const links = async (itemId: string) =>
    (
      await db.query<LinkRow>(
        `select id, src_key, src_item, rel, dst_key, basis, made_by from graph.links l
         where status = 'active' and (src_item = $1 or exists (select 1 from graph.evidence e where e.link = l.id and e.item = $1))
         order by rel, dst_key, made_by`,
        [itemId],
      )
    ).rows;

  test('topics, entities and commitments become inferred links with their maker; a re-run of some tasks with a new version replaces exactly their links; replay asks the model nothing', async () => {
    await h.call(ModelsAdd, { path: fake.url, model: 'fake-llm', name: 'fake', version: '1', tasks: ['extract'] });
    const draft = await mailEvent(h.blobs, Buffer.from(MAIL));
    (draft.data as { meta: Record<string, unknown> }).meta.flags = { read: false, starred: false };
    await h.publish([draft]);
    const itemId = draft.subject.slice('item:'.length);
    const tier2 = (rows: LinkRow[]) => rows.filter((l) => l.made_by.startsWith('t2-'));
    await waitUntil(async () => tier2(await links(itemId)).length === 4, 'tier 2 links');
    const first = await links(itemId);
    assert.ok(tier2(first).every((l) => l.basis === 'inferred'));
    const inferred = tier2(first).map((l) => [l.rel, l.dst_key, l.made_by.replace(/#.*/, '')]);
    assert.deepEqual(inferred, [
      ['about', 'topic:drafts', 't2-topics@fake/1'],
      ['about', 'topic:grant-application', 't2-topics@fake/1'],
      ['committed_to', inferred[2]![1], 't2-commitments@fake/1'],
      ['mentions', 'project:memex', 't2-entities@fake/1'],
    ]);
    assert.match(inferred[2]![1]!, /^commitment:/);

    // The owner's word: a topic of their own (observed) and a correction of the model's "drafts".
    await h.call(LinkAdd, { src: `item:${itemId}`, rel: 'about', dst: 'topic:budget', evidence: [{ item: itemId }] });
    const drafts = first.find((l) => l.dst_key === 'topic:drafts')!;
    await h.call(LinkRetract, { link_id: drafts.id, reason: 'not about drafts' });
    const [commitment] = (await h.call(CommitmentsList, {})).commitments;
    assert.equal(commitment!.what, 'send the draft');
    assert.deepEqual(
      [commitment!.status, commitment!.due, commitment!.by, commitment!.quote],
      ['open', '2024-03-08', [{ address: 'ann@example.org', name: 'Ann Lee' }], "I'll send the draft by Friday."],
    );
    // Read in a mail: an agent without the mail label sees none of it.
    assert.deepEqual((await h.call(CommitmentsList, {}, agent(['client:acme']))).commitments, []);
    assert.equal((await h.call(CommitmentsList, {}, agent(['mail']))).commitments.length, 1);
    await h.call(CommitmentsSet, { id: commitment!.id, status: 'done' });

    // Version 2, re-run for topics and commitments only.
    await h.call(ModelsAdd, {
      path: fake.url,
      model: 'fake-llm-2',
      name: 'fake',
      version: '2',
      tasks: ['summarize', 'extract'],
    });
    const dry = await h.call(Rerun, { tier: 2, model: 'fake@2', tasks: ['topics', 'commitments'], dry_run: true });
    assert.equal(dry.jobs, 2, 'the summary, which fake@2 also serves, is not asked for');
    const asked = fake.count();
    const rerun = await h.call(Rerun, { tier: 2, model: 'fake@2', tasks: ['topics', 'commitments'] });
    await waitUntil(async () => {
      const progress = (await h.call(JobsStatus, {})).tier2!.reruns.find((r) => r.rerun_id === rerun.rerun_id);
      return progress?.done === 2;
    }, 'the re-run');
    assert.equal(fake.count() - asked, 2, 'one request per task');
    await h.applied(await h.bus.lastSeq());

    const after = await links(itemId);
    const byMaker = (prefix: string) =>
      after.filter((l) => l.made_by.startsWith(prefix)).map((l) => [l.rel, l.dst_key, l.made_by.replace(/#.*/, '')]);
    assert.deepEqual(byMaker('t2-topics'), [
      ['about', 'topic:deadlines', 't2-topics@fake/2'],
      ['about', 'topic:grant-application', 't2-topics@fake/2'],
    ]);
    assert.deepEqual(
      byMaker('t2-entities'),
      [['mentions', 'project:memex', 't2-entities@fake/1']],
      'another task stays',
    );
    assert.deepEqual(byMaker('user'), [['about', 'topic:budget', 'user']], 'the observed link stays');
    const commitments = (await h.call(CommitmentsList, {})).commitments;
    assert.deepEqual(
      commitments.map((c) => [c.id, c.what, c.status, c.status_by_owner]),
      [[commitment!.id, 'send the grant draft', 'done', true]],
      "the owner's status outlives the re-run",
    );
    // The owner's correction still stands: were "drafts" said again by any maker, it stays rejected.
    const verdicts = await db.query(`select claim, verdict from graph.verdicts order by claim`);
    assert.deepEqual(verdicts.rows, [
      { claim: `item:${itemId} about topic:budget`, verdict: 'confirmed' },
      { claim: `item:${itemId} about topic:drafts`, verdict: 'rejected' },
    ]);

    // Tier 3: every sentence cites an item the brief gave; one citing nothing given is left out.
    const synthesis = await h.call(Summarize, { thing: 'topic:grant-application' });
    assert.deepEqual(synthesis.sentences, [{ text: 'Ann promised Bob the grant draft by Friday.', sources: [itemId] }]);
    assert.equal(synthesis.dropped, 1);
    assert.match(synthesis.made_by, /^synthesis@fake\/2#[0-9a-f]{16}$/);

    // Replay: the same graph, row for row, and not one request to the model.
    const requests = fake.count();
    const live = await snapshot(h.env.config.databaseUrl);
    await h.app.get(ServiceHost).projector!.rebuild(h.env.config.databaseUrl);
    assert.deepEqual(await snapshot(h.env.config.databaseUrl), live);
    assert.equal(fake.count(), requests);
  });
});
