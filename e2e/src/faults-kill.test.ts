import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { DEFAULT_SERVICES } from '@memex/config';
import { MailAccounts } from '@memex/contracts';
import { waitUntil } from '@memex/testing';
import {
  finishImport,
  importedSoFar,
  importMbox,
  publishedEmails,
  storedMessages,
  type ImportTarget,
} from './mbox-import.js';
import {
  archiveFor,
  faultsMessages,
  replayAndCompare,
  startSupervisedStack,
  type SupervisedStack,
} from './supervised-stack.js';

/**
 * Every service `npm start` runs (DEFAULT_SERVICES, the gateway too), each in its own process
 * under the supervisor, SIGKILLed once while a mail archive is imported. Afterwards every message
 * is there exactly once and every read model equals a fresh replay of the log (`memex replay`).
 *
 * 1,000 generated messages by default, not the issue's 10,000, for the suite's time on two cores
 * (the 10,000-message SIGKILL of ingest alone is import-crash.test.ts); MEMEX_FAULTS_MESSAGES=10000
 * runs the issue's count by hand. Measured on 2 December 2026 (2 cores shared with other work):
 * 1,000 in 5.4 min at load ~40; 5,000 in 10.0 min at load ~30; 10,000 in 14.7 min at load ~20
 * (import 413 s with every kill during it, each service ready again 11-18 s after its SIGKILL,
 * settled 259 s later, eleven replays equal in 165 s).
 */
const MESSAGES = faultsMessages(1_000);
/** `memex replay`s run at once after the faults. */
const REPLAYS_AT_ONCE = 3;

let stack: SupervisedStack;
let target: ImportTarget;
let importing: ChildProcess | undefined;
before(async () => {
  stack = await startSupervisedStack(DEFAULT_SERVICES);
  target = await archiveFor(stack, MESSAGES, 23);
});
after(async () => {
  importing?.kill('SIGKILL'); // a failed test leaves no import retrying against a stopped stack
  await stack?.stop();
});

