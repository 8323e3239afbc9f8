import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { generateMessages } from '@memex/ingest/testing';
import { publishedEmails } from './mbox-import.js';
import { startStack, type TestStack } from './stack.js';

/**
 * Backpressure: a client sending memex.ingest requests faster than the memex takes them (here 24
 * at once, of 10 messages each) has the ones beyond what ingest works on at a time refused with
 * HTTP 503, `unavailable` and a Retry-After, instead of their items piling up in memory; sent
 * again after the wait it asks for, every item is stored, each once. (The stack's memory during a
 * large import is measured by `npm run bench -- ingest`, not here.)
 */
const REQUESTS = 24;
const PER_REQUEST = 10;

let stack: TestStack;
before(async () => {
  stack = await startStack(['ingest']);
});
after(async () => {
  await stack?.stop();
});

test(`${REQUESTS} requests at once: the ones beyond ingest's limit answer 503 with Retry-After; resent, each item is stored once`, async () => {
  const messages = [...generateMessages({ messages: REQUESTS * PER_REQUEST, seed: 41 })];
  const send = (batch: number) =>
    fetch(`${stack.url}/api/v1/memex/rpc`, {
      method: 'POST',
      headers: { authorization: `Bearer ${stack.ownerToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        method: 'memex.ingest',
        params: {
          items: messages.slice(batch * PER_REQUEST, (batch + 1) * PER_REQUEST).map((m) => ({
            type: 'message/rfc822',
            data: m.bytes.toString('base64'),
            source: { kind: 'mbox', id: 'pressure' },
            external_id: m.messageId,
          })),
        },
      }),
    });
  let waiting = Array.from({ length: REQUESTS }, (_, i) => i);
  const refusals: Array<{ retryAfter: string | null; message: string }> = [];
  let timeouts = 0;
  for (let round = 0; waiting.length > 0 && round < 20; round++) {
    const answers = await Promise.all(waiting.map(async (batch) => ({ batch, reply: await send(batch) })));
    waiting = [];
    let wait = 0;
    for (const { batch, reply } of answers) {
      const body = (await reply.json()) as { error?: { code: string; message: string } };
      if (reply.status === 200) continue;
      waiting.push(batch);
      // A request taken but slower than the gateway's wait (a loaded machine) is sent again too.
      if (reply.status === 504) {
        timeouts++;
        continue;
      }
      assert.equal(reply.status, 503, JSON.stringify(body));
      assert.equal(body.error?.code, 'unavailable');
      refusals.push({ retryAfter: reply.headers.get('retry-after'), message: body.error!.message });
      wait = Math.max(wait, Number(reply.headers.get('retry-after')));
    }
    await new Promise((resolve) => setTimeout(resolve, wait * 1000));
  }
  assert.deepEqual(waiting, [], 'every request was taken in the end');
  assert.ok(refusals.length > 0, `some of ${REQUESTS} requests at once were refused`);
  for (const refusal of refusals) {
    assert.match(refusal.message, /memex\.ingest is busy with \d+ requests \(at most 8 at once\)/);
    assert.equal(refusal.retryAfter, '2');
  }
  const { published } = await publishedEmails(stack.config.natsUrl);
  assert.equal(published.size, REQUESTS * PER_REQUEST);
  assert.deepEqual([...new Set(published.values())], [1]);
  console.log(
    `backpressure: ${refusals.length} refusals (503, Retry-After 2) for ${REQUESTS} requests sent at once (${timeouts} timed out at the gateway and were resent); ${published.size} messages stored once each`,
  );
});
