import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { generateMessages } from '@memex/ingest/testing';
import { waitUntil } from '@memex/testing';
import { importMbox, publishedEmails, type ImportTarget } from './mbox-import.js';
import { archiveFor, startSupervisedStack, type Health, type SupervisedStack } from './supervised-stack.js';

/**
 * Backpressure by the read models: with the graph projector paused (SIGSTOP), an import runs the
 * log ahead of it until graph's lag passes MEMEX_INGEST_MAX_LAG (here 100 events); from then on
 * memex.ingest answers 503 `unavailable` with Retry-After, naming graph and its lag, and the
 * import waits and retries instead of running further ahead. Once graph continues and catches up,
 * the same import completes: every message stored once, and the refused probe not at all.
 */
const MESSAGES = 1_000;
const MAX_LAG = 100;
/** Small requests, so most of the import is still to send when the lag passes the threshold. */
const BATCH = 20;
/** Requests the import sends before the first is answered (memex import's --in-flight). */
const IN_FLIGHT = 3;
/** How long the refusals are held before graph continues: the import must wait it out. */
const HOLD_MS = 10_000;

let stack: SupervisedStack;
let target: ImportTarget;
let importing: ChildProcess | undefined;
let stoppedPid: number | undefined;
before(async () => {
  stack = await startSupervisedStack(['gateway', 'ingest', 'graph'], { ingestMaxLag: MAX_LAG });
  target = await archiveFor(stack, MESSAGES, 43);
});
after(async () => {
  if (stoppedPid) process.kill(stoppedPid, 'SIGCONT'); // or its process group never stops
  importing?.kill('SIGKILL');
  await stack?.stop();
});

const graphLag = (health: Health | undefined) =>
  health?.services.find((s) => s.service === 'graph')?.projector?.lag ?? 0;

test(`graph paused: an import is refused (503, Retry-After) once graph is ${MAX_LAG} events behind, waits, and completes after graph catches up`, async () => {
  // One message that is not in the archive: refused, it must not be stored.
  const [probe] = [...generateMessages({ messages: 1, seed: 4301 })];
  const sendProbe = () =>
    fetch(`${stack.url}/api/v1/memex/rpc`, {
      method: 'POST',
      headers: { authorization: `Bearer ${stack.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        method: 'memex.ingest',
        params: {
          items: [
            {
              type: 'message/rfc822',
              data: probe!.bytes.toString('base64'),
              source: { kind: 'mbox', id: 'probe' },
              external_id: probe!.messageId,
            },
          ],
        },
      }),
    });

  stoppedPid = stack.pid('graph');
  process.kill(stoppedPid, 'SIGSTOP');
  const run = importMbox(target, 10, ['--batch', String(BATCH), '--in-flight', String(IN_FLIGHT)]);
  importing = run.child;
  let ended = false;
  const done = run.done.finally(() => (ended = true));

  await waitUntil(async () => graphLag(await stack.health()) > MAX_LAG, `graph more than ${MAX_LAG} events behind`, {
    timeoutMs: 120_000,
    everyMs: 250,
  });
  // Ingest reads the lag at most once a second.
  await new Promise((resolve) => setTimeout(resolve, 1_500));
  const refused = await sendProbe();
  const { published: atRefusal } = await publishedEmails(stack.config.natsUrl);
  const body = (await refused.json()) as { error?: { code: string; message: string } };
  assert.equal(refused.status, 503, JSON.stringify(body));
  assert.equal(refused.headers.get('retry-after'), '2');
  assert.equal(body.error?.code, 'unavailable');
  assert.match(
    body.error!.message,
    /^memex\.ingest waits for the graph read model, [\d,]+ events behind the log \(at most 100, MEMEX_INGEST_MAX_LAG\)/,
  );

  // Held back, the import neither finishes nor gives up while graph stays paused, and the log
  // grows no further than the requests in flight when the probe was refused. (How far it ran
  // before depends on when ingest last read the lag: up to READ_EVERY_MS.most earlier.)
  await new Promise((resolve) => setTimeout(resolve, HOLD_MS));
  const { published: whileRefused } = await publishedEmails(stack.config.natsUrl);
  const lagWhileRefused = graphLag(await stack.health());
  assert.equal(ended, false, 'the import waits while graph is behind');
  assert.ok(
    whileRefused.size - atRefusal.size <= IN_FLIGHT * BATCH && whileRefused.size < MESSAGES,
    `${atRefusal.size} of ${MESSAGES} in the log when the probe was refused, ${whileRefused.size} ${HOLD_MS / 1000} s later`,
  );

  process.kill(stoppedPid, 'SIGCONT');
  stoppedPid = undefined;
  const finished = await done;
  assert.equal(finished.code, 0, JSON.stringify(finished.summary));
  const all = finished.summary['all_runs'] as Record<string, number>;
  // A batch answered after the gateway stopped waiting (a loaded machine) comes back a duplicate when resent.
  assert.equal(all['rejected'], 0, JSON.stringify(all));
  assert.equal(all['created']! + all['duplicate']!, MESSAGES, `each message counted once: ${JSON.stringify(all)}`);

  await stack.settled(300_000);
  const { published } = await publishedEmails(stack.config.natsUrl);
  assert.equal(published.size, MESSAGES, 'every archived message, and not the refused probe');
  assert.deepEqual([...new Set(published.values())], [1]);
  console.log(
    `backpressure by lag: graph paused, refused once ${MAX_LAG}+ events behind ("${body.error!.message}"); ` +
      `${atRefusal.size} of ${MESSAGES} in the log at the refusal, ${whileRefused.size} (graph ${lagWhileRefused} events behind) after ${HOLD_MS / 1000} s refused; ` +
      `all ${MESSAGES} once each after graph caught up (import: ${JSON.stringify(all)})`,
  );
});
