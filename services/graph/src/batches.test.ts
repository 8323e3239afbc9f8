import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { NamedDraft } from '@memex/bus';
import { newId } from '@memex/bus';
import { DATABASE, HandlerProjection, ProjectionRunner, ServiceHost } from '@memex/runtime';
import { seededRandom } from '@memex/testing';
import { linkId } from './domain/keys.js';
import { GraphProjector } from './projection/graph.projector.js';
import { mailEvent, message, noteEvent, snapshot, startGraph, type GraphHarness } from './testing/harness.js';

const PEOPLE = ['ann', 'bob', 'carla', 'david', 'elena', 'farid', 'grace', 'hiro', 'ines', 'jonas'].map((first, i) => ({
  address: `${first}@${['acme', 'globex', 'initech'][i % 3]}.example`,
  // Two spellings for some: a thing's name and aliases follow counts the batches must keep.
  names: i % 3 === 0 ? [`${first} Lee`, `${first.toUpperCase()} LEE`] : [`${first} Lee`],
}));
const COMPANIES = ['Acme Robotics', 'Globex Corp', 'Initech'];

/**
 * A seeded log as an import and tier 0 write it — mails, then each one's signature and commitments
 * readings, interleaved — with what makes a batch hard: readings of one item twice (a re-run
 * replaces the first), of a deleted item, of an item the graph lacks and of an agent's note,
 * retractions, merges and deletions between them.
 */
async function randomLog(h: GraphHarness, seed: number): Promise<NamedDraft[]> {
  const random = seededRandom(seed);
  const pick = <T>(list: T[]): T => list[Math.floor(random() * list.length)]!;
  const owner = { kind: 'user' as const, id: 'owner' };
  const pipeline = { kind: 'pipeline' as const, id: 'structure@1' };
  const mails: { id: string; sender: (typeof PEOPLE)[number]; to: (typeof PEOPLE)[number][] }[] = [];
  const drafts: NamedDraft[] = [];
  const readings: NamedDraft[] = [];
  const signature = (id: string, sender: (typeof PEOPLE)[number], version: number): NamedDraft => {
    const company = pick(COMPANIES);
    const fields = [
      { field: 'name', text: pick(sender.names), value: pick(sender.names), start: 10, end: 18 },
      { field: 'company', text: company, value: company, start: 19, end: 30 },
      ...(random() < 0.5 ? [{ field: 'title', text: 'Engineer', value: 'Engineer', start: 31, end: 39 }] : []),
      ...(random() < 0.3
        ? [{ field: 'phone', text: '+1 415 555 0100', value: '+14155550100', start: 40, end: 55 }]
        : []),
    ];
    return {
      type: 'structure.extracted',
      subject: `item:${id}`,
      actor: pipeline,
      labels: [],
      kind: 'email',
      data: {
        item_id: id,
        revision: 1,
        made_by: `structure@${version}`,
        mentions: [],
        truncated: false,
        ...(random() < 0.7 ? { signature: { sender: sender.address, start: 10, end: 55, fields } } : {}),
      },
    };
  };
  const commitments = (id: string, by: (typeof PEOPLE)[number], to: (typeof PEOPLE)[number][]): NamedDraft => ({
    type: 'commitment.extracted',
    subject: `item:${id}`,
    actor: { kind: 'pipeline', id: 'commitments@1' },
    labels: [],
    kind: 'email',
    data: {
      item_id: id,
      revision: 1,
      made_by: 'commitments@1',
      commitments: Array.from({ length: Math.floor(random() * 3) }, (_, k) => ({
        key: `c${k}`,
        kind: 'promise',
        by: [{ address: by.address, ...(random() < 0.5 ? { name: pick(by.names) } : {}) }],
        to: to.map((p) => ({ address: p.address })),
        what: pick(['send the draft', 'call back', 'review the quote']),
        due: random() < 0.5 ? '2026-03-20' : null,
        due_text: null,
        quote: 'I will do it.',
        start: 0,
        end: 13,
        confidence: 0.8,
      })),
    },
  });
  for (let n = 0; n < 60; n++) {
    const sender = pick(PEOPLE);
    const to = [pick(PEOPLE), pick(PEOPLE)].filter((p) => p !== sender);
    const mail = await mailEvent(
      h.blobs,
      message({
        From: `${pick(sender.names)} <${sender.address}>`,
        To: to.map((p) => `${pick(p.names)} <${p.address}>`).join(', '),
        Subject: `Message ${n}`,
        Date: new Date(Date.UTC(2025, 0, 1 + n)).toUTCString(),
        'Message-ID': `<m${n}.${seed}@batch.example>`,
      }),
      { spam: random() < 0.05 },
    );
    const id = (mail.data as { id: string }).id;
    mails.push({ id, sender, to });
    drafts.push(mail);
    readings.push(signature(id, sender, 1), commitments(id, sender, to));
    if (random() < 0.15) readings.push(signature(id, sender, 2));
    if (random() < 0.1) readings.push(commitments(id, sender, to));
    // The pipelines run behind the import: readings arrive in runs between mails.
    if (random() < 0.3) drafts.push(...readings.splice(0, Math.floor(random() * readings.length) + 1));
    if (random() < 0.05) {
      const gone = pick(mails);
      drafts.push({ type: 'item.deleted', subject: `item:${gone.id}`, actor: owner, data: { id: gone.id } });
    }
    if (random() < 0.05) {
      const [from, into] = [pick(PEOPLE), pick(PEOPLE)];
      if (from !== into) {
        drafts.push({
          type: 'entity.merged',
          subject: `entity:person:${from.address}`,
          actor: owner,
          data: { merge_id: newId(), from: `person:${from.address}`, into: `person:${into.address}` },
        });
      }
    }
    if (random() < 0.05) {
      const said = pick(mails);
      const id = linkId(`person:${said.sender.address}`, 'has_title', 'title:engineer', 'structure@1');
      drafts.push({ type: 'link.retracted', subject: `link:${id}`, actor: owner, data: { link_id: id } });
    }
  }
  // An agent's note (its commitments are no evidence) and an item the graph never saw.
  const note = await noteEvent('Notes of a call', { actor: { kind: 'session', id: 'token:agent' } });
  const noteId = (note.data as { id: string }).id;
  drafts.push(note, commitments(noteId, PEOPLE[0]!, [PEOPLE[1]!]), commitments(newId(), PEOPLE[2]!, []));
  drafts.push(signature(newId(), PEOPLE[3]!, 1), ...readings);
  return drafts;
}

