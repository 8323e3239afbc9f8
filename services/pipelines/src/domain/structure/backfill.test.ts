import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { AckPolicy, DeliverPolicy } from '@nats-io/jetstream';
import type { INestApplicationContext } from '@nestjs/common';
import { CommitmentExtracted, PaperExtracted, StructureExtracted, Tier0Upgraded } from '@memex/contracts';
import { BlobStore } from '@memex/blobs';
import { Bus, EVENT_SUBJECT_ROOT, EVENTS_STREAM, EventPublisher, eventsOf as logged } from '@memex/bus';
import { startService } from '@memex/runtime';
import { createTestEnv, itemMeta, pdfMeta, type TestEnv } from '@memex/testing';
import { PipelinesModule } from '../../pipelines.module.js';
import { generatedPapers, pdfText } from '../../testing/papers.js';
import { eventsOf, ingest } from '../../testing/items.js';
import { TIER0_VERSION } from './structure-task.js';

const MAIL = itemMeta('email', {
  from: [{ name: 'Jane Doe', address: 'jane@acme.example' }],
  to: [{ name: 'Bob Stone', address: 'bob@home.example' }],
  threadKey: 'old-thread',
});

describe('tier 0 backfill: items logged before a tier-0 version are read again by what it added', () => {
  let env: TestEnv;
  let bus: Bus;
  let app: INestApplicationContext | undefined;
  const start = async () => {
    app = await startService((config) => PipelinesModule.register(config, { workers: 1 }), env.config);
  };
  const ids = { paper: '', mail: '', note: '' };

  before(async () => {
    // A log an earlier memex wrote (a PDF read as a plain document, a mail, a note), with the
    // pipelines scheduler past all of it: it scheduled them then, with the rules it had.
    env = await createTestEnv();
    bus = await Bus.connect(env.config.natsUrl, 'backfill-test');
    await bus.ensureStreams();
    const publisher = new EventPublisher(bus);
    const blobs = new BlobStore(env.config.blobsDir);
    const paper = generatedPapers(1)[0]!;
    const { text, pages } = pdfText(paper.pages);
    ids.paper = (
      await ingest(publisher, blobs, {
        title: 'paper.pdf',
        text,
        typed: { kind: 'document', meta: pdfMeta(pages, text.length) },
      })
    ).id;
    ids.mail = (
      await ingest(publisher, blobs, {
        title: 'The quote',
        text: "Hi Bob,\n\nI'll send the signed copy by Friday.\n\nJane\n",
        typed: MAIL,
        occurred_at: '2025-03-04T09:15:00Z',
      })
    ).id;
    ids.note = (await ingest(publisher, blobs, { title: 'A note', text: 'Nothing to read here.' })).id;
    await bus.jsm.consumers.add(EVENTS_STREAM, {
      durable_name: 'pipelines_scheduler',
      ack_policy: AckPolicy.All,
      deliver_policy: DeliverPolicy.StartSequence,
      opt_start_seq: (await bus.lastSeq()) + 1,
      filter_subject: `${EVENT_SUBJECT_ROOT}.>`,
    });
    await start();
  });

  after(async () => {
    await app?.close();
    await bus?.close();
    await env?.stop();
  });

  test('the PDF gets its paper reading and the mail its commitments, nothing else is redone; the version is logged once', async () => {
    const [paper] = await eventsOf(bus, PaperExtracted.type, ids.paper, 1);
    const data = paper!.data as { made_by: string; paper: { title: string } | null; references: unknown[] };
    assert.equal(data.made_by, 'papers@1');
    assert.equal(data.paper?.title, generatedPapers(1)[0]!.title);
    assert.ok(data.references.length > 0);
    const [commitments] = await eventsOf(bus, CommitmentExtracted.type, ids.mail, 1);
    assert.deepEqual(
      (commitments!.data as { commitments: Array<{ what: string; due: string }> }).commitments.map((c) => [
        c.what,
        c.due,
      ]),
      [['send the signed copy', '2025-03-07']],
    );
    // Only what the version added: no second structure.extracted, nothing for the note.
    for (const id of Object.values(ids)) assert.equal((await logged(bus, StructureExtracted, `item:${id}`)).length, 0);
    assert.equal((await logged(bus, PaperExtracted, `item:${ids.note}`)).length, 0);

    assert.equal((await logged(bus, Tier0Upgraded, `structure:${TIER0_VERSION}`)).length, 1);
    await app!.close();
    await start();
    assert.equal(
      (await logged(bus, Tier0Upgraded, `structure:${TIER0_VERSION}`)).length,
      1,
      'a restart logs nothing more',
    );
  });
});
