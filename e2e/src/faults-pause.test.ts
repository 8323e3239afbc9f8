import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Bus, EVENTS_STREAM } from '@memex/bus';
import { MailAccounts } from '@memex/contracts';
import { projectorConsumer } from '@memex/runtime';
import { freePort } from '@memex/stack';
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
 * imported, long enough that NATS drops its connection as stale, then continued (SIGCONT). A
 * projector paused for minutes meets the same fate: nats-server 2.9 pings a silent client every 2
 * minutes and closes it after 2 unanswered pings; this stack's server pings every 2 s, so the
 * minutes become seconds on the same path. While paused, /healthz and `memex status` say it does
 * not answer and how far behind it falls (its lag read from JetStream); continued, it finds its
 * connection gone, reconnects, resumes its durable consumer and catches up, and its read model
 * equals a fresh replay: nothing lost.
 */
const MESSAGES = 500;
/** At least this long, and until NATS has dropped the paused connection. */
const PAUSE_MS = 20_000;
const PING = { intervalSeconds: 2, max: 2 };

let stack: SupervisedStack;
let target: ImportTarget;
let monitor: string;
before(async () => {
  const monitorPort = await freePort();
  monitor = `http://127.0.0.1:${monitorPort}`;
  stack = await startSupervisedStack(['gateway', 'ingest', 'graph'], {}, { monitorPort, ping: PING });
  target = await archiveFor(stack, MESSAGES, 37);
});
after(async () => {
  await stack?.stop();
});

const graphOf = (health: Health | undefined) => health?.services.find((s) => s.service === 'graph');

/** A client connection as the NATS monitor lists it (a closed one with why and when). */
interface Connection {
  cid: number;
  name?: string;
  reason?: string;
  stop?: string;
}

/** The graph service's NATS connections, open or closed, from the server's monitor. */
async function graphConnections(state: 'open' | 'closed'): Promise<Connection[]> {
  const reply = await fetch(`${monitor}/connz?state=${state}&limit=1024`);
  const { connections } = (await reply.json()) as {
    connections: Connection[] | null;
  };
  return (connections ?? []).filter((c) => c.name === 'memex-graph');
}

test(`graph paused (SIGSTOP) during a ${MESSAGES}-message import until NATS drops it as stale: its lag shows, it reconnects and catches up, nothing lost`, async () => {
  const [connected] = await graphConnections('open');
  assert.ok(connected, 'graph is connected to NATS before the pause');
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

    // NATS closes the silent connection ((max + 1) pings at most) or, if its socket fills first, as a slow consumer.
    let dropped: Connection | undefined;
    await waitUntil(
      async () => (dropped = (await graphConnections('closed')).find((c) => c.cid === connected.cid)) !== undefined,
      "NATS to drop the paused graph's connection",
      { timeoutMs: 120_000, everyMs: 500 },
    );
    const droppedAfter = Date.parse(dropped!.stop!) - paused;
    assert.match(dropped!.reason ?? '', /Stale Connection|Slow Consumer/);
    // Still told truly while its connection is gone.
    const whileGone = await stack.health();
    assert.notEqual(whileGone?.status, 'ok');
    assert.equal(graphOf(whileGone)?.ready, false);
    assert.ok((graphOf(whileGone)?.projector?.lag ?? 0) >= MESSAGES, JSON.stringify(graphOf(whileGone)));

    const left = PAUSE_MS - (Date.now() - paused);
    if (left > 0) await new Promise((resolve) => setTimeout(resolve, left));
    process.kill(pid, 'SIGCONT');
    continued = true;
    const resumed = Date.now();
    await stack.settled(300_000);
    const caughtUp = Date.now() - resumed;
    assert.equal(stack.pid('graph'), pid, 'the same process caught up (it was not restarted)');
    // What NATS had sent the dropped connection is read again at once, by a consumer made again at
    // the checkpoint once reconnected; not after the old consumer's ack wait of a minute from the
    // deliveries, 40 s or more after SIGCONT here (it caught up 46 s after it before).
    const bus = await Bus.connect(stack.config.natsUrl, 'faults-pause');
    const consumer = await bus.jsm.consumers.info(EVENTS_STREAM, projectorConsumer('graph')).finally(() => bus.close());
    const madeAfter = Date.parse(consumer.created) - resumed;
    assert.ok(madeAfter > 0 && madeAfter < 20_000, `graph's consumer made again ${madeAfter} ms after SIGCONT`);
    assert.ok(
      (await graphConnections('open')).some((c) => c.cid !== connected.cid),
      'graph is connected again, on a new connection',
    );

    const { accounts } = await stack.owner.call(MailAccounts, { min_seq: lastSeq });
    assert.deepEqual(
      accounts.map((a) => a.messages),
      [MESSAGES],
    );
    const { live, replayed } = await replayAndCompare(stack, 'graph', 'graph');
    assert.deepEqual(replayed, live, "the graph's read model equals a fresh replay");
    console.log(
      `faults (paused projector): graph stopped ${Math.round((resumed - paused) / 1000)} s, its NATS connection closed after ${Math.round(droppedAfter / 1000)} s ` +
        `("${dropped!.reason}", ping every ${PING.intervalSeconds} s, at most ${PING.max} unanswered); healthz showed lag ${graph.projector?.lag} ` +
        `(status: "${/graph.*$/m.exec(status.stdout)?.[0]?.trim()}"); caught up ${caughtUp} ms after SIGCONT; ${MESSAGES} messages checked, replay equal`,
    );
  } finally {
    if (!continued) process.kill(pid, 'SIGCONT');
  }
});
