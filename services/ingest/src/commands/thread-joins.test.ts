import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Ingest, ThreadJoined } from '@memex/contracts';
import { readEventsOf } from '@memex/bus';
import { b64, startIngest, type IngestHarness } from '../testing/service.js';

function mail(id: string, references: string[] = []): Buffer {
  const headers = [
    'From: Dev <dev@example.org>',
    'To: list@example.org',
    `Subject: ${references.length > 0 ? 'Re: ' : ''}series`,
    'Date: Tue, 1 Mar 2011 10:00:00 +0000',
    `Message-ID: <${id}@gen>`,
    ...(references.length > 0 ? [`References: ${references.map((r) => `<${r}@gen>`).join(' ')}`] : []),
  ];
  return Buffer.from(`${headers.join('\r\n')}\r\n\r\nbody of ${id}\r\n`);
}

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
  });
});
