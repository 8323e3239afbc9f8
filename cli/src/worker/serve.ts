import fs from 'node:fs/promises';
import path from 'node:path';
import { headers, type NatsConnection, type Subscription } from '@nats-io/transport-node';
import {
  WORKER_CHUNK_BYTES,
  WORKER_ERROR_HEADER,
  workerSubject,
  type WorkerReadRequest,
  type WorkerStatReply,
  type WorkerStatRequest,
} from '@memex/locations';

/**
 * Serves the bytes of a worker's files to the memex (the `worker:` scheme of libs/locations):
 * stat and ranged reads, only of regular files under the worker's folders — a path that leaves
 * them (`..`, a symlink pointing out) is refused as if it did not exist, so the bus can read
 * nothing else on this machine.
 */
export class FileServer {
  private readonly subscriptions: Subscription[] = [];
  private roots: string[] = [];

  constructor(
    private readonly nc: NatsConnection,
    private readonly name: string,
    private readonly folders: string[],
  ) {}

  async start(): Promise<void> {
    this.roots = await Promise.all(this.folders.map((folder) => fs.realpath(folder)));
    // One answer per request even when two processes run under one name.
    const queue = `memex-worker-${this.name}`;
    this.subscriptions.push(
      this.nc.subscribe(workerSubject(this.name, 'stat'), {
        queue,
        callback: (_, message) => {
          void this.stat(message.json<WorkerStatRequest>().path).then((reply) =>
            message.respond(JSON.stringify(reply)),
          );
        },
      }),
      this.nc.subscribe(workerSubject(this.name, 'read'), {
        queue,
        callback: (_, message) => {
          void this.read(message.json<WorkerReadRequest>()).then(({ bytes, why }) => {
            if (why === null) return message.respond(bytes);
            const problem = headers();
            problem.set(WORKER_ERROR_HEADER, why);
            return message.respond(new Uint8Array(), { headers: problem });
          });
        },
      }),
    );
  }

  stop(): void {
    for (const subscription of this.subscriptions) subscription.unsubscribe();
  }

  /** The real path of a file under one of the folders, or why it cannot be served. */
  async confined(requested: unknown): Promise<{ file: string } | { why: string }> {
    if (typeof requested !== 'string' || !path.isAbsolute(requested) || path.normalize(requested) !== requested)
      return { why: 'not an absolute, normalized path' };
    try {
      const real = await fs.realpath(requested);
      if (!this.roots.some((root) => real.startsWith(`${root}${path.sep}`)))
        return { why: `worker "${this.name}" serves only files under its folders` };
      return { file: real };
    } catch (error) {
      return { why: whyUnreadable(error) };
    }
  }

  private async stat(requested: unknown): Promise<WorkerStatReply> {
    const found = await this.confined(requested);
    if ('why' in found) return { unreachable: found.why };
    try {
      const stat = await fs.stat(found.file);
      if (!stat.isFile()) return { unreachable: 'it is not a regular file' };
      return { size: stat.size, modified_at: stat.mtime.toISOString() };
    } catch (error) {
      return { unreachable: whyUnreadable(error) };
    }
  }

  private async read(request: WorkerReadRequest): Promise<{ bytes: Uint8Array; why: string | null }> {
    const found = await this.confined(request.path);
    if ('why' in found) return { bytes: new Uint8Array(), why: found.why };
    const length = Math.max(0, Math.min(Number(request.length) || 0, WORKER_CHUNK_BYTES));
    try {
      const handle = await fs.open(found.file, 'r');
      try {
        const buffer = Buffer.alloc(length);
        const { bytesRead } = await handle.read(buffer, 0, length, Math.max(0, Number(request.offset) || 0));
        return { bytes: buffer.subarray(0, bytesRead), why: null };
      } finally {
        await handle.close();
      }
    } catch (error) {
      return { bytes: new Uint8Array(), why: whyUnreadable(error) };
    }
  }
}

export function whyUnreadable(error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code;
  return code === 'ENOENT'
    ? `no such file on the worker (ENOENT): it was moved or deleted, or its volume is not mounted`
    : `the worker cannot read it (${code ?? (error as Error).message})`;
}
