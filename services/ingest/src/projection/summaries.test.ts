import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Ingest, ItemsDelete, ItemsGet, ItemUnderstood, makerString, type Maker } from '@memex/contracts';
import { sql, type Kysely } from 'kysely';
import { EventPublisher } from '@memex/bus';
import { DATABASE } from '@memex/runtime';
import { b64, startIngest, type IngestHarness } from '../testing/service.js';

let h: IngestHarness;
before(async () => {
  h = await startIngest();
});
after(async () => h.stop());

test("memex.items.get shows tier 2's latest summary and its maker; it goes with the item", async () => {
  const created = await h.call(Ingest, {
    items: [
      {
        type: 'text/plain',
        data: b64('The committee met and approved the budget.'),
        source: { kind: 'test', id: 'x' },
        external_id: 'minutes.txt',
      },
    ],
  });
  const id = created.results[0]!.id!;
  const before = await h.call(ItemsGet, { id, min_seq: created.seq });
  assert.equal(before.summary, null);

  const publisher = new EventPublisher(h.bus, 'pipelines');
  const summarize = (summary: string, version: string) => {
    const made_by: Maker = { task: 'summary', model: 'fake', version, hash: '0123456789abcdef' };
    return publisher.publish(ItemUnderstood, {
      subject: `item:${id}`,
      actor: { kind: 'pipeline', id: makerString(made_by) },
      data: {
        item_id: id,
        revision: 1,
        task: 'summary',
        made_by,
        usage: { requests: 1, tokens: 90, cost: 0 },
        summary,
      },
    });
  };
  await summarize('The budget was approved.', '1');
  const { seq } = await summarize('The committee approved the budget.', '2');
  const read = await h.call(ItemsGet, { id, min_seq: seq });
  assert.deepEqual(read.summary, {
    text: 'The committee approved the budget.',
    made_by: 't2-summary@fake/2#0123456789abcdef',
  });

  const deleted = await h.call(ItemsDelete, { id });
  await assert.rejects(h.call(ItemsGet, { id, min_seq: deleted.seq }), /no item/);
  const db = h.app.get<Kysely<unknown>>(DATABASE);
  const left = await sql<{ n: number }>`select count(*)::int as n from summaries`.execute(db);
  assert.equal(left.rows[0]!.n, 0, 'the summary went with the item');
});
