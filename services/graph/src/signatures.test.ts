import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { INestApplicationContext } from '@nestjs/common';
import { EntityGet, ItemDeleted, StructureExtracted } from '@memex/contracts';
import { lastEventOf } from '@memex/bus';
import { PipelinesModule } from '@memex/pipelines';
import { startService } from '@memex/runtime';
import { mailEvent, startGraph, type GraphHarness } from './testing/harness.js';

const MAIL = `From: Jane Doe <jane@acme.example>
To: Owner <owner@home.example>
Subject: The robot arm quote
Date: Tue, 04 Mar 2025 09:15:00 +0000
Message-ID: <sig-1@acme.example>
Content-Type: text/plain; charset=utf-8

Hi,

the quote for the arm is $12,400.00; I'll send the signed copy by Friday.

Best regards,
Jane Doe
Senior Research Engineer, Acme Robotics Inc.
Mobile: +1 415-555-0132
`;

/** The last `structure.extracted` for an item, once the pipelines have published it. */
async function structureOf(h: GraphHarness, itemId: string) {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const found = await lastEventOf(h.bus, StructureExtracted, `item:${itemId}`);
    if (found) return found;
    if (Date.now() > deadline) throw new Error(`no structure.extracted for ${itemId}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('signature facts (tier 0 → graph)', () => {
  let h: GraphHarness;
  let pipelines: INestApplicationContext;

  before(async () => {
    h = await startGraph();
    pipelines = await startService((config) => PipelinesModule.register(config, { workers: 1 }), h.env.config);
  });

  after(async () => {
    await pipelines?.close();
    await h?.stop();
  });

  test("an ingested mail's signature puts the sender's title, company and phone on their card, with spans as evidence; a re-run replaces them, a deletion takes them", async () => {
    const draft = await mailEvent(h.blobs, Buffer.from(MAIL));
    // The flags services/ingest writes (the harness leaves them out): the pipelines read mail meta checked.
    (draft.data as { meta: Record<string, unknown> }).meta.flags = { read: false, starred: false };
    await h.publish([draft]);
    const itemId = draft.subject.slice('item:'.length);
    const { seq, event } = await structureOf(h, itemId);
    assert.equal(event.data.made_by, 'structure@1');
    assert.ok(event.data.mentions.some((m) => m.kind === 'money' && m.value === 'USD 12400'));
    await h.applied(seq);

    const jane = await h.call(EntityGet, { key: 'person:jane@acme.example' });
    const fromText = jane.facts.filter((f) => f.made_by === 'structure@1');
    const other = (rel: string) => {
      const fact = fromText.find((f) => f.rel === rel);
      assert.ok(fact, `a ${rel} fact from the signature`);
      assert.equal(fact.basis, 'observed');
      assert.ok(fact.other && 'entity' in fact.other);
      return { key: fact.other.entity.key, name: fact.other.entity.name, evidence: fact.evidence };
    };
    const company = other('works_at');
    assert.equal(company.key, 'org:acme robotics inc.');
    assert.equal(company.name, 'Acme Robotics Inc.');
    assert.equal(company.evidence[0]!.item, itemId);
    assert.equal(company.evidence[0]!.quote, 'Acme Robotics Inc.');
    // The span points at those words in the item's text.
    const text = (await h.blobs.get((draft.data as { text_sha256: string }).text_sha256)).toString('utf8');
    const [start, end] = company.evidence[0]!.part!.replace('chars:', '').split('-').map(Number);
    assert.equal(text.slice(start, end), 'Acme Robotics Inc.');
    assert.equal(other('has_title').key, 'title:Senior Research Engineer');
    assert.equal(other('has_phone').key, 'phone:+14155550132');
    assert.equal(jane.entity.name, 'Jane Doe');

    // A newer version of the rules replaces exactly its own facts: one that reads no phone takes the phone back.
    const data = event.data;
    const signature = data.signature!;
    const next = await h.publish([
      {
        type: StructureExtracted.type,
        subject: `item:${itemId}`,
        actor: { kind: 'pipeline', id: 'structure@2' },
        labels: [],
        kind: 'email',
        data: {
          ...data,
          made_by: 'structure@2',
          signature: { ...signature, fields: signature.fields.filter((f) => f.field !== 'phone') },
        },
      },
    ]);
    await h.applied(next);
    const after = await h.call(EntityGet, { key: 'person:jane@acme.example' });
    const rels = after.facts
      .filter((f) => f.made_by.startsWith('structure@'))
      .map((f) => `${f.rel} ${f.made_by}`)
      .sort();
    assert.deepEqual(rels, ['has_title structure@2', 'works_at structure@2']);
    // The header's facts are another maker's: no works_at among them, as Jane is the only one
    // writing from acme.example (her signature does not make it an organization yet): it is hers.
    assert.ok(!after.facts.some((f) => f.made_by === 'ingest@1' && f.rel === 'works_at'));
    assert.deepEqual(after.own_domains, ['acme.example']);

    // Deleting the message takes its signature's facts (and the company it alone named) with it.
    await h.publish([
      {
        type: ItemDeleted.type,
        subject: `item:${itemId}`,
        actor: { kind: 'user', id: 'owner' },
        labels: [],
        data: { id: itemId },
      },
    ]);
    const gone = await h.call(EntityGet, { key: 'person:jane@acme.example' }).catch(() => undefined);
    assert.equal(gone?.facts.filter((f) => f.made_by.startsWith('structure@')).length ?? 0, 0);
    await assert.rejects(h.call(EntityGet, { key: 'org:acme robotics inc.' }));
  });
});
