import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { INestApplicationContext } from '@nestjs/common';
import {
  JobsStatus,
  ModelsAdd,
  Rerun,
  type DataOf,
  type EventEnvelope,
  type ItemUnderstood,
  type UnderstandingFailed,
} from '@memex/contracts';
import { BlobStore } from '@memex/blobs';
import { Bus, callMethod, EventPublisher } from '@memex/bus';
import { startService } from '@memex/runtime';
import { createTestEnv, itemMeta, waitUntil, type TestEnv } from '@memex/testing';
import { PipelinesModule } from '../../pipelines.module.js';
import { eventsOf, ingest } from '../../testing/items.js';
import { FakeChatServer, type FakeChatAnswer, type FakeChatRequest } from './testing/fake-chat.js';
import { promptHash, TASKS } from './tasks.js';
import { JobQueue, type UnderstandJob } from '../../jobs/queue.js';
import { laneOf } from './lanes.js';

const DAY_MS = 24 * 60 * 60 * 1000;

/** Answers as a model would, from what the message says; `MALFORMED` and `RATE LIMIT` in a title script trouble. */
export function scriptedAnswer(request: FakeChatRequest): FakeChatAnswer {
  const text = request.user;
  if (text.includes('ALWAYS MALFORMED')) return { raw: '{"summary": "cut off' };
  switch (request.task) {
    case 'summary':
      return { json: { summary: `About ${/Title: (.*)/.exec(text)?.[1] ?? 'something'}.` } };
    case 'topics':
      return { json: { topics: [{ name: 'Grant Application', quote: 'grant' }] } };
    case 'entities':
      return {
        json: {
          entities: [
            { kind: 'person', name: 'Ann Lee', key: 'ann@example.org', quote: 'Ann' },
            { kind: 'project', name: 'Memex', key: '', quote: 'Memex' },
          ],
        },
      };
    case 'commitments':
      return {
        json: {
          commitments: [
            {
              kind: 'promise',
              by: [{ address: 'ann@example.org', name: 'Ann Lee' }],
              to: [{ address: 'bob@example.org', name: '' }],
              what: 'send the draft',
              due: '2024-03-08',
              due_text: 'by Friday',
              quote: "I'll send the draft by Friday.",
            },
            // A quote the text does not hold is no evidence: left out.
            { kind: 'promise', by: [], to: [], what: 'invented', due: '', due_text: '', quote: 'never written' },
          ],
        },
      };
    case 'claims':
      return { json: { claims: [{ text: 'Hybrid search beats keywords alone.', quote: 'beats' }] } };
  }
  return { raw: 'unknown task' };
}

