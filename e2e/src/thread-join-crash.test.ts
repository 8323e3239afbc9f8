import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import pg from 'pg';
import { Bus, callMethod, readEventsOf } from '@memex/bus';
import { Ingest, ItemIngested, MemexError, ThreadJoined } from '@memex/contracts';
import { seriesMail } from '@memex/ingest/testing';
import { createTestEnv, spawnService, waitUntil, type TestEnv } from '@memex/testing';

/** A message of the series, as memex.ingest takes it (base64). */
const mail = (id: string, references: string[] = []) => seriesMail(id, references).toString('base64');

let env: TestEnv;
let bus: Bus;
before(async () => {
  env = await createTestEnv();
  bus = await Bus.connect(env.config.natsUrl, 'thread-join-crash');
  await bus.ensureStreams();
});
after(async () => {
  await bus.close();
  await env.stop();
});

const request = (messages: string[], timeoutMs: number) =>
  callMethod(
    bus,
    Ingest,
    { items: messages.map((data) => ({ type: 'message/rfc822', data, source: { kind: 'mbox', id: 'crash' } })) },
    { timeoutMs },
  );
const ingest = (...messages: string[]) => request(messages, 120_000);

async function joins() {
  const out = [];
  for await (const { event } of readEventsOf(bus, ThreadJoined, { untilCaughtUp: true })) out.push(event.data);
  return out;
}

async function logged(messageId: string): Promise<boolean> {
  for await (const { event } of readEventsOf(bus, ItemIngested, { untilCaughtUp: true }))
    if (event.data.kind === 'email' && event.data.meta.messageId === messageId) return true;
  return false;
}

/** An ingest process, once it answers (an empty request is refused, by a running ingest). */
async function started(): Promise<ChildProcess> {
  const child = spawnService(env.config, 'ingest');
  try {
    await waitUntil(
      async () =>
        callMethod(bus, Ingest, { items: [] }, { timeoutMs: 5_000 }).then(
          () => true,
          (error: unknown) => error instanceof MemexError && error.code === 'invalid_params',
        ),
      'ingest to answer',
    );
  } catch (error) {
    await killed(child);
    throw error;
  }
  return child;
}

async function killed(child: ChildProcess): Promise<void> {
  const exit = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exit;
}

test('a thread join pending when ingest is killed (SIGKILL after the message, before its join) is published at the next start, once; replies in the joined thread publish none', async () => {
  const first = await started();
  // c's mailer trimmed References to its parent b: apart, a and c are two threads.
  await ingest(mail('a'), mail('c', ['b']));
  assert.deepEqual(await joins(), []);

  // Hold ingest's read model back (its projector cannot write messages), so the join of b — which
  // waits for the read model to hold b — is still to come when the process dies.
  const lock = new pg.Client({ connectionString: env.config.databaseUrl });
  await lock.connect();
  await lock.query('begin');
  await lock.query('lock table ingest.messages in access exclusive mode');
  // A request whose service dies unanswered ends by its timeout (NATS says nothing of a responder
  // gone mid-request): a short one, which an ingest that lived would answer within (its wait for
  // the read model is 10 s).
  const pending = request([mail('b', ['a'])], 20_000).catch((error: unknown) => error);
  await waitUntil(() => logged('b@gen'), 'b in the log');
  await killed(first);
  assert.ok((await pending) instanceof Error, 'the request died with the process');
  assert.deepEqual(await joins(), [], 'killed before the join');
  await lock.query('rollback');
  await lock.end();

  // No request comes: the restarted ingest publishes the join its read model shows pending.
  const second = await started();
  try {
    await waitUntil(async () => (await joins()).length > 0, 'the pending join', { timeoutMs: 120_000 });
    const b = (await joins())[0]!;
    assert.deepEqual([b.key, b.merged], ['a@gen', ['b@gen']]);

    // Replies in the joined thread join nothing new; a message linking another thread does, once.
    await ingest(mail('d', ['a', 'b', 'c']));
    await ingest(mail('e'), mail('f', ['c', 'e']));
    await ingest(mail('g', ['a', 'f']));
    assert.deepEqual(
      (await joins()).map((j) => [j.key, j.merged]),
      [
        ['a@gen', ['b@gen']],
        ['a@gen', ['e@gen', 'c@gen']],
      ],
    );
  } finally {
    await killed(second);
  }
});