test(
  `each of ${DEFAULT_SERVICES.length} services SIGKILLed once during a ${MESSAGES}-message import: each message once, every read model equals a fresh replay`,
  // 15 minutes for 1,000 messages (load ~20 on two cores), in proportion beyond.
  { timeout: 900_000 * Math.max(1, MESSAGES / 1_000) },
  async () => {
    const started = Date.now();
    let ended = false;
    // Small requests, so the import moves in small steps and the kills fall during it on a loaded
    // machine too (in requests of 200, three in flight, the last ones were answered at once).
    const firstRun = importMbox(target, 10, ['--batch', '20']);
    importing = firstRun.child;
    const first = firstRun.done.finally(() => (ended = true));
    // The gateway first: the import waits out its restart (retrying), and every other service is
    // killed after it, each restarted by the supervisor.
    const kills: string[] = [];
    const killedAt = new Map<string, number>();
    const recoveredIn = new Map<string, number>();
    let killing = true;
    // Each service's time to recover: from its SIGKILL to /healthz saying it answers ready again
    // (the gateway: to /healthz answering at all), asked at least half a second after the kill.
    const watching = (async () => {
      while (killing || recoveredIn.size < killedAt.size) {
        const asked = Date.now();
        const health = await stack.health();
        for (const [service, at] of killedAt) {
          if (recoveredIn.has(service) || asked < at + 500) continue;
          const up =
            service === 'gateway' ? health !== undefined : health?.services.find((s) => s.service === service)?.ready;
          if (up) recoveredIn.set(service, Date.now() - at);
        }
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    })();
    // Paced by the import's progress, not the clock, so that they all fall during it however fast
    // it goes: the n-th of the eleven once (n + 1)/14 of the messages are in (the last at 6/7).
    const order = ['gateway', ...DEFAULT_SERVICES.filter((s) => s !== 'gateway')];
    for (const [n, service] of order.entries()) {
      const due = Math.floor((MESSAGES * (n + 2)) / (order.length + 3));
      await waitUntil(async () => ended || importedSoFar(target.home) >= due, `${due} messages in`, {
        timeoutMs: 300_000,
        everyMs: 50,
      });
      kills.push(`${service} ${ended ? 'after the import' : `at ${importedSoFar(target.home)}`}`);
      killedAt.set(service, Date.now());
      await stack.kill(service);
    }
    await stack.ready();
    killing = false;
    await watching;
    const recovered = Date.now() - Math.min(...killedAt.values());
    console.log(
      `faults: recovered (SIGKILL to ready) ${[...recoveredIn].map(([service, ms]) => `${service} ${(ms / 1000).toFixed(1)} s`).join(', ')}`,
    );
    const whileImporting = kills.filter((k) => !k.includes('after the import')).length;

    // The import retries what failed while the gateway or ingest was down; if it gave up, the user runs it again.
    const run = await finishImport(target, first);
    const runs = run.runs;
    assert.equal(run.code, 0, JSON.stringify(runs));
    const all = run.summary['all_runs'] as Record<string, number>;
    assert.equal(all['rejected'], 0, JSON.stringify(all));
    assert.equal(all['created']! + all['duplicate']!, MESSAGES, `each message counted once: ${JSON.stringify(all)}`);
    const imported = Date.now();
    console.log(`faults: import done in ${Math.round((imported - started) / 1000)} s`);

    await stack.settled();
    const settled = Date.now();
    console.log(`faults: settled ${Math.round((settled - imported) / 1000)} s after the import`);

    // Exactly one item per message in the log and in ingest's read model.
    const { published, lastSeq } = await publishedEmails(stack.config.natsUrl);
    assert.equal(published.size, MESSAGES);
    assert.deepEqual([...new Set(published.values())], [1]);
    const { accounts } = await stack.owner.call(MailAccounts, { min_seq: lastSeq });
    assert.deepEqual(
      accounts.map((a) => [a.account, a.messages]),
      [['import:mbox:archive', MESSAGES]],
    );
    assert.deepEqual(await storedMessages(stack.config.databaseUrl), { n: MESSAGES, ids: MESSAGES });

    // Every read model equals a fresh replay of the same log, row for row (each projector's schema
    // is named as its service's health names the projector).
    const health = await stack.health();
    const projectors = health!.services.flatMap((s) => (s.projector ? [[s.service, s.projector.name] as const] : []));
    assert.ok(projectors.length >= 8, `every service with a read model answers: ${JSON.stringify(projectors)}`);
    // A few at once: each rebuilds only its own schema, and the log is still, so they do not meet;
    // most of a small replay is waiting (the CLI starting, the switch), which the others fill.
    const replays: string[] = [];
    const toReplay = [...projectors];
    const replayStarted = Date.now();
    await Promise.all(
      Array.from({ length: REPLAYS_AT_ONCE }, async () => {
        for (let next = toReplay.shift(); next; next = toReplay.shift()) {
          const [service, schema] = next;
          const { live, replayed, output } = await replayAndCompare(stack, service, schema);
          assert.deepEqual(replayed, live, `${service}'s read model equals a fresh replay`);
          replays.push(`${service}: ${Object.values(live).reduce((n, rows) => n + rows.length, 0)} rows (${output})`);
          console.log(
            `faults: ${service} replayed and equal ${Math.round((Date.now() - replayStarted) / 1000)} s into the replays`,
          );
        }
      }),
    );

    const restarts = stack.supervisor.status().map((s) => `${s.name} ${s.restarts}`);
    assert.ok(stack.supervisor.status().every((s) => s.restarts >= 1));
    console.log(
      `faults (SIGKILL each): ${MESSAGES} messages checked; ${whileImporting} of ${kills.length} kills during the import; ` +
        `all ready again ${recovered} ms after the first kill; import ${Math.round((imported - started) / 1000)} s (${runs.length} run(s)), settled ${Math.round((settled - imported) / 1000)} s later\n` +
        `  kills: ${kills.join('; ')}\n  restarts: ${restarts.join(', ')}\n  replays equal: ${replays.join('; ')}`,
    );
    assert.equal(whileImporting, kills.length, `every kill fell during the import: ${kills.join('; ')}`);
  },
);
