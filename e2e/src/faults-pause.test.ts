import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { MailAccounts } from '@memex/contracts';
import { waitUntil } from '@memex/testing';
import { importMbox, publishedEmails, spawnMemex, type ImportTarget } from './mbox-import.js';
import {
  archiveFor,
  replayAndCompare,
  startSupervisedStack,
  type Health,
  type SupervisedStack,
} from './supervised-stack.js';

/**
 * A paused projector: the graph service's process stopped (SIGSTOP) while 500 messages are
 * imported, held for 20 s (not minutes: the suite's time on two cores; NATS would drop a client
 * silent for its ping interval, minutes, which this does not reach), then continued (SIGCONT).
 * While paused, /healthz and `memex status` say it does not answer and how far behind it falls
 * (its lag read from JetStream); afterwards it catches up and its read model equals a fresh
 * replay: nothing lost.
 */
const MESSAGES = 500;
const PAUSE_MS = 20_000;

let stack: SupervisedStack;
let target: ImportTarget;
before(async () => {
  stack = await startSupervisedStack(['gateway', 'ingest', 'graph']);
  target = await archiveFor(stack, MESSAGES, 37);
});
after(async () => {
  await stack?.stop();
});

const graphOf = (health: Health | undefined) => health?.services.find((s) => s.service === 'graph');

test(`graph paused (SIGSTOP) for ${PAUSE_MS / 1000} s during a ${MESSAGES}-message import: its lag shows, it catches up, nothing lost`, async () => {
  const pid = stack.pid('graph');
  process.kill(pid, 'SIGSTOP');
  const paused = Date.now();
  let continued = false;
  try {
    const run = await importMbox(target, 5).done;
    assert.equal(run.code, 0, JSON.stringify(run.summary));
    const { lastSeq } = await publishedEmails(stack.config.natsUrl);

    // The paused projector's lag as /healthz tells it, growing to the whole import.
    await waitUntil(
      async () => (graphOf(await stack.health())?.projector?.lag ?? 0) >= MESSAGES,
      'the lag of every message',
      {
        timeoutMs: 60_000,
        everyMs: 500,
      },
    );
    const health = await stack.health();
    assert.notEqual(health?.status, 'ok');
    const graph = graphOf(health)!;
    assert.equal(graph.ready, false);
    const status = await spawnMemex(target, ['status']).done;
    assert.equal(status.code, 1);
    assert.match(status.stdout, new RegExp(`graph\\s+not answering, [\\d,]+ events behind`));

    const left = PAUSE_MS - (Date.now() - paused);
    if (left > 0) await new Promise((resolve) => setTimeout(resolve, left));
    process.kill(pid, 'SIGCONT');
    continued = true;
    const resumed = Date.now();
    await stack.settled(300_000);
    const caughtUp = Date.now() - resumed;
    assert.equal(stack.pid('graph'), pid, 'the same process caught up (it was not restarted)');

    const { accounts } = await stack.owner.call(MailAccounts, { min_seq: lastSeq });
    assert.deepEqual(
      accounts.map((a) => a.messages),
      [MESSAGES],
    );
    const { live, replayed } = await replayAndCompare(stack, 'graph', 'graph');
    assert.deepEqual(replayed, live, "the graph's read model equals a fresh replay");
    console.log(
      `faults (paused projector): graph stopped ${Math.round((resumed - paused) / 1000)} s; healthz showed lag ${graph.projector?.lag} ` +
        `(status: "${/graph.*$/m.exec(status.stdout)?.[0]?.trim()}"); caught up ${caughtUp} ms after SIGCONT; ${MESSAGES} messages checked, replay equal`,
    );
  } finally {
    if (!continued) process.kill(pid, 'SIGCONT');
  }
});
