import os from 'node:os';
import path from 'node:path';
import { InvalidArgumentError, type Command } from 'commander';
import { loadConfig } from '@memex/config';
import { runWorker } from '../worker/worker.js';

interface WorkerCommandOptions {
  name: string;
  folder: string[];
  data?: string;
  nats?: string;
  token?: string;
  user?: string;
  password?: string;
  creds?: string;
  rescanSeconds: number;
  heartbeatSeconds: number;
  deriveJobs: number;
  extractJobs: number;
}

function seconds(value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new InvalidArgumentError('expected a positive number of seconds');
  return n;
}

function count(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError('expected a whole number, 0 or more');
  return n;
}

/** `memex worker`: folders on another machine, read in place (docs/sources.md "Workers"). */
export function registerWorker(program: Command): void {
  program
    .command('worker')
    .description(
      "serve this machine's folders to a memex: join its NATS, scan the folders (their files become items located at worker:<name>:<path>; the bytes stay here), answer requests for their content, extract their text and metadata and make their thumbnails and keyframes on this machine's CPU for the memex's media service, and keep heartbeats so the memex knows when they are away",
    )
    .requiredOption('--name <name>', 'this worker’s name (a-z, 0-9, _ and -): its items are worker:<name>:<path>')
    .requiredOption('--folder <dir>', 'a folder to serve (repeat for more)', (value: string, all: string[] = []) => [
      ...all,
      value,
    ])
    .option('--data <dir>', 'where the worker keeps its record of the files sent (default ~/.memex-worker/<name>)')
    .option(
      '--nats <url>',
      "the memex's NATS, with its token: nats://<token>@host:port (the token is the memex's MEMEX_HOME/nats-token; default: this checkout's, or MEMEX_NATS_URL)",
    )
    .option('--token <token>', 'the NATS token the operator gave this worker (or MEMEX_NATS_TOKEN)')
    .option('--user <user>', 'a NATS user (with --password)')
    .option('--password <password>', 'the NATS user’s password (or MEMEX_NATS_PASSWORD)')
    .option('--creds <file>', 'a NATS .creds file (JWT and key) the operator gave this worker')
    .option('--rescan-seconds <n>', 'how often the folders are scanned again', seconds, 300)
    .option('--heartbeat-seconds <n>', 'how often the worker says it is there', seconds, 5)
    .option(
      '--derive-jobs <n>',
      "photos and videos whose thumbnails and keyframes this machine makes at once for the memex's media service (0: media reads the files through the worker and makes them itself)",
      count,
      2,
    )
    .option(
      '--extract-jobs <n>',
      "files whose text, EXIF and OCR this machine reads at once for the memex's ingest (0: ingest reads the files through the worker and extracts them itself)",
      count,
      2,
    )
    .action(async (options: WorkerCommandOptions) => {
      const token = options.token ?? process.env['MEMEX_NATS_TOKEN'];
      const password = options.password ?? process.env['MEMEX_NATS_PASSWORD'];
      const worker = await runWorker({
        name: options.name,
        folders: options.folder,
        dataDir: options.data ?? path.join(os.homedir(), '.memex-worker', options.name),
        natsUrl: options.nats ?? loadConfig().natsUrl,
        auth: {
          ...(token ? { token } : {}),
          ...(options.user ? { user: options.user, pass: password ?? '' } : {}),
          ...(options.creds ? { credsFile: options.creds } : {}),
        },
        rescanMs: options.rescanSeconds * 1000,
        heartbeatMs: options.heartbeatSeconds * 1000,
        deriveJobs: options.deriveJobs,
        extractJobs: options.extractJobs,
        log: (line) => console.error(line),
      });
      console.error(`worker ${options.name}: serving ${options.folder.join(', ')}; Ctrl-C stops it`);
      await new Promise<void>((resolve) => {
        process.once('SIGINT', resolve);
        process.once('SIGTERM', resolve);
      });
      await worker.stop();
    });
}
