import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
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

export interface ImportRun {
  child: ChildProcess;
  /** The exit code and the JSON summary the import printed. */
  done: Promise<{ code: number | null; summary: Record<string, unknown> }>;
}

/** `memex import mbox <mbox> --source archive` as a user runs it, with `retries` retries of failed batches. */
export function importMbox(target: ImportTarget, retries: number): ImportRun {
  const child = spawn(
    process.execPath,
    [cli, 'import', 'mbox', target.mbox, '--source', 'archive', '--json', '--retries', String(retries)],
    {
      env: { ...process.env, MEMEX_URL: target.url, MEMEX_TOKEN: target.token, MEMEX_HOME: target.home },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let out = '';
  let err = '';
  child.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (err += chunk.toString()));
  const done = new Promise<{ code: number | null; summary: Record<string, unknown> }>((resolve, reject) =>
    child.once('exit', (code) => {
      try {
        resolve({ code, summary: JSON.parse(out) as Record<string, unknown> });
      } catch {
        reject(new Error(`memex import printed no summary (exit ${code}): ${out}\n${err}`));
      }
    }),
  );
  return { child, done };
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