describe('tier 2 through a chat model endpoint', () => {
  let env: TestEnv;
  let app: INestApplicationContext;
  let bus: Bus;
  let publisher: EventPublisher;
  let blobs: BlobStore;
  let fake: FakeChatServer;
  let clock = Date.parse('2024-03-04T10:00:00Z');
  let later: { id: string; seq: number };
  const troubles: Array<(r: FakeChatRequest) => FakeChatAnswer | undefined> = [];

  before(async () => {
    // The fake's key, as an operator configures one (the credentials provider reads it).
    process.env.MEMEX_CREDENTIAL_MODEL_FAKE = 'sk-fake';
    env = await createTestEnv();
    fake = new FakeChatServer((r) => {
      for (const trouble of troubles) {
        const answer = trouble(r);
        if (answer) return answer;
      }
      return scriptedAnswer(r);
    });
    await fake.start();
    app = await startService(
      (config) => PipelinesModule.register(config, { workers: 0, clock: () => clock, tier2Concurrency: 3 }),
      env.config,
    );
    bus = await Bus.connect(env.config.natsUrl, 'test');
    publisher = new EventPublisher(bus);
    blobs = new BlobStore(env.config.blobsDir);
  });
  after(async () => {
    await app.close();
    await bus.close();
    await fake.stop();
    await env.stop();
  });

  test('every task lands as an event with its maker; malformed answers are asked again, then fail visibly; 429s are waited out', async () => {
    const added = await callMethod(bus, ModelsAdd, {
      path: `${fake.url}/v1`,
      model: 'fake-llm',
      name: 'fake',
      version: '1',
      tasks: ['summarize', 'extract'],
      // The first test spends exactly this (14 answers of 100 tokens; a 429 costs nothing).
      budget: { tokens_per_day: 1_400 },
      cost_per_1k_tokens: 0.5,
    });
    assert.deepEqual([added.space, added.kind], ['fake@1', 'chat']);
    await assert.rejects(
      callMethod(bus, ModelsAdd, { path: fake.url, model: 'fake-llm', name: 'fake', version: '1', tasks: ['extract'] }),
      /already registered/,
    );

    // The first summary request is rate limited (Retry-After: 1), the first topics answer is not JSON.
    let limited = false;
    let malformed = false;
    troubles.push((r) => {
      if (r.task === 'summary' && !limited) return ((limited = true), { status: 429, retryAfter: '1' });
      if (r.task === 'topics' && !malformed) return ((malformed = true), { raw: 'Sure! Here are the topics: grant' });
      return undefined;
    });
    // Spam goes to no model.
    const spam = await ingest(publisher, blobs, {
      title: 'You won',
      text: 'ZQXSPAM claim your prize',
      typed: itemMeta('email', {
        from: [{ name: 'Prize', address: 'prize@spam.example' }],
        threadKey: 'spam-1',
        spam: true,
        flags: { read: false, starred: false },
      }),
    });
    const mail = await ingest(publisher, blobs, {
      title: 'Draft',
      text: "Hi Bob,\nabout the Memex grant: I'll send the draft by Friday.\nAnn",
      typed: itemMeta('email'),
      labels: ['mail'],
    });
    const understood = (await eventsOf(bus, 'item.understood', mail.id, 3)) as Array<
      EventEnvelope<DataOf<typeof ItemUnderstood>>
    >;
    const byTask = new Map(understood.map((e) => [e.data.task, e.data]));
    assert.deepEqual([...byTask.keys()].sort(), ['entities', 'summary', 'topics']);
    for (const [task, data] of byTask) {
      assert.deepEqual(data.made_by, {
        task,
        model: 'fake',
        version: '1',
        hash: promptHash(TASKS[task as keyof typeof TASKS]),
      });
    }
    assert.equal(byTask.get('summary')!.summary, 'About Draft.');
    assert.equal(byTask.get('topics')!.usage.requests, 2, 'the malformed answer was asked again');
    assert.deepEqual(byTask.get('topics')!.usage, { requests: 2, tokens: 200, cost: 0.1 });
    assert.equal(fake.count('summary'), 2, 'the 429 was waited out and asked again');
    assert.ok(fake.requests.every((r) => r.protocol === 'openai' && r.authorization === 'Bearer sk-fake'));
    assert.ok(!fake.requests.some((r) => r.user.includes('ZQXSPAM')), 'spam was sent to no model');
    assert.equal((await eventsOf(bus, 'item.understood', spam.id, 0)).length, 0);
    assert.deepEqual(byTask.get('entities')!.entities, [
      { kind: 'person', name: 'Ann Lee', key: 'ann@example.org', quote: 'Ann' },
      { kind: 'project', name: 'Memex', quote: 'Memex' },
    ]);
    // The derived events carry the item's scope.
    assert.deepEqual([understood[0]!.labels, understood[0]!.kind], [['mail'], 'email']);

    const [commitments] = await eventsOf(bus, 'commitment.extracted', mail.id, 1);
    const data = commitments!.data as { made_by: string; commitments: Array<Record<string, unknown>> };
    assert.match(data.made_by, /^t2-commitments@fake\/1#[0-9a-f]{16}$/);
    assert.equal(data.commitments.length, 1, 'the commitment whose quote is not in the text is left out');
    assert.deepEqual(
      [data.commitments[0]!.what, data.commitments[0]!.due, data.commitments[0]!.start],
      ['send the draft', '2024-03-08', 31],
    );

    const broken = await ingest(publisher, blobs, { title: 'Broken', text: 'ALWAYS MALFORMED about the grant' });
    const failures = (await eventsOf(bus, 'understanding.failed', broken.id, 3)) as Array<
      EventEnvelope<DataOf<typeof UnderstandingFailed>>
    >;
    assert.deepEqual(failures.map((f) => f.data.task).sort(), ['entities', 'summary', 'topics']);
    assert.match(failures[0]!.data.reason, /fake@1 gave no usable answer in 3 tries: the answer is not JSON/);
    assert.equal(failures[0]!.data.usage.requests, 3);
    const status = await callMethod(bus, JobsStatus, {});
    assert.ok(status.tier2!.failed >= 3, 'failures show in memex jobs');
  });

  test('a spent budget pauses the model’s lane until the day turns, then it resumes', async () => {
    const fakeModel = async () =>
      (await callMethod(bus, JobsStatus, {})).tier2!.models.find((m) => m.model === 'fake@1')!;
    await waitUntil(async () => (await fakeModel()).paused_until !== null, 'the lane to pause');
    const paused = { model: await fakeModel() };
    assert.match(paused.model.paused_because!, /tokens_per_day 1400 spent/);
    assert.equal(paused.model.spent_today.tokens, 1_400);
    assert.equal(paused.model.paused_until, '2024-03-05T00:00:00.000Z');

    const asked = fake.count();
    later = await ingest(publisher, blobs, { title: 'Later', text: 'Notes on the grant.' });
    await waitUntil(async () => (await callMethod(bus, JobsStatus, {})).tier2!.waiting === 1, 'the job to wait');
    await new Promise((resolve) => setTimeout(resolve, 1500));
    assert.equal(fake.count(), asked, 'nothing is asked while the budget is spent');

    clock += DAY_MS;
    await eventsOf(bus, 'item.understood', later.id, 3);
    const model = await fakeModel();
    assert.equal(model.paused_until, null);
    assert.equal(model.spent_today.tokens, 300);
  });

  test("Ollama's /api/chat with format, routed by item kind: a paper's claims", async () => {
    await callMethod(bus, ModelsAdd, {
      path: fake.url,
      protocol: 'ollama',
      model: 'llama3.1:8b',
      name: 'local',
      version: '1',
      tasks: ['extract'],
      kinds: ['paper'],
    });
    const paper = await ingest(publisher, blobs, {
      title: 'Hybrid search',
      text: 'We show that hybrid search beats keywords alone.',
      typed: itemMeta('paper'),
    });
    const understood = (await eventsOf(bus, 'item.understood', paper.id, 4)) as Array<
      EventEnvelope<DataOf<typeof ItemUnderstood>>
    >;
    const claims = understood.find((e) => e.data.task === 'claims')!.data;
    assert.deepEqual(claims.claims, [{ text: 'Hybrid search beats keywords alone.', quote: 'beats' }]);
    assert.deepEqual(
      understood.map((e) => `${e.data.task}:${e.data.made_by.model}`).sort(),
      ['claims:local', 'entities:local', 'summary:fake', 'topics:local'],
      'extract tasks go to the model for papers, the summary to the only summarize model',
    );
    const asked = fake.requests.filter((r) => r.protocol === 'ollama').map((r) => r.task);
    assert.deepEqual(asked.sort(), ['claims', 'entities', 'topics']);
  });

  test('a dry-run re-run estimates jobs, tokens and cost against the budget', async () => {
    const estimate = await callMethod(bus, Rerun, { tier: 2, model: 'fake@1', kind: 'email', dry_run: true });
    assert.equal(estimate.rerun_id, null);
    // One email: summary, topics, entities and commitments.
    assert.equal(estimate.jobs, 4);
    assert.ok(estimate.tokens > 4 * 300);
    assert.equal(estimate.cost, (estimate.tokens / 1000) * 0.5);
    // Spent today: the later note's 3 answers and the paper's summary.
    assert.equal(estimate.budget.tokens_left_today, 1_400 - 400);
    await assert.rejects(callMethod(bus, Rerun, { tier: 2, model: 'nope@1', dry_run: true }), /no chat model nope@1/);
  });

  test("a re-run with a new version; a late routine job of the older version leaves the newer version's output alone", async () => {
    await callMethod(bus, ModelsAdd, {
      path: fake.url,
      model: 'fake-llm-2',
      name: 'fake',
      version: '2',
      tasks: ['summarize', 'extract'],
    });
    const rerun = await callMethod(bus, Rerun, { tier: 2, model: 'fake@2', kind: 'document', tasks: ['topics'] });
    assert.equal(rerun.jobs, 2, 'the later note and the broken one');
    await waitUntil(async () => {
      const progress = (await callMethod(bus, JobsStatus, {})).tier2!.reruns.find((r) => r.rerun_id === rerun.rerun_id);
      return progress !== undefined && progress.done + progress.failed === 2;
    }, 'the re-run');
    const topicsAsked = fake.count('topics');
    const summariesAsked = fake.count('summary');

    // The old version's lane still had a job for the note (as if it had waited out a pause).
    const late: UnderstandJob = {
      task: 'understand',
      item_id: later.id,
      revision: 1,
      source_seq: later.seq,
      tasks: ['topics', 'summary'],
      model: 'fake@1',
    };
    await new JobQueue(bus, laneOf('fake@1')).enqueue(late, 'new', 'late-job');
    await waitUntil(async () => {
      const tier2 = (await callMethod(bus, JobsStatus, {})).tier2!;
      return tier2.waiting === 0 && tier2.in_progress === 0;
    }, 'the late job');
    assert.equal(fake.count('topics'), topicsAsked, "fake@2's topics are not asked again by fake@1");
    assert.equal(fake.count('summary'), summariesAsked, 'nor fake@1’s own summary of this revision');
    const outputs = await eventsOf(bus, 'item.understood', later.id, 4);
    const topics = outputs.filter((e) => (e.data as DataOf<typeof ItemUnderstood>).task === 'topics');
    assert.deepEqual(
      topics.map((e) => (e.data as DataOf<typeof ItemUnderstood>).made_by.version),
      ['1', '2'],
      'the last topics on the log are still the newer version’s',
    );
  });
});
