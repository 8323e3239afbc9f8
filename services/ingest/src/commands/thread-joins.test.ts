import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Ingest, ThreadJoined } from '@memex/contracts';
import { readEventsOf } from '@memex/bus';
import { seriesMail as mail } from '../testing/archive.js';
import { b64, startIngest, type IngestHarness } from '../testing/service.js';
import { ThreadJoins } from './thread-joins.js';

describe('ingest: thread.joined', () => {
  let h: IngestHarness;
  before(async () => {
    h = await startIngest();
  });
  after(async () => h?.stop());

  const ingest = async (...messages: Buffer[]) =>
    (
      await h.call(Ingest, {
        items: messages.map((bytes) => ({
          type: 'message/rfc822',
          data: b64(bytes),
          source: { kind: 'mbox', id: 't' },
        })),
      })
    ).results.map((r) => r.id!);
  const joins = async () => {
    const out = [];
    for await (const { event } of readEventsOf(h.bus, ThreadJoined, { untilCaughtUp: true })) out.push(event.data);
    return out;
  };

  test('a middle message arriving last joins the halves under the oldest thread key; a plain reply joins nothing', async () => {
    // c's mailer trimmed References to its parent b: alone, c's thread key is b.
    await ingest(mail('a'), mail('c', ['b']));
    await ingest(mail('e'), mail('f', ['e']));
    assert.deepEqual(await joins(), []);
    const [b] = await ingest(mail('b', ['a']));
    assert.deepEqual(await joins(), [{ key: 'a@gen', merged: ['b@gen'], id: b }]);
    // Replies in the joined thread say nothing more: its keys are all where they belong.
    await ingest(mail('d', ['a', 'b', 'c']));
    await ingest(mail('d2', ['b', 'c']));
    assert.deepEqual(await joins(), [{ key: 'a@gen', merged: ['b@gen'], id: b }]);
    // A message that brings another thread's key in is a new join, of that key alone.
    const [x] = await ingest(mail('x', ['c', 'e']));
    assert.deepEqual((await joins()).slice(1), [{ key: 'a@gen', merged: ['e@gen', 'c@gen'], id: x }]);
  });

  test('joins missed while the read model is late wait and are published with the next request', async () => {
    await ingest(mail('g'), mail('i', ['h']));
    const [h2] = await ingest(mail('h', ['g']));
    const before = (await joins()).length;
    const threadJoins = h.app.get(ThreadJoins);
    // As if h had been stored at the log's next sequence and the read model were not there in time.
    await threadJoins.publishFor([h2!], (await h.bus.lastSeq()) + 1, { kind: 'import', id: 'test' });
    assert.equal(threadJoins.lateCount, 1);
    assert.equal((await joins()).length, before);
    // The next request's events pass that sequence: it publishes h's join too.
    await ingest(mail('unrelated'));
    assert.equal(threadJoins.lateCount, 0);
    assert.deepEqual((await joins()).at(-1), { key: 'g@gen', merged: ['h@gen'], id: h2 });
  });
});