/** Splits a batch at random places: what a live consumer's batches look like. */
function randomChunks<T>(items: T[], random: () => number): T[][] {
  const chunks: T[][] = [];
  for (let i = 0; i < items.length;) {
    const size = 1 + Math.floor(random() * 40);
    chunks.push(items.slice(i, i + size));
    i += size;
  }
  return chunks;
}

describe('graph projector batches', () => {
  let h: GraphHarness;
  before(async () => {
    h = await startGraph();
  });
  after(async () => {
    await h?.stop();
  });

  test('random batches of mail, tier 0 readings, merges, retractions and deletions leave what applying each event alone leaves', async () => {
    await h.publish(await randomLog(h, 13));
    const live = await snapshot(h.env.config.databaseUrl);
    assert.ok(live.links!.some((row) => row.includes('"made_by":"structure@')));
    assert.ok(live.commitments!.length > 0);
    assert.ok(live.refused_evidence!.length > 0, "the agent's note is refused as evidence");
    assert.equal(live.projector_failures!.length, 0);

    const runner = h.app.get(ServiceHost).projector!;
    const handlers = HandlerProjection.of(h.app.get(GraphProjector));
    const oneByOne = new ProjectionRunner(h.bus, h.env.config.databaseUrl, h.app.get(DATABASE), runner.options, {
      apply: (trx, logged) => handlers.apply(trx, logged),
      afterBulkLoad: (db) => handlers.afterBulkLoad(db),
    });
    await oneByOne.rebuild(h.env.config.databaseUrl);
    assert.deepEqual(await snapshot(h.env.config.databaseUrl), live);

    for (const seed of [1, 2]) {
      const random = seededRandom(seed);
      const chunked = new ProjectionRunner(h.bus, h.env.config.databaseUrl, h.app.get(DATABASE), runner.options, {
        apply: (trx, logged) => handlers.apply(trx, logged),
        afterBulkLoad: (db) => handlers.afterBulkLoad(db),
        async applyBatch(trx, batch) {
          for (const chunk of randomChunks(batch, random)) await handlers.applyBatch(trx, chunk);
        },
      });
      await chunked.rebuild(h.env.config.databaseUrl);
      assert.deepEqual(await snapshot(h.env.config.databaseUrl), live, `batches cut with seed ${seed}`);
    }
  });
});
