import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { configEnv, REPO_ROOT } from '@memex/config';
import { ensureOwnerToken, startGateway } from '@memex/gateway';
import { generateMessages, writeMbox } from '@memex/ingest/testing';
import { MemexClient } from '@memex/client';
import { MailAccounts } from '@memex/contracts';
import { ProcessSupervisor } from '@memex/stack';
import { createTestEnv, servicesReady, waitUntil, type TestEnv } from '@memex/testing';
import {
  finishImport,
  importedSoFar,
  importMbox,
  publishedEmails,
  storedMessages,
  type ImportTarget,
} from './mbox-import.js';
import { faultsMessages, startOwnPostgres, type OwnPostgres } from './supervised-stack.js';

/**
 * The real servers failing under a running import, services run as `npm start` runs them (ingest
 * in its own process, under the supervisor that restarts what exits): NATS restarted, then Postgres (this test's own cluster, so no other test's
 * database goes down with it). Afterwards every message is there exactly once, the import's
 * summary is true, and /healthz never said ok while Postgres was down. MEMEX_FAULTS_MESSAGES=10000
 * by hand: 2.5 min at load 15-49 (2 December 2026), healthz ok 7.6 s after NATS restarted and
 * 5.7 s after Postgres stopped for 3 s.
 */
const MESSAGES = faultsMessages(2_000);
/** The suite's 5 minutes per step in CI, more for MEMEX_FAULTS_MESSAGES=10000 by hand. */
const SCALED = { timeout: 300_000 * Math.max(1, MESSAGES / 2_000) };

let postgres: OwnPostgres;
let env: TestEnv;
let gateway: Awaited<ReturnType<typeof startGateway>>;
let url: string;
let token: string;
let target: ImportTarget;

before(async () => {
  postgres = await startOwnPostgres();
  env = await createTestEnv({ services: ['gateway', 'ingest'], rpcTimeoutMs: 15_000, databaseUrl: postgres.url });
  gateway = await startGateway(env.config);
  const address = gateway.getHttpServer().address();
  url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  token = ensureOwnerToken(env.config.home);
  target = { url, token, home: env.home, mbox: path.join(env.home, 'archive.mbox') };
  await writeMbox(target.mbox, generateMessages({ messages: MESSAGES, seed: 11 }));
}, SCALED);
after(async () => {
  await gateway?.close();
  await env?.stop();
  await postgres?.stop();
});

/** /healthz's status, sampled with when the request was sent and answered. */
interface Sample {
  sent: number;
  answered: number;
  status: string;
}

async function health(): Promise<string> {
  try {
    const reply = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(5_000) });
    return ((await reply.json()) as { status: string }).status;
  } catch {
    return 'no answer';
  }
}

/** Milliseconds until /healthz says ok again. */
async function recovery(since: number): Promise<number> {
  await waitUntil(async () => (await health()) === 'ok', '/healthz ok again', { timeoutMs: 180_000, everyMs: 200 });
  return Date.now() - since;
}

test(
  `NATS restarted, then Postgres, while ${MESSAGES} messages are imported: each exactly once, the summary true, /healthz truthful`,
  SCALED,
  async () => {
    const supervisor = new ProcessSupervisor({ output: process.stderr });
    supervisor.add({
      name: 'ingest',
      command: process.execPath,
      args: [path.join(REPO_ROOT, 'services', 'ingest', 'dist', 'main.js')],
      env: { ...configEnv(env.config), NO_COLOR: '1' },
    });
    const samples: Sample[] = [];
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        const sent = Date.now();
        const status = await health();
        samples.push({ sent, answered: Date.now(), status });
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    })();
    try {
      await servicesReady(url, ['ingest']);
      let ended = false;
      const first = importMbox(target, 10).done.finally(() => (ended = true));
      await waitUntil(async () => ended || importedSoFar(env.home) >= MESSAGES / 4, 'a quarter of the import', {
        timeoutMs: 300_000,
      });
      assert.ok(!ended, 'the import was still running when NATS restarted');
      const natsDown = Date.now();
      await env.restartNats();
      const natsRecovery = await recovery(natsDown);

      await waitUntil(async () => ended || importedSoFar(env.home) >= MESSAGES / 2, 'half of the import', {
        timeoutMs: 300_000,
      });
      const postgresDown = Date.now();
      await postgres.stop();
      await new Promise((resolve) => setTimeout(resolve, 3_000));
      const postgresBack = Date.now();
      await postgres.start();
      const postgresRecovery = await recovery(postgresDown);

      // The import retries what failed; if it gave up, the user runs it again.
      const run = await finishImport(target, first);
      const runs = run.runs;
      assert.equal(run.code, 0, JSON.stringify(runs));
      const all = run.summary['all_runs'] as Record<string, number>;
      assert.equal(all['rejected'], 0, JSON.stringify(all));

      // Exactly one item per message, each published once, and the mail read model agrees.
      const { published, lastSeq } = await publishedEmails(env.config.natsUrl);
      assert.equal(published.size, MESSAGES);
      assert.deepEqual([...new Set(published.values())], [1]);
      // Every message counted once. A batch whose answer a fault lost is answered `duplicate` when
      // retried, though this import created it: the split between the two is not exact.
      assert.equal(
        all['created']! + all['duplicate']!,
        MESSAGES,
        `the summary counts each message once: ${JSON.stringify(all)}`,
      );
      // The read model catches up after the faults (on a loaded machine, past one min_seq wait).
      const memex = new MemexClient({ url, token });
      let accounts: Array<{ account: string; messages: number }> = [];
      await waitUntil(
        async () => {
          accounts = (await memex.call(MailAccounts, { min_seq: lastSeq }).catch(() => ({ accounts: [] }))).accounts;
          return accounts.length > 0;
        },
        'the mail read model to apply the whole import',
        { timeoutMs: 180_000, everyMs: 1_000 },
      );
      assert.deepEqual(
        accounts.map((a) => [a.account, a.messages]),
        [['import:mbox:archive', MESSAGES]],
      );
      assert.deepEqual(await storedMessages(postgres.url), { n: MESSAGES, ids: MESSAGES });

      // While Postgres was down, /healthz never said ok.
      const whileDown = samples.filter((s) => s.sent >= postgresDown + 500 && s.answered <= postgresBack);
      assert.ok(whileDown.length > 0, 'healthz was asked while Postgres was down');
      assert.deepEqual(
        whileDown.filter((s) => s.status === 'ok'),
        [],
        `healthz while Postgres was down: ${[...new Set(whileDown.map((s) => s.status))].join(', ')}`,
      );
      console.log(
        `faults: ${MESSAGES} messages checked; NATS restart → healthz ok in ${natsRecovery} ms; ` +
          `Postgres down 3 s → healthz ok ${postgresRecovery} ms after it stopped; ` +
          `healthz while Postgres was down: ${[...new Set(whileDown.map((s) => s.status))].join(', ')}; ` +
          `import runs: ${runs.length}, summary ${JSON.stringify(all)}`,
      );
      // The service rides out both restarts: a dropped Postgres connection must not end it.
      assert.equal(supervisor.status()[0]?.restarts ?? 0, 0, 'ingest exited and was restarted by the supervisor');
    } finally {
      sampling = false;
      await sampler;
      console.log(`faults: ingest restarted by the supervisor ${supervisor.status()[0]?.restarts ?? 0} times`);
      await supervisor.stop();
    }
  },
);
