import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { BlobStore } from '@memex/blobs';
import { Bus, EventPublisher, newId } from '@memex/bus';
import {
  ItemIngested,
  type MemexError,
  NotesPut,
  type ResultOf,
  Search,
  Similar,
  TokensCreate,
} from '@memex/contracts';
import { itemMeta } from '@memex/testing';
import type { MemexClient } from '@memex/client';
import { startStack, type TestStack } from './stack.js';

/** Searches until `found` holds (tier 1 runs after the write), or fails after a while. */
async function eventually(
  client: MemexClient,
  q: string,
  found: (r: ResultOf<typeof Search>) => boolean,
): Promise<ResultOf<typeof Search>> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const result = await client.call(Search, { q });
    if (found(result)) return result;
    if (Date.now() > deadline)
      throw new Error(`"${q}" never matched: ${JSON.stringify(result.hits.map((h) => h.title))}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

describe('search through the gateway', () => {
  let stack: TestStack;
  let bus: Bus;
  let mailId: string;
  let noteId: string;

  before(async () => {
    stack = await startStack(['ingest', 'pipelines', 'search']);
    bus = await Bus.connect(stack.config.natsUrl, 'e2e-search');
    // A mail item as ingest publishes it: its text in a blob first.
    mailId = newId();
    const text = Buffer.from('Dear Sam, the contract renewal for the harbour warehouse is attached. Regards, Ann');
    const sha = await new BlobStore(stack.config.blobsDir).put(text);
    await new EventPublisher(bus).publish(ItemIngested, {
      subject: `item:${mailId}`,
      actor: { kind: 'import', id: 'e2e' },
      kind: 'email',
      labels: [],
      data: {
        id: mailId,
        ...itemMeta('email', {
          from: [{ name: 'Ann Lee', address: 'ann@example.com' }],
          to: [{ name: 'Sam', address: 'sam@example.com' }],
          threadKey: 'm1@e2e',
          flags: { read: false, starred: false },
        }),
        revision: 1,
        title: 'Warehouse contract renewal',
        source: { kind: 'mbox', id: 'e2e' },
        external_id: 'm1',
        identity: 'message-id:m1@e2e',
        origin: 'imported',
        content_type: 'message/rfc822',
        content_sha256: sha,
        size: text.length,
        text_sha256: sha,
        text_length: text.length,
      },
    });
    noteId = (
      await stack.owner.call(NotesPut, { body: 'Warehouse lease: ask the landlord about the contract renewal terms.' })
    ).id;
  });
  after(async () => {
    await bus.close();
    await stack.stop();
  });

  test('the owner finds mail and notes; an agent token without mail sees no mail at all', async () => {
    const owner = await eventually(
      stack.owner,
      'warehouse contract renewal',
      (r) => r.hits.length === 2 && r.hits.every((h) => h.why.meaning),
    );
    assert.deepEqual(new Set(owner.hits.map((h) => h.id)), new Set([mailId, noteId]));

    const plain = await stack.owner.call(TokensCreate, { labels: [] });
    const agent = stack.clientFor(plain.token);
    const seen = await agent.call(Search, { q: 'warehouse contract renewal', min_seq: plain.seq });
    assert.deepEqual(
      seen.hits.map((h) => h.id),
      [noteId],
    );
    assert.equal(seen.groups.email, undefined);
    assert.deepEqual((await agent.call(Search, { q: 'from:ann' })).hits, []);
    await assert.rejects(agent.call(Similar, { id: mailId }), (error: MemexError) => error.code === 'not_found');

    const mail = await stack.owner.call(TokensCreate, { labels: ['mail'] });
    const mailAgent = stack.clientFor(mail.token);
    const withMail = await mailAgent.call(Search, { q: 'from:ann', min_seq: mail.seq });
    assert.deepEqual(
      withMail.hits.map((h) => h.id),
      [mailId],
    );
  });
});
