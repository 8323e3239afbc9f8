import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { servicesReady, spawnService, waitUntil } from '@memex/testing';
import { importMbox, publishedEmails, spawnMemex } from './mbox-import.js';
import {
  archiveFor,
  replayAndCompare,
  startSupervisedStack,
  type Health,
  type SupervisedStack,
} from './supervised-stack.js';

/**
 * A stopped service does not hold imports back: backpressure by lag (MEMEX_INGEST_MAX_LAG, here
 * 100) waits for projectors whose service is up, busy or paused (backpressure-lag.test.ts), not
 * for one with no process at all. With graph SIGKILLed and not restarted (it runs outside the
 * supervisor here), an import of 500 messages completes though graph falls 500+ events behind;
 * meanwhile /healthz says `down` (not `starting`: graph was up) with graph's lag, and `memex
 * status` says graph is not answering and how far behind it is. Started again, graph catches up
 * from its durable consumer, and its read model equals a fresh replay.
 */
const MESSAGES = 500;
const MAX_LAG = 100;

let stack: SupervisedStack;
let graph: ChildProcess | undefined;

before(async () => {
  // graph is expected (health asks for it) but not supervised, so a kill stops it for good.
  stack = await startSupervisedStack(['gateway', 'ingest'], {
    ingestMaxLag: MAX_LAG,
    services: ['gateway', 'ingest', 'graph'],
  });
  graph = spawnService(stack.config, 'graph');
  await servicesReady(stack.url, ['graph'], 180_000);
});
after(async () => {
  graph?.kill('SIGKILL');
  await stack?.stop();
});

const graphOf = (health: Health | undefined) => health?.services.find((s) => s.service === 'graph');

test(`graph stopped: an import completes while graph falls past ${MAX_LAG} events behind; healthz says down; graph catches up when started`, async () => {
  const target = await archiveFor(stack, MESSAGES, 47);
  const killed = once(graph!, 'exit');
  graph!.kill('SIGKILL');
  await killed;
  graph = undefined;
  await waitUntil(async () => (await stack.health())?.status === 'down', '/healthz to say down', {
    timeoutMs: 30_000,
    everyMs: 250,
  });

  const imported = await importMbox(target, 5, ['--batch', '20']).done;
  assert.equal(imported.code, 0, JSON.stringify(imported.summary));
  const all = imported.summary['all_runs'] as Record<string, number>;
  assert.equal(all['created'], MESSAGES, JSON.stringify(all));
  const { published } = await publishedEmails(stack.config.natsUrl);
  assert.equal(published.size, MESSAGES);

  // The gate did not count graph though it is far past the limit, and health says so truthfully.
  const whileDown = await stack.health();
  assert.equal(whileDown?.status, 'down');
  assert.equal(graphOf(whileDown)?.ready, false);
  const lag = graphOf(whileDown)?.projector?.lag ?? 0;
  assert.ok(lag >= MESSAGES, `graph ${lag} events behind while down`);
  const status = await spawnMemex({ url: stack.url, token: stack.token, home: stack.config.home }, ['status']).done;
  assert.equal(status.code, 1, 'memex status fails while a service is down');
  assert.match(status.stdout, /: down: a service stopped answering \(below\)\n/);
  assert.match(status.stdout, /^ {2}✗ graph +not answering, [\d,]+ events behind$/m);

  graph = spawnService(stack.config, 'graph');
  await stack.settled(300_000);
  const { live, replayed } = await replayAndCompare(stack, 'graph', 'graph');
  assert.deepEqual(replayed, live, 'graph caught up to what a fresh replay builds');
  console.log(
    `backpressure, graph down: ${MESSAGES} messages imported in batches of 20 while graph (SIGKILLed, not restarted) ` +
      `fell ${lag} events behind (limit ${MAX_LAG}); healthz ${whileDown?.status}; started again, it caught up and equals a fresh replay`,
  );
});
