import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  AdminReplay,
  ContextBrief,
  EntityGet,
  Ingest,
  ItemsDelete,
  MemexError,
  MentionComplete,
  TokensCreate,
} from '@memex/contracts';
import { startStack, type TestStack } from './stack.js';
import { snapshotSchema } from './snapshot.js';

function mail(headers: Record<string, string>, body = 'Hello.\r\n'): string {
  const text = `${Object.entries(headers)
    .map(([k, v]) => `${k}: ${v}`)
    .join('\r\n')}\r\n\r\n${body}`;
  return Buffer.from(text).toString('base64');
}

/** The graph fed by the real ingest service: memex.ingest in, people and organizations out. */
describe('graph through the gateway, fed by ingest', () => {
  let stack: TestStack;
  before(async () => {
    stack = await startStack(['ingest', 'graph']);
  });
  after(async () => stack.stop());

  test('mail in: people with names and organizations by domain; scopes; deletion; replay', async () => {
    const messages = [
      mail({
        From: 'Ann Lee <ann@acme-corp.example>',
        To: 'Bob Stone <bob@gmail.com>',
        Cc: 'carol@acme-corp.example',
        Subject: 'Renewal',
        Date: 'Tue, 4 Mar 2025 10:00:00 +0000',
        'Message-ID': '<r1@acme-corp.example>',
      }),
      mail({
        From: 'Bob Stone <bob@gmail.com>',
        To: '"Lee, Ann" <ann@acme-corp.example>',
        Subject: 'Re: Renewal',
        Date: 'Tue, 4 Mar 2025 12:00:00 +0000',
        'Message-ID': '<r2@gmail.com>',
        'In-Reply-To': '<r1@acme-corp.example>',
      }),
    ];
    const ingested = await stack.owner.call(Ingest, {
      items: messages.map((data, i) => ({
        type: 'message/rfc822',
        data,
        source: { kind: 'mbox', id: 'e2e' },
        external_id: `m${i}`,
      })),
    });
    assert.deepEqual(
      ingested.results.map((r) => r.status),
      ['created', 'created'],
    );
    const ann = await stack.owner.call(EntityGet, { key: 'person:ann@acme-corp.example', min_seq: ingested.seq });
    assert.equal(ann.entity.name, 'Ann Lee');
    assert.deepEqual(ann.entity.aliases, ['Lee, Ann']);
    assert.deepEqual(ann.timeline.map((t) => t.rels).sort(), [
      ['received', 'works_at'],
      ['sent', 'works_at'],
    ]);
    const acme = await stack.owner.call(EntityGet, { key: 'org:acme-corp.example' });
    assert.deepEqual(acme.facts.map((f) => 'entity' in f.other && f.other.entity.key).sort(), [
      'person:ann@acme-corp.example',
      'person:carol@acme-corp.example',
    ]);
    await assert.rejects(
      stack.owner.call(EntityGet, { key: 'org:gmail.com' }),
      (e: MemexError) => e.code === 'not_found',
    );

    // Scopes: an agent without `mail` knows nobody from mail; with it, Ann and her mail.
    const plain = stack.clientFor((await stack.owner.call(TokensCreate, { labels: ['client:acme'] })).token);
    const mailAgent = stack.clientFor((await stack.owner.call(TokensCreate, { labels: ['mail'] })).token);
    await assert.rejects(
      plain.call(EntityGet, { key: 'person:ann@acme-corp.example' }),
      (e: MemexError) => e.code === 'not_found',
    );
    assert.deepEqual((await plain.call(MentionComplete, { prefix: 'ann' })).items, []);
    const noMail = await plain.call(ContextBrief, { labels: ['person:ann@acme-corp.example', 'client:acme-corp'] });
    assert.deepEqual(noMail.lines, []);
    assert.equal(
      (await mailAgent.call(MentionComplete, { prefix: 'ann' })).items[0]?.key,
      'person:ann@acme-corp.example',
    );
    const withMail = await mailAgent.call(ContextBrief, { labels: ['person:ann@acme-corp.example'] });
    assert.ok(
      withMail.lines.some((l) => l.section === 'event' && l.text.includes('Renewal')),
      withMail.text,
    );

    // Deleting the only message Carol is in takes Carol with it, here and after a replay.
    const deleted = await stack.owner.call(ItemsDelete, { id: ingested.results[0]!.id! });
    await assert.rejects(
      stack.owner.call(EntityGet, { key: 'person:carol@acme-corp.example', min_seq: deleted.seq }),
      (e: MemexError) => e.code === 'not_found',
    );
    const before = await snapshotSchema(stack.config.databaseUrl, 'graph');
    await stack.owner.call(AdminReplay, { projector: 'graph' });
    assert.deepEqual(await snapshotSchema(stack.config.databaseUrl, 'graph'), before);
    await assert.rejects(
      stack.owner.call(EntityGet, { key: 'person:carol@acme-corp.example' }),
      (e: MemexError) => e.code === 'not_found',
    );
  });
});
