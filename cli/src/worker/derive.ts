import fs from 'node:fs/promises';
import { headers, type Msg, type NatsConnection, type Subscription } from '@nats-io/transport-node';
import {
  WORKER_ERROR_HEADER,
  WORKER_FAILED_HEADER,
  WORKER_PICTURE_HEADER,
  WORKER_PROBLEM_HEADER,
  workerSubject,
  type DerivedPicture,
  type WorkerDeriveRequest,
} from '@memex/locations';
import type { FileServer } from './serve.js';
import { whyUnreadable } from './serve.js';

type Pictures = typeof import('@memex/media/pictures');

/**
 * Makes media's pictures of the worker's own files on this machine's CPU (docs/sources.md
 * "Workers"): the media service asks on `memex.worker.<name>.derive` for a photo's renditions or
 * a video's keyframes, stores what comes back and publishes the events it owns, so the original
 * bytes stay here. At most `jobs` at once; the rest wait in NATS's queue group order.
 */
export class DeriveServer {
  private subscription: Subscription | undefined;
  private running = 0;
  private readonly waiting: Array<() => void> = [];
  /** Jobs done since start (said in the log). */
  done = 0;

  constructor(
    private readonly nc: NatsConnection,
    private readonly name: string,
    private readonly files: FileServer,
    private readonly jobs: number,
    private readonly log: (line: string) => void,
  ) {}

  async start(): Promise<void> {
    // Loaded here, not at import: sharp and ffmpeg are only this command's (the CLI's others start faster).
    const pictures = await import('@memex/media/pictures');
    this.subscription = this.nc.subscribe(workerSubject(this.name, 'derive'), {
      queue: `memex-worker-${this.name}`,
      callback: (error, message) => {
        if (!error) void this.answer(message, pictures);
      },
    });
  }

  stop(): void {
    this.subscription?.unsubscribe();
  }

  private async answer(message: Msg, pictures: Pictures): Promise<void> {
    await this.slot();
    const end = (header: string | null, value = '') => {
      const h = headers();
      if (header) h.set(header, value.replace(/[\r\n]+/g, ' ').slice(0, 2000));
      message.respond(new Uint8Array(), { headers: h });
    };
    try {
      const request = message.json<WorkerDeriveRequest>();
      const found = await this.files.confined(request.path);
      if ('why' in found) return end(WORKER_ERROR_HEADER, found.why);
      let bytes: Buffer;
      try {
        bytes = await fs.readFile(found.file);
      } catch (error) {
        return end(WORKER_ERROR_HEADER, whyUnreadable(error));
      }
      const made = await this.make(request, bytes, pictures);
      for (const { webp, ...picture } of made.pictures) {
        const h = headers();
        h.set(WORKER_PICTURE_HEADER, JSON.stringify(picture));
        message.respond(webp, { headers: h });
      }
      this.done++;
      this.log(
        `worker ${this.name}: ${request.task} of ${request.path}: ${made.pictures.length} pictures${made.problem ? ` (${made.problem})` : ''}`,
      );
      end(made.problem === null ? null : WORKER_PROBLEM_HEADER, made.problem ?? '');
    } catch (error) {
      end(WORKER_FAILED_HEADER, error instanceof Error ? error.message : String(error));
    } finally {
      this.release();
    }
  }

  /** The pictures, or the decoder's reason when the file has none (media says it as the analysis's problem). */
  private async make(
    request: WorkerDeriveRequest,
    bytes: Buffer,
    { photoRenditions, videoKeyframes }: Pictures,
  ): Promise<{ pictures: DerivedPicture[]; problem: string | null }> {
    if (request.task === 'renditions') {
      const { renditions, problem } = await photoRenditions(bytes, request.format);
      return { pictures: renditions, problem };
    }
    const { keyframes, problem } = await videoKeyframes(bytes);
    return { pictures: keyframes, problem };
  }

  private async slot(): Promise<void> {
    if (this.running < this.jobs) {
      this.running++;
      return;
    }
    await new Promise<void>((resolve) => this.waiting.push(resolve));
  }

  private release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.running--;
  }
}
