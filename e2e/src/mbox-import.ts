import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { ItemIngested } from '@memex/contracts';
import { Bus, readEventsOf } from '@memex/bus';
import { REPO_ROOT } from '@memex/config';

const cli = path.join(REPO_ROOT, 'cli', 'bin', 'memex.js');

export interface ImportTarget {
  url: string;
  token: string;
  home: string;
  mbox: string;
}

export interface CliRun<T> {
  child: ChildProcess;
  done: Promise<T>;
}

/** `memex <args>` as a user runs it against the gateway at `target.url`. */
export function spawnMemex(
  target: Omit<ImportTarget, 'mbox'>,
  args: string[],
): CliRun<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [cli, ...args], {
    env: { ...process.env, MEMEX_URL: target.url, MEMEX_TOKEN: target.token, MEMEX_HOME: target.home },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const done = new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) =>
    child.once('exit', (code) => resolve({ code, stdout, stderr })),
  );
  return { child, done };
}

/**
 * `memex import mbox <mbox> --source archive` as a user runs it, with `retries` retries of failed
 * batches (and any further options).
 */
export function importMbox(
  target: ImportTarget,
  retries: number,
  options: string[] = [],
): CliRun<{ code: number | null; summary: Record<string, unknown> }> {
  const run = spawnMemex(target, [
    'import',
    'mbox',
    target.mbox,
    '--source',
    'archive',
    '--json',
    '--retries',
    String(retries),
    ...options,
  ]);
  const done = run.done.then(({ code, stdout, stderr }) => {
    try {
      return { code, summary: JSON.parse(stdout) as Record<string, unknown> };
    } catch {
      throw new Error(`memex import printed no summary (exit ${code}): ${stdout}\n${stderr}`);
    }
  });
  return { child: run.child, done };
}

/**
 * Waits for an import the faults interrupted; if it gave up, runs it again as its user would (up
 * to three times). The last run's summary, and every run's.
 */
export async function finishImport(
  target: ImportTarget,
  first: Promise<{ code: number | null; summary: Record<string, unknown> }>,
): Promise<{ code: number | null; summary: Record<string, unknown>; runs: Array<Record<string, unknown>> }> {
  let run = await first;
  const runs = [run.summary];
  for (let i = 0; i < 3 && run.code !== 0; i++) {
    run = await importMbox(target, 10).done;
    runs.push(run.summary);
  }
  return { ...run, runs };
}

/** Messages the server has answered for so far, from the import's own progress file. */
export function importedSoFar(home: string): number {
  try {
    const state = JSON.parse(readFileSync(path.join(home, 'imports', 'mbox-archive.json'), 'utf8')) as {
      totals: { created: number };
    };
    return state.totals.created;
  } catch {
    return 0; // not written yet
  }
}

/** How many times the log holds each email item, and the log's last sequence when read. */
export async function publishedEmails(natsUrl: string): Promise<{ published: Map<string, number>; lastSeq: number }> {
  const bus = await Bus.connect(natsUrl, 'import-check');
  try {
    const lastSeq = await bus.lastSeq();
    const published = new Map<string, number>();
    for await (const { event } of readEventsOf(bus, ItemIngested, { untilCaughtUp: true })) {
      if (event.data.kind === 'email') published.set(event.data.id, (published.get(event.data.id) ?? 0) + 1);
    }
    return { published, lastSeq };
  } finally {
    await bus.close();
  }
}

/** Rows of ingest's messages table, and how many distinct Message-IDs among them (each message once: both equal the archive's count). */
export async function storedMessages(databaseUrl: string): Promise<{ n: number; ids: number }> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query<{ n: number; ids: number }>(
      'select count(*)::int as n, count(distinct message_id)::int as ids from ingest.messages',
    );
    return rows[0]!;
  } finally {
    await client.end();
  }
}
