import { spawn } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { MemexClient } from '@memex/client';
import { REPO_ROOT } from '@memex/config';
import { MailAccounts } from '@memex/contracts';
import { generateMessages, writeMaildir, writeMbox } from '@memex/ingest/testing';
import { freePort } from '@memex/stack';
import { createTestEnv, servicesReady, spawnService } from '@memex/testing';
import { Notmuch } from '../notmuch.js';
import type { BenchResult } from '../result.js';
import { samplePeakRss } from '../rss.js';

const MESSAGES = Number(process.env.MEMEX_BENCH_INGEST_MESSAGES ?? 50_000);
const SEED = 42;

/** `memex import mbox` as a user runs it; resolves when it exits. */
function importMbox(url: string, token: string, home: string, mbox: string): Promise<void> {
  const cli = spawn(
    process.execPath,
    [path.join(REPO_ROOT, 'cli', 'bin', 'memex.js'), 'import', 'mbox', mbox, '--source', 'bench', '--json'],
    {
      env: { ...process.env, MEMEX_URL: url, MEMEX_TOKEN: token, MEMEX_HOME: home },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  let out = '';
  cli.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  return new Promise((resolve, reject) =>
    cli.once('exit', (code) =>
      code === 0 ? resolve() : reject(new Error(`memex import exited with ${code}: ${out}`)),
    ),
  );
}

/** Resolves once the mail views list `count` messages in the account. */
async function mailViewsHold(client: MemexClient, count: number): Promise<void> {
  for (;;) {
    const { accounts } = await client.call(MailAccounts, {});
    if ((accounts.find((a) => a.account === 'import:mbox:bench')?.messages ?? 0) >= count) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * End-to-end import of a generated mbox (realistic sizes, attachments, threads): from `memex
 * import mbox` starting to every message listed by the mail views, with the gateway and the
 * ingest service as their own processes as `npm start` runs them; beside it, `notmuch new`
 * indexing the same messages from a Maildir.
 */
export async function run(): Promise<BenchResult[]> {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'memex-bench-ingest-'));
  const env = await createTestEnv({ port: await freePort(), services: ['gateway', 'ingest'], rpcTimeoutMs: 120_000 });
  const processes = [spawnService(env.config, 'gateway'), spawnService(env.config, 'ingest')];
  try {
    const mbox = path.join(work, 'archive.mbox');
    const bytes = await writeMbox(mbox, generateMessages({ messages: MESSAGES, seed: SEED }));
    const maildir = path.join(work, 'maildir');
    writeMaildir(maildir, generateMessages({ messages: MESSAGES, seed: SEED }));
    const megabytes = Math.round(bytes / 1e5) / 10;
    console.log(`${MESSAGES} messages, ${megabytes} MB of mbox written`);

    const url = `http://127.0.0.1:${env.config.port}`;
    await servicesReady(url, ['ingest']);
    const token = fs.readFileSync(path.join(env.home, 'owner-token'), 'utf8').trim();
    const client = new MemexClient({ url, token });

    // The services' memory while a client sends as fast as it can (backpressure keeps it bounded).
    const memory = samplePeakRss({ gateway: processes[0]!.pid!, ingest: processes[1]!.pid! });
    const started = performance.now();
    await importMbox(url, token, env.home, mbox);
    const answered = (performance.now() - started) / 1000;
    await mailViewsHold(client, MESSAGES);
    const queryable = (performance.now() - started) / 1000;
    const peak = memory.stop();
    const mb = (bytes: number) => Math.round(bytes / 1e6);
    console.log(
      `import answered in ${answered.toFixed(1)} s, mail views complete at ${queryable.toFixed(1)} s; ` +
        `peak RSS gateway + ingest ${mb(peak.total)} MB (gateway ${mb(peak.each['gateway']!)}, ingest ${mb(peak.each['ingest']!)})`,
    );

    const notmuch = await Notmuch.open(maildir);
    const notmuchRate = notmuch ? Math.round(MESSAGES / ((await notmuch.index()) / 1000)) : undefined;
    const reference = notmuchRate ? { reference: { name: 'notmuch new, same messages', value: notmuchRate } } : {};
    return [
      {
        suite: 'ingest',
        name: `import: mbox to queryable mail views (${MESSAGES} messages, ${megabytes} MB)`,
        value: Math.round(MESSAGES / queryable),
        unit: 'messages/s',
        ...reference,
        notes: notmuchRate ? undefined : 'notmuch is not installed: no reference (apt install notmuch)',
      },
      {
        suite: 'ingest',
        name: 'import: mbox to every message stored (memex import mbox answered)',
        value: Math.round(MESSAGES / answered),
        unit: 'messages/s',
        notes: `${(bytes / 1e6 / answered).toFixed(1)} MB/s`,
      },
      {
        suite: 'ingest',
        name: 'peak resident memory of the gateway and ingest processes during the import',
        value: mb(peak.total),
        unit: 'MB',
        notes: `gateway ${mb(peak.each['gateway']!)} MB, ingest ${mb(peak.each['ingest']!)} MB at their own peaks; NATS and Postgres not counted`,
      },
      {
        suite: 'ingest',
        name: 'mail views behind the import when it ended',
        value: Math.round((queryable - answered) * 10) / 10,
        unit: 's',
      },
    ];
  } finally {
    for (const child of processes) child.kill('SIGTERM');
    await Promise.all(processes.map((child) => (child.exitCode === null ? once(child, 'exit') : undefined)));
    await env.stop();
    fs.rmSync(work, { recursive: true, force: true });
  }
}
